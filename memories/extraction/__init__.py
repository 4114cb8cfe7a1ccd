"""The extraction pipeline: what in a message is worth remembering, and is it safe to keep.

Stages, in order (see pipeline.py): regex (identity slots, "remember that"),
classify (LLM or heuristic rules), gate (deterministic validation), guard
(questions, fragments, poison values, wrong-source facts), injection (prompt
injection detection). Dedup and contradiction handling live in memories.write.dedup.
"""
