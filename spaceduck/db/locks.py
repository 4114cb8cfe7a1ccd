"""Serialising writers that must not interleave, on either database.

SQLite runs one write transaction at a time (IMMEDIATE transactions behind
``spaceduck.db.backend.writelock``), so a check-then-insert inside a transaction is
already safe there. PostgreSQL runs writers concurrently; ``lock_for_write`` takes a
transaction-scoped advisory lock on the key, so writers of the same key queue up.
"""

from __future__ import annotations

from django.db import connection


def lock_for_write(key: str) -> None:
    """Hold ``key`` until the current transaction ends (call inside ``atomic``)."""
    if connection.vendor != "postgresql":
        return  # the transaction's write lock already excludes every other writer
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [key])
