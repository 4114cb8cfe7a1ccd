"""Give every namespace its own postings in the memories keyword index.

0007 matched the namespace as a phrase next to the user's terms. BM25 then
counted the rows of every phrase over the whole table on each query, so the
namespace phrase alone cost ~12 ms at 100k memories, and a common word cost
its postings in every namespace. Now each indexed word is stored as
``<namespace key><word>`` (``spaceduck.core.fts.namespaced_terms``, the SQL function
``spaceduck_terms`` that the database backend registers on every connection):
a query touches only its namespace's postings and the document frequencies
BM25 uses are the namespace's own.

The table is contentless (it stores only the index) with ``contentless_delete``
so the triggers can delete by rowid; the text lives in ``memories_memory``.
"""

from importlib import import_module

from django.db import migrations

from spaceduck.core.db.migration_ops import sqlite_only

# Going back restores 0007's table (namespace phrase column) and rebuilds it.
_0007 = import_module("memories.migrations.0007_fts_namespace")
REVERSE = _0007.fts_sql(_0007.COLUMNS, _0007.NEW_COLUMNS, _0007.OLD_COLUMNS)

COLUMNS = ("title", "content", "summary", "tags")


def fts_sql(columns: tuple[str, ...]) -> list[str]:
    """The keyword index over ``columns`` (0009 adds ``context``), rebuilt from the rows."""
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


FORWARD = fts_sql(COLUMNS)


class Migration(migrations.Migration):
    dependencies = [("memories", "0007_fts_namespace")]

    operations = [sqlite_only(migrations.RunSQL(FORWARD, reverse_sql=REVERSE))]
