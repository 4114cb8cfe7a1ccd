"""Index memories by word stems: rebuild the keyword index with the new ``spaceduck_terms``.

``spaceduck.core.fts.namespaced_terms`` (the SQL function ``spaceduck_terms`` the
triggers call) now stores each word's English stem (``spaceduck.core.stemming``), and a
recall query looks its words up by the same stems. Rows indexed before hold whole
words, which a stemmed query no longer finds ("dogs" is looked up as "dog"), so
every memory is indexed again. The table and triggers (0009's) do not change.

Going back leaves the index as it is: it can only be rebuilt with the code that
runs the migration, which stems. Code from before this migration needs
``keyword_index.rebuild()`` run with it.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import sqlite_only

# 0009's indexed columns, fixed here: a later layout must not change this step.
COLUMNS = ("title", "content", "summary", "tags", "context")

_TERMS = ", ".join(f"spaceduck_terms(namespace, {column})" for column in COLUMNS)

REBUILD = [
    "INSERT INTO memories_fts(memories_fts) VALUES ('delete-all')",
    f"INSERT INTO memories_fts(rowid, {', '.join(COLUMNS)}) "
    f"SELECT id, {_TERMS} FROM memories_memory",
]


class Migration(migrations.Migration):
    dependencies = [("memories", "0014_namespace_counts")]

    operations = [sqlite_only(migrations.RunSQL(REBUILD, reverse_sql=migrations.RunSQL.noop))]
