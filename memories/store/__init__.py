"""What every other part of the app reads and keeps in step: the shared queries over the
tables (selectors, with the keyset positions they page by), the keyword index (FTS5 on
SQLite, tsvector on PostgreSQL) and the vector index (sqlite-vec or pgvector, with each
process's exact copy), and the token estimate.

May import: memories.models, the spaceduck kernel. Never: write, upkeep, recall, web, api,
mcp, extraction.
"""
