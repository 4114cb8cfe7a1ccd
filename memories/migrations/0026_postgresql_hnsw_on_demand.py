"""PostgreSQL: no HNSW index until a namespace needs it.

Namespaces below VECTOR_INDEX_MIN_ROWS (1.5M since 0025's time) are searched from each
process's copy, so the index only slowed every vector insert (2-6 ms a message). It is
dropped here unless a namespace already holds that many memories; the periodic task
builds it when one does (memories.store.vector_index.ensure_index). The statements are copied
here: a migration must not import code that may move or change.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import postgresql_only

DEFAULT_MIN_ROWS = 1_500_000
DROP_UNLESS_NEEDED = f"""
DO $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM memories_namespace_count GROUP BY namespace
        HAVING sum(n) >= {DEFAULT_MIN_ROWS}
    ) THEN
        DROP INDEX IF EXISTS memories_vec_hnsw;
    END IF;
END $$;
"""
CREATE = (
    "CREATE INDEX IF NOT EXISTS memories_vec_hnsw ON memories_vec "
    "USING hnsw (embedding vector_cosine_ops)"
)


class Migration(migrations.Migration):
    dependencies = [("memories", "0025_postgresql_keyword_lexemes")]

    operations = [postgresql_only(migrations.RunSQL([DROP_UNLESS_NEEDED], reverse_sql=[CREATE]))]
