"""The extraction log's newest-first order (created_at, id) from an index, not a sort."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0012_reembed_job"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="extraction",
            index=models.Index(fields=["created_at"], name="extraction_created_idx"),
        ),
    ]
