"""The work done on memories in the background: staleness (decay, stale <-> active),
compaction of long threads and the facts' TTL, integrity checks of the indexes, and
re-embedding every memory for a new embedder.

May import: memories.models, memories.store, memories.write, the spaceduck kernel.
Never: recall, web, api, mcp.
"""
