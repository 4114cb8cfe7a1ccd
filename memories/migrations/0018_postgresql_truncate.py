"""PostgreSQL: TRUNCATE of memories empties what its row triggers would have emptied.

Row-level triggers (0017) do not fire on TRUNCATE, so without this a truncated
memories table would leave its vectors and counts behind (Django's test flush and
any operator's TRUNCATE do it). The vector epoch is bumped, never reset, so every
process's cached copies reload.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import postgresql_only

FORWARD = [
    """
    CREATE FUNCTION memories_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        TRUNCATE memories_vec, memories_vector_change, memories_namespace_count;
        INSERT INTO memories_vector_version AS t (namespace, version) VALUES ('', 1)
            ON CONFLICT (namespace) DO UPDATE SET version = t.version + 1;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER memories_truncate AFTER TRUNCATE ON memories_memory
        FOR EACH STATEMENT EXECUTE FUNCTION memories_truncated()
    """,
]
REVERSE = [
    "DROP TRIGGER IF EXISTS memories_truncate ON memories_memory",
    "DROP FUNCTION IF EXISTS memories_truncated()",
]


class Migration(migrations.Migration):
    dependencies = [("memories", "0017_postgresql_tables")]

    operations = [postgresql_only(migrations.RunSQL(FORWARD, reverse_sql=REVERSE))]
