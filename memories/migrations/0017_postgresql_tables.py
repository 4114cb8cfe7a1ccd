"""PostgreSQL's side of migrations 0002, 0004 and 0014: the vector table, its version
counters and change log, and the per-namespace counts, with plpgsql triggers.

SQLite got these from its own migrations (wrapped in ``sqlite_only``); this one runs on
PostgreSQL only. The keyword index (SQLite's FTS5 ``memories_fts``) is not here yet:
PostgreSQL triggers cannot call the Python stemmer, see docs/architecture.md.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import postgresql_only

TABLES_SQL = [
    "CREATE EXTENSION IF NOT EXISTS vector",
    """
    CREATE TABLE memories_vector_version (
        namespace text PRIMARY KEY,
        version bigint NOT NULL
    )
    """,
    """
    CREATE TABLE memories_vector_change (
        namespace text NOT NULL,
        version bigint NOT NULL,
        memory_id bigint NOT NULL,
        PRIMARY KEY (namespace, version, memory_id)
    )
    """,
    # What SQLite's memories_vec_ad trigger does (0004): a deleted memory's vector goes,
    # and its namespace gets a new version logging the change.
    """
    CREATE FUNCTION memories_vec_ad() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        ns text;
        v bigint;
    BEGIN
        SELECT namespace INTO ns FROM memories_vec WHERE memory_id = OLD.id;
        IF ns IS NOT NULL THEN
            INSERT INTO memories_vector_version AS t (namespace, version) VALUES (ns, 1)
                ON CONFLICT (namespace) DO UPDATE SET version = t.version + 1
                RETURNING version INTO v;
            INSERT INTO memories_vector_change (namespace, version, memory_id)
                VALUES (ns, v, OLD.id);
            DELETE FROM memories_vector_change WHERE namespace = ns AND version <= v - 1000;
            DELETE FROM memories_vec WHERE memory_id = OLD.id;
        END IF;
        RETURN OLD;
    END
    $$
    """,
    """
    CREATE TRIGGER memories_vec_ad AFTER DELETE ON memories_memory
        FOR EACH ROW EXECUTE FUNCTION memories_vec_ad()
    """,
    """
    CREATE TABLE memories_namespace_count (
        namespace text NOT NULL,
        kind text NOT NULL,
        status text NOT NULL,
        n bigint NOT NULL,
        PRIMARY KEY (namespace, kind, status)
    )
    """,
    """
    INSERT INTO memories_namespace_count (namespace, kind, status, n)
        SELECT namespace, kind, status, count(*) FROM memories_memory
        GROUP BY namespace, kind, status
    """,
    # 0014's three triggers in one function.
    """
    CREATE FUNCTION memories_count() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE memories_namespace_count SET n = n - 1
                WHERE namespace = OLD.namespace AND kind = OLD.kind AND status = OLD.status;
            DELETE FROM memories_namespace_count
                WHERE namespace = OLD.namespace AND kind = OLD.kind AND status = OLD.status
                AND n <= 0;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO memories_namespace_count AS c (namespace, kind, status, n)
                VALUES (NEW.namespace, NEW.kind, NEW.status, 1)
                ON CONFLICT (namespace, kind, status) DO UPDATE SET n = c.n + 1;
        END IF;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER memories_count_ai AFTER INSERT ON memories_memory
        FOR EACH ROW EXECUTE FUNCTION memories_count()
    """,
    """
    CREATE TRIGGER memories_count_ad AFTER DELETE ON memories_memory
        FOR EACH ROW EXECUTE FUNCTION memories_count()
    """,
    """
    CREATE TRIGGER memories_count_au AFTER UPDATE OF namespace, kind, status ON memories_memory
        FOR EACH ROW WHEN (OLD.namespace IS DISTINCT FROM NEW.namespace
            OR OLD.kind IS DISTINCT FROM NEW.kind OR OLD.status IS DISTINCT FROM NEW.status)
        EXECUTE FUNCTION memories_count()
    """,
]
REVERSE_SQL = [
    "DROP TRIGGER IF EXISTS memories_count_au ON memories_memory",
    "DROP TRIGGER IF EXISTS memories_count_ad ON memories_memory",
    "DROP TRIGGER IF EXISTS memories_count_ai ON memories_memory",
    "DROP FUNCTION IF EXISTS memories_count()",
    "DROP TABLE IF EXISTS memories_namespace_count",
    "DROP TRIGGER IF EXISTS memories_vec_ad ON memories_memory",
    "DROP FUNCTION IF EXISTS memories_vec_ad()",
    "DROP TABLE IF EXISTS memories_vector_change",
    "DROP TABLE IF EXISTS memories_vector_version",
]


# Copied, not imported (a migration must not depend on a module that may move): the
# pgvector table as memories.store.vector_index.create_table makes it, and the index's name.
INDEX_NAME = "memories"
VEC_CREATE_SQL = [
    "CREATE TABLE memories_vec (memory_id bigint PRIMARY KEY, namespace text NOT NULL, "
    "embedding vector({dims}) NOT NULL)",
    "CREATE INDEX memories_vec_namespace_idx ON memories_vec (namespace)",
]


def create_vector_table(apps, schema_editor):
    """The pgvector table at the configured embedder's dimension, and its fingerprint."""
    from spaceduck.core.providers import get_embedder

    fingerprint = get_embedder().fingerprint
    with schema_editor.connection.cursor() as cursor:
        for sql in VEC_CREATE_SQL:
            cursor.execute(sql.format(dims=int(fingerprint.dimensions)))
    apps.get_model("spaceduck", "VectorIndexState").objects.update_or_create(
        name=INDEX_NAME,
        defaults={
            "provider": fingerprint.provider,
            "model": fingerprint.model,
            "dimensions": fingerprint.dimensions,
        },
    )


def drop_vector_table(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS memories_vec")
    apps.get_model("spaceduck", "VectorIndexState").objects.filter(name=INDEX_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0016_namespace_id_index"),
        ("spaceduck", "0003_runtime_settings"),
    ]

    operations = [
        postgresql_only(
            migrations.RunSQL(TABLES_SQL, reverse_sql=REVERSE_SQL),
            migrations.RunPython(create_vector_table, drop_vector_table),
        )
    ]
