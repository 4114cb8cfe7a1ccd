"""The activity log reads a fact's writes from FactEvent (who set it, which parts) instead
of Fact.updated_at (no one): its indexes move there. Facts written before FactEvent existed
get one "created" record each, at their last write, by no one recorded, so the log keeps
showing them."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

BATCH = 2_000


def backfill(apps: Any, schema_editor: Any) -> None:
    fact, event = apps.get_model("memories", "Fact"), apps.get_model("memories", "FactEvent")
    recorded = set(event.objects.values_list("fact_id", flat=True).distinct())
    rows = fact.objects.order_by("pk").values_list("pk", "namespace", "updated_at")
    batch = []
    for pk, namespace, updated_at in rows.iterator(chunk_size=BATCH):
        if pk not in recorded:
            batch.append(
                event(fact_id=pk, namespace=namespace, event="created", created_at=updated_at)
            )
        if len(batch) >= BATCH:
            event.objects.bulk_create(batch)
            batch = []
    event.objects.bulk_create(batch)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0032_history_undone_fact_events_claim_time"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="fact", name="fact_updated_idx"),
        migrations.RemoveIndex(model_name="factevent", name="factevent_ns_idx"),
        migrations.AddIndex(
            model_name="factevent",
            index=models.Index(fields=["created_at"], name="factevent_created_idx"),
        ),
        migrations.AddIndex(
            model_name="factevent",
            index=models.Index(fields=["namespace", "created_at"], name="factevent_ns_created_idx"),
        ),
        migrations.AddIndex(
            model_name="factevent",
            index=models.Index(fields=["actor", "created_at"], name="factevent_actor_created_idx"),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
