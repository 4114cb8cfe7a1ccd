"""The conflict decisions' labels all lowercase ("replace" was "Replace"): history reasons
quote them ("undo of conflict 4: replace", "keep both", "edit into one"). Choices only:
nothing changes in the database."""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0034_claim_index_in_write_order"),
    ]

    operations = [
        migrations.AlterField(
            model_name="conflict",
            name="resolution",
            field=models.CharField(
                blank=True,
                choices=[
                    ("replace", "replace"),
                    ("keep_both", "keep both"),
                    ("merge", "edit into one"),
                    ("settled", "settled elsewhere"),
                ],
                max_length=16,
            ),
        ),
    ]
