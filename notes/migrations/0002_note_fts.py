"""Full-text index for notes, opt-in per namespace kind.

Notes of a kind are indexed only once that kind is listed in
notes_notesearchkind (enable_note_search backfills and inserts that row in one
transaction), so until then note writes pay nothing for search. The WHEN
clauses use the same condition on insert and delete, which keeps the
external-content index consistent: a note is removed only if it was added.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import sqlite_only

ENABLED = "EXISTS (SELECT 1 FROM notes_notesearchkind WHERE kind = {row}.namespace_kind)"

FTS_SQL = [
    """
    CREATE VIRTUAL TABLE notes_fts USING fts5(
        body, content='notes_note', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    )
    """,
    f"""
    CREATE TRIGGER notes_fts_ai AFTER INSERT ON notes_note WHEN {ENABLED.format(row="new")} BEGIN
        INSERT INTO notes_fts(rowid, body) VALUES (new.id, new.body);
    END
    """,
    f"""
    CREATE TRIGGER notes_fts_ad AFTER DELETE ON notes_note WHEN {ENABLED.format(row="old")} BEGIN
        INSERT INTO notes_fts(notes_fts, rowid, body) VALUES ('delete', old.id, old.body);
    END
    """,
    f"""
    CREATE TRIGGER notes_fts_au AFTER UPDATE OF body ON notes_note
    WHEN {ENABLED.format(row="old")} BEGIN
        INSERT INTO notes_fts(notes_fts, rowid, body) VALUES ('delete', old.id, old.body);
        INSERT INTO notes_fts(rowid, body) VALUES (new.id, new.body);
    END
    """,
]
FTS_REVERSE_SQL = [
    "DROP TRIGGER IF EXISTS notes_fts_au",
    "DROP TRIGGER IF EXISTS notes_fts_ad",
    "DROP TRIGGER IF EXISTS notes_fts_ai",
    "DROP TABLE IF EXISTS notes_fts",
]


class Migration(migrations.Migration):
    dependencies = [("notes", "0001_initial")]

    operations = [sqlite_only(migrations.RunSQL(FTS_SQL, reverse_sql=FTS_REVERSE_SQL))]
