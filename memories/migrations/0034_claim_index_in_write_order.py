"""The claim index back to (namespace, subject, attribute), without created_at: dedup's
claim lookup orders by id, and with created_at last SQLite sorted every holder of a claim
on each write. SQLite keeps equal keys in rowid order, so a belief's timeline (ORDER BY id
DESC) walks the same index backwards."""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0033_fact_events_in_the_activity_log"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="memory", name="memory_claim_idx"),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("claim_attribute", ""), _negated=True),
                fields=["namespace", "claim_subject", "claim_attribute"],
                name="memory_claim_idx",
            ),
        ),
    ]
