"""Reading the notes search index directly, on either database (index-level tests)."""

from __future__ import annotations

from django.db import connection


def indexed_ids(word: str) -> list[int]:
    """Ids of the notes the index holds ``word`` for."""
    if connection.vendor == "sqlite":
        sql = "SELECT rowid FROM notes_fts WHERE notes_fts MATCH %s"
    else:
        sql = "SELECT note_id FROM notes_fts WHERE body @@ phraseto_tsquery('simple', %s)"
    with connection.cursor() as cursor:
        return sorted(int(row[0]) for row in cursor.execute(sql, [word]).fetchall())


def check_integrity() -> None:
    """FTS5's own consistency check (PostgreSQL's index is a plain table of rows)."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO notes_fts(notes_fts) VALUES ('integrity-check')")


def empty() -> None:
    """Delete every document of the notes index, as a lost index would be."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("INSERT INTO notes_fts(notes_fts) VALUES ('delete-all')")
        else:
            cursor.execute("DELETE FROM notes_fts")
