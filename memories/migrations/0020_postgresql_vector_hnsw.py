"""PostgreSQL: pgvector's HNSW index (cosine) on the vector table.

Large namespaces (settings.VECTOR_INDEX_MIN_ROWS) are searched through it instead of
each process's exact copy (memories.vector_index.index_scan). A table created later
(reindex, re-embedding) gets it from vector_index.create_table.
"""

from django.db import migrations

from memories.vector_index import HNSW_INDEX_SQL
from spaceduck.db.migration_ops import postgresql_only


class Migration(migrations.Migration):
    dependencies = [("memories", "0019_postgresql_keyword_index")]

    operations = [
        postgresql_only(
            migrations.RunSQL(
                [HNSW_INDEX_SQL], reverse_sql=["DROP INDEX IF EXISTS memories_vec_hnsw"]
            )
        )
    ]
