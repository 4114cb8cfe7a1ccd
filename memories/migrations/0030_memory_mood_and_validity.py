"""How a memory's claim was said (``claim_mood``) and when what it says holds
(``valid_from``, ``valid_until``).

``claim_mood`` is added with ALTER TABLE (state via SeparateDatabaseAndState), as 0022
adds the other claim columns: Django's SQLite schema editor would rebuild the table for a
NOT NULL column, which drops the FTS5 and vec0 triggers on it. The two dates are nullable
without a default, which Django adds with ALTER TABLE ADD COLUMN on both databases (each
with its own datetime type), so they are plain AddFields. Existing claims keep a blank
mood: they were read before moods were.

The partial index serves the staleness job's scan of active memories past their validity
(memories.upkeep.staleness): it holds only the memories with a valid_until.
"""

from django.db import migrations, models

MOOD_COLUMN = "ALTER TABLE memories_memory ADD COLUMN claim_mood varchar(16) NOT NULL DEFAULT ''"


class Migration(migrations.Migration):
    dependencies = [("memories", "0029_message_ids_per_namespace")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    MOOD_COLUMN,
                    reverse_sql="ALTER TABLE memories_memory DROP COLUMN claim_mood",
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name="memory",
                    name="claim_mood",
                    field=models.CharField(max_length=16, blank=True, default=""),
                )
            ],
        ),
        migrations.AddField(
            model_name="memory",
            name="valid_from",
            field=models.DateTimeField(null=True, blank=True),
        ),
        migrations.AddField(
            model_name="memory",
            name="valid_until",
            field=models.DateTimeField(null=True, blank=True),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                fields=["status", "valid_until"],
                name="memory_valid_until_idx",
                condition=models.Q(valid_until__isnull=False),
            ),
        ),
    ]
