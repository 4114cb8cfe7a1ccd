"""PostgreSQL: each keyword-index lexeme's document frequency, kept by triggers.

The keyword list leaves out words too common to score cheaply (keyword_index: more
than MAX_MATCHED_DOCS documents). Counting a word's documents through the GIN index
reads its whole posting list: a GIN scan is a bitmap, built in full before LIMIT stops
anything, so at 1M memories in one namespace a common word cost a walk over up to a
million postings per query. ``memories_fts_lexemes`` holds every lexeme's number of
documents (a lexeme carries its namespace's key, so this is the namespace's own
frequency), kept by statement triggers on ``memories_fts`` from their transition
tables (one aggregated upsert per statement, whatever writes the index), so
``keyword_pg.document_count`` reads a word's frequency with one primary-key look-up.
A lexeme whose documents are all gone is deleted.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import postgresql_only

FORWARD = [
    "CREATE TABLE memories_fts_lexemes (lexeme text PRIMARY KEY, documents bigint NOT NULL)",
    """
    CREATE FUNCTION memories_fts_lexemes_count() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'TRUNCATE' THEN
            TRUNCATE memories_fts_lexemes;
            RETURN NULL;
        END IF;
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE memories_fts_lexemes AS t SET documents = t.documents - g.n
            FROM (SELECT u.lexeme, count(*) AS n FROM old_rows AS o
                  CROSS JOIN LATERAL unnest(o.terms) AS u GROUP BY u.lexeme) AS g
            WHERE t.lexeme = g.lexeme;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO memories_fts_lexemes AS t (lexeme, documents)
            SELECT u.lexeme, count(*) FROM new_rows AS o
            CROSS JOIN LATERAL unnest(o.terms) AS u GROUP BY u.lexeme ORDER BY u.lexeme
            ON CONFLICT (lexeme) DO UPDATE SET documents = t.documents + excluded.documents;
        END IF;
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            DELETE FROM memories_fts_lexemes AS t USING
                (SELECT DISTINCT u.lexeme FROM old_rows AS o
                 CROSS JOIN LATERAL unnest(o.terms) AS u) AS g
            WHERE t.lexeme = g.lexeme AND t.documents <= 0;
        END IF;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER memories_fts_lexemes_ai AFTER INSERT ON memories_fts
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION memories_fts_lexemes_count()
    """,
    """
    CREATE TRIGGER memories_fts_lexemes_ad AFTER DELETE ON memories_fts
        REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION memories_fts_lexemes_count()
    """,
    """
    CREATE TRIGGER memories_fts_lexemes_au AFTER UPDATE ON memories_fts
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION memories_fts_lexemes_count()
    """,
    """
    CREATE TRIGGER memories_fts_lexemes_at AFTER TRUNCATE ON memories_fts
        FOR EACH STATEMENT EXECUTE FUNCTION memories_fts_lexemes_count()
    """,
    """
    INSERT INTO memories_fts_lexemes (lexeme, documents)
    SELECT u.lexeme, count(*) FROM memories_fts AS f
    CROSS JOIN LATERAL unnest(f.terms) AS u GROUP BY u.lexeme
    """,
]
REVERSE = [
    "DROP TRIGGER IF EXISTS memories_fts_lexemes_at ON memories_fts",
    "DROP TRIGGER IF EXISTS memories_fts_lexemes_au ON memories_fts",
    "DROP TRIGGER IF EXISTS memories_fts_lexemes_ad ON memories_fts",
    "DROP TRIGGER IF EXISTS memories_fts_lexemes_ai ON memories_fts",
    "DROP FUNCTION IF EXISTS memories_fts_lexemes_count()",
    "DROP TABLE IF EXISTS memories_fts_lexemes",
]


class Migration(migrations.Migration):
    dependencies = [("memories", "0024_memory_event_namespace_index")]

    operations = [postgresql_only(migrations.RunSQL(FORWARD, reverse_sql=REVERSE))]
