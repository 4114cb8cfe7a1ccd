"""The kernel every app stands on: errors, namespaces, text (fts, stemming), runtime
settings, limits, the database backends and fast paths (db/), the model providers
(providers/: embeddings, chat; plain data out), access and tokens, the task queue's
registry, the worker's heartbeat, the error pages, the failpoints.

Imports no app (memories, notes) and nothing of spaceduck.ops.
"""
