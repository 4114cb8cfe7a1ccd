"""Memories counted per (namespace, kind, status), kept by triggers, for the overview.

The overview showed each namespace's memories by kind and by status with a grouped
count over the (namespace, status, kind) index: ~25 ms for a namespace of 100k
memories, on every refresh (`manage.py bench pages`). The triggers keep the counts in
the writing transaction, whatever writes (the services, the admin, queryset updates
and deletes, cascades, an import), at the cost of one keyed upsert per insert, delete,
or change of namespace, kind or status. A count that reaches zero is removed.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import sqlite_only

_ADD = """
    INSERT INTO memories_namespace_count(namespace, kind, status, n)
        VALUES ({row}.namespace, {row}.kind, {row}.status, 1)
        ON CONFLICT(namespace, kind, status) DO UPDATE SET n = n + 1;
"""
_REMOVE = """
    UPDATE memories_namespace_count SET n = n - 1
        WHERE namespace = {row}.namespace AND kind = {row}.kind AND status = {row}.status;
    DELETE FROM memories_namespace_count
        WHERE namespace = {row}.namespace AND kind = {row}.kind AND status = {row}.status
        AND n <= 0;
"""

CREATE_SQL = [
    """
    CREATE TABLE memories_namespace_count (
        namespace TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (namespace, kind, status)
    ) WITHOUT ROWID
    """,
    """
    INSERT INTO memories_namespace_count(namespace, kind, status, n)
        SELECT namespace, kind, status, count(*) FROM memories_memory
        GROUP BY namespace, kind, status
    """,
    "CREATE TRIGGER memories_count_ai AFTER INSERT ON memories_memory BEGIN"
    + _ADD.format(row="new")
    + "END",
    "CREATE TRIGGER memories_count_ad AFTER DELETE ON memories_memory BEGIN"
    + _REMOVE.format(row="old")
    + "END",
    "CREATE TRIGGER memories_count_au AFTER UPDATE OF namespace, kind, status ON memories_memory"
    " WHEN old.namespace IS NOT new.namespace OR old.kind IS NOT new.kind"
    " OR old.status IS NOT new.status BEGIN"
    + _REMOVE.format(row="old")
    + _ADD.format(row="new")
    + "END",
]
REVERSE_SQL = [
    "DROP TRIGGER IF EXISTS memories_count_au",
    "DROP TRIGGER IF EXISTS memories_count_ad",
    "DROP TRIGGER IF EXISTS memories_count_ai",
    "DROP TABLE IF EXISTS memories_namespace_count",
]


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0013_extraction_created_index"),
    ]

    operations = [
        sqlite_only(migrations.RunSQL(CREATE_SQL, reverse_sql=REVERSE_SQL)),
    ]
