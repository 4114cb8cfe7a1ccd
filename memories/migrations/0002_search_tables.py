"""Full-text (FTS5) and vector (sqlite-vec vec0) indexes for memories.

The FTS table is external-content: it stores only the index, the text lives in
memories_memory, and the triggers keep both in step on insert/update/delete.
The vec0 table is created for the configured embedder (its dimension is fixed
at creation) and the embedder's fingerprint is recorded beside it.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import sqlite_only

FTS_SQL = [
    """
    CREATE VIRTUAL TABLE memories_fts USING fts5(
        title, content, summary, tags,
        content='memories_memory', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    )
    """,
    """
    CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories_memory BEGIN
        INSERT INTO memories_fts(rowid, title, content, summary, tags)
        VALUES (new.id, new.title, new.content, new.summary, new.tags);
    END
    """,
    """
    CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories_memory BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, title, content, summary, tags)
        VALUES ('delete', old.id, old.title, old.content, old.summary, old.tags);
    END
    """,
    """
    CREATE TRIGGER memories_fts_au AFTER UPDATE OF title, content, summary, tags
    ON memories_memory BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, title, content, summary, tags)
        VALUES ('delete', old.id, old.title, old.content, old.summary, old.tags);
        INSERT INTO memories_fts(rowid, title, content, summary, tags)
        VALUES (new.id, new.title, new.content, new.summary, new.tags);
    END
    """,
]
FTS_REVERSE_SQL = [
    "DROP TRIGGER IF EXISTS memories_fts_au",
    "DROP TRIGGER IF EXISTS memories_fts_ad",
    "DROP TRIGGER IF EXISTS memories_fts_ai",
    "DROP TABLE IF EXISTS memories_fts",
]
VEC_TRIGGER_SQL = """
    CREATE TRIGGER memories_vec_ad AFTER DELETE ON memories_memory BEGIN
        DELETE FROM memories_vec WHERE memory_id = old.id;
    END
"""


# Copied, not imported (a migration must not depend on a module that may move): the vec0
# table as memories.store.vector_index.create_table makes it, and the index's name.
INDEX_NAME = "memories"
VEC_CREATE_SQL = (
    "CREATE VIRTUAL TABLE memories_vec USING vec0("
    "memory_id integer primary key, namespace text partition key, "
    "embedding float[{dims}] distance_metric=cosine, chunk_size=8)"
)


def create_vector_table(apps, schema_editor):
    from spaceduck.core.providers import get_embedder

    fingerprint = get_embedder().fingerprint
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(VEC_CREATE_SQL.format(dims=int(fingerprint.dimensions)))
        cursor.execute(VEC_TRIGGER_SQL)
    apps.get_model("spaceduck", "VectorIndexState").objects.update_or_create(
        name=INDEX_NAME,
        defaults={
            "provider": fingerprint.provider,
            "model": fingerprint.model,
            "dimensions": fingerprint.dimensions,
        },
    )


def drop_vector_table(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER IF EXISTS memories_vec_ad")
        cursor.execute("DROP TABLE IF EXISTS memories_vec")
    apps.get_model("spaceduck", "VectorIndexState").objects.filter(name=INDEX_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0001_initial"),
        ("spaceduck", "0001_initial"),
    ]

    operations = [
        sqlite_only(
            migrations.RunSQL(FTS_SQL, reverse_sql=FTS_REVERSE_SQL),
            migrations.RunPython(create_vector_table, drop_vector_table),
        ),
    ]
