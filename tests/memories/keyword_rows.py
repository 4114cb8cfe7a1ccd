"""Breaking and checking the memories keyword index by hand, on either database.

SQLite's index is the FTS5 table ``memories_fts`` (rowid = memory id); PostgreSQL's is
a plain table of tsvectors keyed by ``memory_id`` (memories.store.keyword_pg). Tests that
simulate a damaged index go through these helpers so they run on both.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

from memories.store import keyword_index, keyword_pg


def _execute(sql: str, params: Sequence[object] = ()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, list(params))


def drop_documents(memory_ids: Sequence[int]) -> None:
    """Delete these memories' documents behind the services' back."""
    keyword_index.catch_up()  # or the pending marks would index them again
    ids = [int(memory_id) for memory_id in memory_ids]
    if connection.vendor == "sqlite":
        _execute(f"DELETE FROM memories_fts WHERE rowid IN ({','.join(map(str, ids))})")
    else:
        _execute("DELETE FROM memories_fts WHERE memory_id = ANY(%s)", [ids])


def add_orphan(memory_id: int, namespace: str, text: str) -> None:
    """A document for a memory id that has no memory."""
    if connection.vendor == "sqlite":
        _execute("INSERT INTO memories_fts(rowid, content) VALUES (%s, %s)", [memory_id, text])
        return
    length, terms = keyword_pg.document(namespace, [text])
    _execute(
        "INSERT INTO memories_fts (memory_id, namespace, length, terms) "
        "VALUES (%s, %s, %s, %s::tsvector)",
        [memory_id, namespace, length, terms],
    )


def drop_all() -> None:
    """Empty the index, as a lost or truncated index would be."""
    keyword_index.catch_up()
    if connection.vendor == "sqlite":
        _execute("INSERT INTO memories_fts(memories_fts) VALUES ('delete-all')")
    else:
        _execute("TRUNCATE memories_fts, memories_fts_stats")


def assert_sound() -> None:
    """The index's own consistency check finds nothing."""
    assert keyword_index.problems() == []
