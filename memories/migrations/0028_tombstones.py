"""Tombstones, not copies (issue 37).

A ``Deletion`` row records a deleted message, thread or fact: kind, id, namespace, who,
when, why; no content. Memories keep their tombstone in their history, and the tombstones
written before this migration held what the memory said (``data={"content": ...}``): the
data step keeps only their kind, and removes the rest of those memories' history (an edit
event keeps the text it replaced). A deleted memory's history is its tombstone alone.
"""

from django.db import migrations, models
from django.utils import timezone

ENDS = ("deleted", "purged")
CHUNK = 500


def strip_tombstones(apps, schema_editor):
    event = apps.get_model("memories", "MemoryEvent")
    tombstones = event.objects.filter(event__in=ENDS).order_by("id")
    kept: dict[int, int] = {}  # memory id -> its (last) tombstone
    for row in tombstones.iterator(chunk_size=CHUNK):
        data = row.data if isinstance(row.data, dict) else {}
        clean = {"kind": data["kind"]} if isinstance(data.get("kind"), str) else {}
        if row.data != clean:
            event.objects.filter(pk=row.pk).update(data=clean)
        kept[row.memory_id] = row.pk
    memory_ids = sorted(kept)
    for start in range(0, len(memory_ids), CHUNK):
        chunk = memory_ids[start : start + CHUNK]
        event.objects.filter(memory_id__in=chunk).exclude(
            pk__in=[kept[memory_id] for memory_id in chunk]
        ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0027_fts_purge_deleted"),
    ]

    operations = [
        migrations.CreateModel(
            name="Deletion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[("message", "Message"), ("thread", "Thread"), ("fact", "Fact")],
                        max_length=16,
                    ),
                ),
                ("object_id", models.CharField(max_length=255)),
                ("namespace", models.CharField(max_length=255)),
                ("deleted_by", models.CharField(blank=True, max_length=255)),
                ("reason", models.TextField(blank=True)),
                ("deleted_at", models.DateTimeField(default=timezone.now)),
            ],
            options={
                "ordering": ["-deleted_at", "-id"],
                "indexes": [
                    models.Index(fields=["kind", "object_id"], name="deletion_kind_object_idx"),
                    models.Index(fields=["namespace"], name="deletion_ns_idx"),
                ],
            },
        ),
        migrations.RunPython(strip_tombstones, migrations.RunPython.noop),
    ]
