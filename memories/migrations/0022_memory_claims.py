"""What a memory claims (subject, attribute, value, polarity; memories.extraction.claims).

Added with ALTER TABLE (state via SeparateDatabaseAndState), as 0009 does: Django's SQLite
schema editor would rebuild the table, which drops the FTS5 and vec0 triggers on it. The
same statements run on PostgreSQL. Existing memories get their claims from
``manage.py memory claims`` (a migration must not import the rules, which may move).
"""

from django.db import migrations, models

COLUMNS = {
    "claim_subject": 100,
    "claim_attribute": 120,
    "claim_value": 255,
    "claim_polarity": 16,
}
INDEX = (
    "CREATE INDEX memory_claim_idx ON memories_memory "
    "(namespace, claim_subject, claim_attribute) WHERE NOT (claim_attribute = '')"
)


class Migration(migrations.Migration):
    dependencies = [("memories", "0021_procedures_never_stale")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                *(
                    migrations.RunSQL(
                        f"ALTER TABLE memories_memory ADD COLUMN {name} varchar({size}) "
                        "NOT NULL DEFAULT ''",
                        reverse_sql=f"ALTER TABLE memories_memory DROP COLUMN {name}",
                    )
                    for name, size in COLUMNS.items()
                ),
                migrations.RunSQL(INDEX, reverse_sql="DROP INDEX memory_claim_idx"),
            ],
            state_operations=[
                *(
                    migrations.AddField(
                        model_name="memory",
                        name=name,
                        field=models.CharField(max_length=size, blank=True, default=""),
                    )
                    for name, size in COLUMNS.items()
                ),
                migrations.AddIndex(
                    model_name="memory",
                    index=models.Index(
                        fields=["namespace", "claim_subject", "claim_attribute"],
                        name="memory_claim_idx",
                        condition=~models.Q(claim_attribute=""),
                    ),
                ),
            ],
        ),
    ]
