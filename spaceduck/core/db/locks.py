"""Serialising writers that must not interleave, on either database.

SQLite runs one write transaction at a time (IMMEDIATE transactions behind
``spaceduck.core.db.backend.writelock``), so a check-then-insert inside a transaction is
already safe there. PostgreSQL runs writers concurrently; ``lock_for_write`` takes a
transaction-scoped advisory lock on the key, so writers of the same key queue up.
"""

from __future__ import annotations

from django.db import connection

from spaceduck.core.db.fast import hot_cursor

# One statement for any number of keys, locked in the order given: callers that hold
# several keys give them in one agreed order (e.g. sorted), so no two wait for each other.
_LOCK_SQL = (
    "SELECT pg_advisory_xact_lock(hashtextextended(key, 0)) "
    "FROM unnest(%s::text[]) WITH ORDINALITY AS t(key, i) ORDER BY i"
)


# One key's lock as an expression of another statement (a read that needs no lock of its own
# to be right, so that its snapshot may predate the wait): a round trip less.
LOCK_EXPRESSION = "pg_advisory_xact_lock(hashtextextended(%s, 0))"


def lock_for_write(*keys: str) -> None:
    """Hold ``keys`` until the current transaction ends (call inside ``atomic``)."""
    if connection.vendor != "postgresql" or not keys:
        return  # the transaction's write lock already excludes every other writer
    with hot_cursor() as cursor:
        cursor.execute(_LOCK_SQL, [list(keys)])
