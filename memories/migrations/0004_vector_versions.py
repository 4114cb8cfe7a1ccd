"""Version counters and a change log for the in-process vector caches (memories.store.vector_index).

Every vector write bumps its namespace's counter and logs the memory ids it
changed under the new value, in the same transaction, so a process can tell
with one indexed lookup whether its cached copy of a namespace is current and,
when it is not, which rows to re-read. The counter keyed "" is the vec0 table's
epoch (bumped when the table is recreated). Python writes do this in
vector_index.upsert/delete; deleting memory rows (one, a queryset, a cascade)
does it here, in the trigger that also removes the vectors: it reads the
vector row's namespace before deleting the row. The log keeps the last 1000
versions per namespace (vector_index.LOG_VERSIONS); the trigger prunes by the
memory row's namespace, which spares two vec0 lookups per deleted row and is
safe for any namespace (it only drops entries older than that window).
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import sqlite_only

CREATE_SQL = [
    """
    CREATE TABLE memories_vector_version (
        namespace TEXT PRIMARY KEY,
        version INTEGER NOT NULL
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE memories_vector_change (
        namespace TEXT NOT NULL,
        version INTEGER NOT NULL,
        memory_id INTEGER NOT NULL,
        PRIMARY KEY (namespace, version, memory_id)
    ) WITHOUT ROWID
    """,
    "DROP TRIGGER IF EXISTS memories_vec_ad",
    """
    CREATE TRIGGER memories_vec_ad AFTER DELETE ON memories_memory BEGIN
        INSERT INTO memories_vector_version(namespace, version)
            SELECT namespace, 1 FROM memories_vec WHERE memory_id = old.id
            ON CONFLICT(namespace) DO UPDATE SET version = version + 1;
        INSERT INTO memories_vector_change(namespace, version, memory_id)
            SELECT namespace, version, old.id FROM memories_vector_version
            WHERE namespace = (SELECT namespace FROM memories_vec WHERE memory_id = old.id);
        DELETE FROM memories_vector_change
            WHERE namespace = old.namespace AND version <= (
                SELECT version - 1000 FROM memories_vector_version WHERE namespace = old.namespace
            );
        DELETE FROM memories_vec WHERE memory_id = old.id;
    END
    """,
]
# Back to the 0002 trigger, then drop the counters and the log.
REVERSE_SQL = [
    "DROP TRIGGER IF EXISTS memories_vec_ad",
    """
    CREATE TRIGGER memories_vec_ad AFTER DELETE ON memories_memory BEGIN
        DELETE FROM memories_vec WHERE memory_id = old.id;
    END
    """,
    "DROP TABLE IF EXISTS memories_vector_change",
    "DROP TABLE IF EXISTS memories_vector_version",
]


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0003_maintenance_run"),
    ]

    operations = [
        sqlite_only(migrations.RunSQL(CREATE_SQL, reverse_sql=REVERSE_SQL)),
    ]
