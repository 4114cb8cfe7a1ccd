"""PostgreSQL: pgvector's HNSW index (cosine) on the vector table.

Large namespaces (settings.VECTOR_INDEX_MIN_ROWS) are searched through it instead of
each process's exact copy (memories.store.vector_index.index_scan). A table created later
(reindex, re-embedding) gets it from vector_index.create_table.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import postgresql_only

# Copied, not imported: a migration must not depend on a module that may move.
HNSW_INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS memories_vec_hnsw ON memories_vec "
    "USING hnsw (embedding vector_cosine_ops)"
)


class Migration(migrations.Migration):
    dependencies = [("memories", "0019_postgresql_keyword_index")]

    operations = [
        postgresql_only(
            migrations.RunSQL(
                [HNSW_INDEX_SQL], reverse_sql=["DROP INDEX IF EXISTS memories_vec_hnsw"]
            )
        )
    ]
