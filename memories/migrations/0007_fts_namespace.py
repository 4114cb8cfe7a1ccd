"""Put the namespace into the memories FTS index, so keyword recall scans one namespace.

Without it a MATCH scores every matching memory of every namespace before the
namespace filter can run. The namespace column is matched as a phrase
(``namespace : "user alice"``) next to the user's terms; the exact namespace is
still checked when rows are loaded, since the tokenizer folds punctuation.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import sqlite_only

COLUMNS = "title, content, summary, tags, namespace"
NEW_COLUMNS = "new.title, new.content, new.summary, new.tags, new.namespace"
OLD_COLUMNS = "old.title, old.content, old.summary, old.tags, old.namespace"


def fts_sql(columns: str, new: str, old: str) -> list[str]:
    return [
        "DROP TRIGGER IF EXISTS memories_fts_ai",
        "DROP TRIGGER IF EXISTS memories_fts_ad",
        "DROP TRIGGER IF EXISTS memories_fts_au",
        "DROP TABLE IF EXISTS memories_fts",
        f"""
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            {columns},
            content='memories_memory', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        )
        """,
        f"""
        CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories_memory BEGIN
            INSERT INTO memories_fts(rowid, {columns}) VALUES (new.id, {new});
        END
        """,
        f"""
        CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories_memory BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, {columns})
            VALUES ('delete', old.id, {old});
        END
        """,
        f"""
        CREATE TRIGGER memories_fts_au AFTER UPDATE OF title, content, summary, tags, namespace
        ON memories_memory BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, {columns})
            VALUES ('delete', old.id, {old});
            INSERT INTO memories_fts(rowid, {columns}) VALUES (new.id, {new});
        END
        """,
        "INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')",
    ]


class Migration(migrations.Migration):
    dependencies = [("memories", "0006_memory_slot_index")]

    operations = [
        sqlite_only(
            migrations.RunSQL(
                fts_sql(COLUMNS, NEW_COLUMNS, OLD_COLUMNS),
                reverse_sql=fts_sql(
                    "title, content, summary, tags",
                    "new.title, new.content, new.summary, new.tags",
                    "old.title, old.content, old.summary, old.tags",
                ),
            )
        )
    ]
