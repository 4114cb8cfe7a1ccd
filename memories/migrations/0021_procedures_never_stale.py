"""Procedures never go stale (memories.upkeep.staleness): the ones an earlier version marked stale
are active again, each with an "activated" event in its history."""

from django.db import migrations
from django.utils import timezone

REASON = "procedures do not go stale: a rule holds until it is changed"


def revive(apps, schema_editor):  # type: ignore[no-untyped-def]
    Memory = apps.get_model("memories", "Memory")
    MemoryEvent = apps.get_model("memories", "MemoryEvent")
    now = timezone.now()
    stale = Memory.objects.filter(kind="procedure", status="stale")
    rows = list(stale.values_list("id", "namespace"))
    if not rows:
        return
    MemoryEvent.objects.bulk_create(
        MemoryEvent(
            memory_id=memory_id,
            namespace=namespace,
            event="activated",
            actor="migration",
            reason=REASON,
            data={"from": "stale"},
            created_at=now,
        )
        for memory_id, namespace in rows
    )
    Memory.objects.filter(pk__in=[memory_id for memory_id, _ in rows]).update(
        status="active", last_seen_at=now, updated_at=now
    )


class Migration(migrations.Migration):
    dependencies = [("memories", "0020_postgresql_vector_hnsw")]

    operations = [migrations.RunPython(revive, migrations.RunPython.noop)]
