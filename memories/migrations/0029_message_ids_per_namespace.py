"""Message ids belong to their namespace (issue 37).

A client's message id is stored as given while no other namespace holds it, and
otherwise under a key qualified by its namespace (memories.models.namespaced_message_key,
up to 82 characters). Existing rows keep their keys: each is a client's id held by one
namespace, which is what the first form says. Only the column widens: on PostgreSQL the
key and the two columns referring to it become varchar(82) (a catalogue change, no
rewrite); SQLite does not enforce a varchar's length, so there the change is the model
state's alone.
"""

from django.db import migrations, models

import memories.models
from spaceduck.core.db.migration_ops import postgresql_only

COLUMNS = (
    ("memories_message", "id"),
    ("memories_extraction", "message_id"),
    ("memories_memory", "source_message_id"),
)
WIDEN = [f"ALTER TABLE {table} ALTER COLUMN {column} TYPE varchar(82)" for table, column in COLUMNS]
NARROW = [
    f"ALTER TABLE {table} ALTER COLUMN {column} TYPE varchar(64)" for table, column in COLUMNS
]


class Migration(migrations.Migration):
    dependencies = [("memories", "0028_tombstones")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="message",
                    name="id",
                    field=models.CharField(
                        default=memories.models.new_id,
                        max_length=82,
                        primary_key=True,
                        serialize=False,
                    ),
                )
            ],
            database_operations=[postgresql_only(migrations.RunSQL(WIDEN, reverse_sql=NARROW))],
        )
    ]
