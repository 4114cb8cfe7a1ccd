"""Where a piece of text is still stored: every table of the database, every text column.

``tables_holding(text)`` answers {table: rows holding it} by a case-insensitive substring
match over every table the database has (not only the models': triggers' tables, the
admin's log, sessions, ...), on SQLite and PostgreSQL. It reads rows, not files: on SQLite
the FTS5 and vec0 virtual tables and their shadow tables store binary segments (a term
inside a b-tree page is not a substring of any column), so they are left to the raw-file
scan of the data directory; on PostgreSQL every text, character, JSON and tsvector column
is read (a tsvector's lexemes are the words it indexes).
"""

from __future__ import annotations

from django.db import connection

# PostgreSQL column types that hold text a person wrote (tsvector: an index's words).
_PG_TEXT_TYPES = ("text", "character varying", "character", "json", "jsonb", "tsvector")


def tables_holding(text: str) -> dict[str, int]:
    """{table: number of rows with ``text`` in one of its text columns}, the tables that
    hold none left out. Case-insensitive (ASCII case on SQLite, as its LIKE)."""
    found: dict[str, int] = {}
    pattern = "%" + _escaped(text) + "%"
    with connection.cursor() as cursor:
        for table, columns in _text_columns(cursor).items():
            if not columns:
                continue
            quote = connection.ops.quote_name
            test = " OR ".join(_like(quote(column)) for column in columns)
            cursor.execute(
                f"SELECT count(*) FROM {quote(table)} WHERE {test}", [pattern] * len(columns)
            )
            count = cursor.fetchone()[0]
            if count:
                found[table] = count
    return found


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _like(column: str) -> str:
    if connection.vendor == "postgresql":
        return f"CAST({column} AS text) ILIKE %s ESCAPE '\\'"
    return f"CAST({column} AS TEXT) LIKE %s ESCAPE '\\'"


def _text_columns(cursor: object) -> dict[str, list[str]]:
    if connection.vendor == "postgresql":
        return _pg_text_columns(cursor)
    return _sqlite_columns(cursor)


def _pg_text_columns(cursor: object) -> dict[str, list[str]]:
    tables = set(connection.introspection.table_names(cursor))
    cursor.execute(  # type: ignore[attr-defined]
        "SELECT table_name, column_name, data_type, udt_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
    )
    columns: dict[str, list[str]] = {}
    for table, column, data_type, udt_name in cursor.fetchall():  # type: ignore[attr-defined]
        if table in tables and (data_type in _PG_TEXT_TYPES or udt_name in _PG_TEXT_TYPES):
            columns.setdefault(table, []).append(column)
    return columns


def _sqlite_columns(cursor: object) -> dict[str, list[str]]:
    """Every column of every ordinary table (SQLite's types are only affinities: a JSON or
    text value may sit in any column), except the virtual tables and their shadows."""
    cursor.execute(  # type: ignore[attr-defined]
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
    )
    virtual = [row[0] for row in cursor.fetchall()]  # type: ignore[attr-defined]
    columns: dict[str, list[str]] = {}
    for table in connection.introspection.table_names(cursor):
        if table in virtual or any(table.startswith(f"{name}_") for name in virtual):
            continue
        cursor.execute(f"PRAGMA table_info({connection.ops.quote_name(table)})")  # type: ignore[attr-defined]
        columns[table] = [row[1] for row in cursor.fetchall()]  # type: ignore[attr-defined]
    return columns
