"""Note ids belong to their namespace (issue 37).

A client's note id is stored as given while no other namespace holds it, and otherwise
under a key qualified by its namespace (spaceduck.core.ids, up to 18 + 128 characters).
Existing rows keep their keys: each is a client's id held by one namespace, which is
what the first form says. Only the column widens: on PostgreSQL ``uid`` becomes
varchar(146) (a catalogue change, no rewrite); SQLite does not enforce a varchar's
length, and rebuilding the table would drop the keyword index's triggers, so there the
change is the model state's alone.
"""

from django.db import migrations, models

import notes.models
from spaceduck.core.db.migration_ops import postgresql_only

WIDEN = "ALTER TABLE notes_note ALTER COLUMN uid TYPE varchar(146)"
NARROW = "ALTER TABLE notes_note ALTER COLUMN uid TYPE varchar(128)"


class Migration(migrations.Migration):
    dependencies = [("notes", "0006_fts_secure_delete")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="note",
                    name="uid",
                    field=models.CharField(
                        default=notes.models.new_uid, max_length=146, unique=True
                    ),
                )
            ],
            database_operations=[postgresql_only(migrations.RunSQL(WIDEN, reverse_sql=NARROW))],
        )
    ]
