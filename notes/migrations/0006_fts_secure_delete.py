"""A deleted or edited note's old words out of the notes' keyword index (SQLite).

``notes_fts`` is an external-content FTS5 index: its triggers delete a note's terms with
the 'delete' command, which only records a delete marker unless the index's
``secure-delete`` option is on (SQLite 3.42+). On, the terms are removed from the index
there and then. ``optimize`` applies the markers earlier deletes left.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import sqlite_only

SECURE = "INSERT INTO notes_fts(notes_fts, rank) VALUES ('secure-delete', 1)"
OPTIMIZE = "INSERT INTO notes_fts(notes_fts) VALUES ('optimize')"
INSECURE = "INSERT INTO notes_fts(notes_fts, rank) VALUES ('secure-delete', 0)"


class Migration(migrations.Migration):
    dependencies = [("notes", "0005_postgresql_fold_unicode")]

    operations = [
        sqlite_only(
            migrations.RunSQL(SECURE, INSECURE),
            migrations.RunSQL(OPTIMIZE, migrations.RunSQL.noop),
        )
    ]
