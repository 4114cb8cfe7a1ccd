"""The candidate queue in the order memories were learnt (created_at, id), newest first:
approving, rejecting and undoing leave an item in its place. Its keyset pages, across
namespaces and in one, walk these indexes instead of sorting every candidate."""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0035_conflict_decision_labels_lowercase"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(fields=["status", "created_at"], name="memory_status_created_idx"),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                fields=["namespace", "status", "created_at"], name="memory_ns_status_created_idx"
            ),
        ),
    ]
