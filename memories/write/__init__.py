"""Everything that changes a memory: ingest (messages and direct writes), the extraction
run of one message (runner, with crash recovery), what happens to a candidate (dedup
gathers and applies, decide decides: insert / duplicate / update / conflict / ignore), the
lifecycle (edit, approve, reject, supersede, delete), the conflict inbox's decisions,
deletes that forget (``forgetting``: a tombstone, no copy) and the
services underneath (hashing, history, index upkeep).

May import: memories.models, memories.store, memories.extraction (stages, the firewall),
the spaceduck kernel. Never: upkeep, recall, web, api, mcp.
"""
