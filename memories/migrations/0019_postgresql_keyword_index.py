"""PostgreSQL's keyword index (SQLite's FTS5 ``memories_fts``): tsvectors with a GIN
index, per-namespace statistics for BM25, and triggers that mark changed memories.

The triggers cannot run the Python tokenizer, so they append (namespace, id) to
``memories_fts_pending`` and ``memories.store.keyword_pg.flush`` indexes them before a
search reads the namespace (the module docstring says why that is consistent). Every
existing memory is marked here; the first search of each namespace indexes it.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import postgresql_only

INDEXED = "namespace, title, content, summary, tags, context"

FORWARD = [
    """
    CREATE TABLE memories_fts (
        memory_id bigint PRIMARY KEY,
        namespace text NOT NULL,
        length integer NOT NULL,
        terms tsvector NOT NULL
    )
    """,
    "CREATE INDEX memories_fts_terms ON memories_fts USING gin (terms)",
    """
    CREATE TABLE memories_fts_stats (
        namespace text PRIMARY KEY,
        documents bigint NOT NULL,
        length bigint NOT NULL
    )
    """,
    "CREATE TABLE memories_fts_pending (namespace text NOT NULL, memory_id bigint NOT NULL)",
    "CREATE INDEX memories_fts_pending_namespace ON memories_fts_pending (namespace)",
    """
    CREATE FUNCTION memories_fts_mark() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            INSERT INTO memories_fts_pending (namespace, memory_id) VALUES (OLD.namespace, OLD.id);
        END IF;
        IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND OLD.namespace IS DISTINCT FROM NEW.namespace)
        THEN
            INSERT INTO memories_fts_pending (namespace, memory_id) VALUES (NEW.namespace, NEW.id);
        END IF;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories_memory
        FOR EACH ROW EXECUTE FUNCTION memories_fts_mark()
    """,
    """
    CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories_memory
        FOR EACH ROW EXECUTE FUNCTION memories_fts_mark()
    """,
    f"""
    CREATE TRIGGER memories_fts_au AFTER UPDATE OF {INDEXED} ON memories_memory
        FOR EACH ROW WHEN ((OLD.namespace, OLD.title, OLD.content, OLD.summary, OLD.tags,
            OLD.context) IS DISTINCT FROM (NEW.namespace, NEW.title, NEW.content, NEW.summary,
            NEW.tags, NEW.context))
        EXECUTE FUNCTION memories_fts_mark()
    """,
    "INSERT INTO memories_fts_pending (namespace, memory_id) SELECT namespace, id FROM memories_memory",
    # 0018's TRUNCATE trigger, now emptying the keyword tables too.
    """
    CREATE OR REPLACE FUNCTION memories_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        TRUNCATE memories_vec, memories_vector_change, memories_namespace_count,
            memories_fts, memories_fts_stats, memories_fts_pending;
        INSERT INTO memories_vector_version AS t (namespace, version) VALUES ('', 1)
            ON CONFLICT (namespace) DO UPDATE SET version = t.version + 1;
        RETURN NULL;
    END
    $$
    """,
]
REVERSE = [
    """
    CREATE OR REPLACE FUNCTION memories_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        TRUNCATE memories_vec, memories_vector_change, memories_namespace_count;
        INSERT INTO memories_vector_version AS t (namespace, version) VALUES ('', 1)
            ON CONFLICT (namespace) DO UPDATE SET version = t.version + 1;
        RETURN NULL;
    END
    $$
    """,
    "DROP TRIGGER IF EXISTS memories_fts_au ON memories_memory",
    "DROP TRIGGER IF EXISTS memories_fts_ad ON memories_memory",
    "DROP TRIGGER IF EXISTS memories_fts_ai ON memories_memory",
    "DROP FUNCTION IF EXISTS memories_fts_mark()",
    "DROP TABLE IF EXISTS memories_fts_pending",
    "DROP TABLE IF EXISTS memories_fts_stats",
    "DROP TABLE IF EXISTS memories_fts",
]


class Migration(migrations.Migration):
    dependencies = [("memories", "0018_postgresql_truncate")]

    operations = [postgresql_only(migrations.RunSQL(FORWARD, reverse_sql=REVERSE))]
