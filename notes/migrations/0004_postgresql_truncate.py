"""PostgreSQL: TRUNCATE of notes empties their search index (row triggers do not fire)."""

from django.db import migrations

from spaceduck.core.db.migration_ops import postgresql_only

FORWARD = [
    """
    CREATE FUNCTION notes_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        TRUNCATE notes_fts;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER notes_truncate AFTER TRUNCATE ON notes_note
        FOR EACH STATEMENT EXECUTE FUNCTION notes_truncated()
    """,
]
REVERSE = [
    "DROP TRIGGER IF EXISTS notes_truncate ON notes_note",
    "DROP FUNCTION IF EXISTS notes_truncated()",
]


class Migration(migrations.Migration):
    dependencies = [("notes", "0003_postgresql_note_search")]

    operations = [postgresql_only(migrations.RunSQL(FORWARD, reverse_sql=REVERSE))]
