"""``Memory.context``: where a memory was learnt, searched by keyword.

The column is added with ALTER TABLE (state via SeparateDatabaseAndState):
Django's SQLite schema editor would rebuild the table for a NOT NULL column,
which drops the FTS5 and vec0 triggers that live on it. The keyword index
(0008's layout) is then recreated with the new column and rebuilt.
"""

from importlib import import_module

from django.db import migrations, models

_0008 = import_module("memories.migrations.0008_fts_namespace_terms")

COLUMNS = ("title", "content", "summary", "tags", "context")


def fts_sql(columns: tuple[str, ...]) -> list[str]:
    terms = ", ".join(f"spaceduck_terms({{row}}.namespace, {{row}}.{c})" for c in columns)
    names = ", ".join(columns)
    return [
        "DROP TRIGGER IF EXISTS memories_fts_ai",
        "DROP TRIGGER IF EXISTS memories_fts_ad",
        "DROP TRIGGER IF EXISTS memories_fts_au",
        "DROP TABLE IF EXISTS memories_fts",
        f"""
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            {names}, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
        )
        """,
        f"""
        CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories_memory BEGIN
            INSERT INTO memories_fts(rowid, {names}) VALUES (new.id, {terms.format(row="new")});
        END
        """,
        """
        CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories_memory BEGIN
            DELETE FROM memories_fts WHERE rowid = old.id;
        END
        """,
        f"""
        CREATE TRIGGER memories_fts_au AFTER UPDATE OF {names}, namespace
        ON memories_memory BEGIN
            DELETE FROM memories_fts WHERE rowid = old.id;
            INSERT INTO memories_fts(rowid, {names}) VALUES (new.id, {terms.format(row="new")});
        END
        """,
        f"""
        INSERT INTO memories_fts(rowid, {names})
        SELECT id, {terms.format(row="memories_memory")} FROM memories_memory
        """,
    ]


class Migration(migrations.Migration):
    dependencies = [("memories", "0008_fts_namespace_terms")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE memories_memory ADD COLUMN context text NOT NULL DEFAULT ''",
                    # Back to 0008's index first: its triggers must not name the column.
                    reverse_sql="ALTER TABLE memories_memory DROP COLUMN context",
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name="memory",
                    name="context",
                    field=models.TextField(blank=True, default=""),
                )
            ],
        ),
        migrations.RunSQL(fts_sql(COLUMNS), reverse_sql=_0008.FORWARD),
    ]
