"""``Memory.context``: where a memory was learnt, searched by keyword.

The column is added with ALTER TABLE (state via SeparateDatabaseAndState):
Django's SQLite schema editor would rebuild the table for a NOT NULL column,
which drops the FTS5 and vec0 triggers that live on it. The keyword index
(0008's layout) is then recreated with the new column and rebuilt.
"""

from importlib import import_module

from django.db import migrations, models

from spaceduck.core.db.migration_ops import sqlite_only

_0008 = import_module("memories.migrations.0008_fts_namespace_terms")

COLUMNS = ("title", "content", "summary", "tags", "context")


class Migration(migrations.Migration):
    dependencies = [("memories", "0008_fts_namespace_terms")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE memories_memory ADD COLUMN context text NOT NULL DEFAULT ''",
                    # Back to 0008's index first: its triggers must not name the column.
                    reverse_sql="ALTER TABLE memories_memory DROP COLUMN context",
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name="memory",
                    name="context",
                    field=models.TextField(blank=True, default=""),
                )
            ],
        ),
        sqlite_only(migrations.RunSQL(_0008.fts_sql(COLUMNS), reverse_sql=_0008.FORWARD)),
    ]
