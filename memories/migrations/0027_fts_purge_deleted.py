"""Deleted memories' terms out of the keyword index (SQLite).

The index is contentless: a delete marks the document and its terms stay in the index's
segments until they are merged. Since this release every delete and erase merges them
(``memories.store.keyword_index.purge_deleted``, run by ``spaceduck.core.db.scrub``);
this merges once what earlier deletes left behind. The pages that held them are zeroed as
they are freed only on connections with ``secure_delete`` on; free pages left by earlier
deletes go with ``python manage.py vacuum`` (README, Privacy).
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import sqlite_only

OPTIMIZE = "INSERT INTO memories_fts(memories_fts) VALUES ('optimize')"


class Migration(migrations.Migration):
    dependencies = [("memories", "0026_postgresql_hnsw_on_demand")]

    operations = [sqlite_only(migrations.RunSQL(OPTIMIZE, migrations.RunSQL.noop))]
