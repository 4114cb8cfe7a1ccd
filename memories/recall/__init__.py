"""Finding what matters for a question: hybrid recall (hybrid.py: the vector and keyword
lists, fusion, the multipliers, widening), the second stage (rerank.py, weights in
rerank.json), dates in questions (dates.py) and the context block an agent is given
(context.py).

May import: memories.models, memories.store, memories.write (a stale memory recalled
comes back), memories.upkeep (decay, thread summaries), memories.extraction (sentences),
the spaceduck kernel. Never: web, api, mcp.
"""
