"""The literal-query builder: no FTS syntax reaches MATCH, nothing crashes."""

from __future__ import annotations

import pytest
from django.db import connection

from spaceduck.core.fts import literal_terms, match_expression

HOSTILE = [
    "NOT cafe",
    "cafe NEAR lait",
    "caf*",
    "body:cafe",
    '"unbalanced',
    "(cafe",
    "{cafe}",
    "^cafe",
    "-cafe",
    "cafe -lait",
    "a AND OR NOT b",
    "\x00cafe",
    "cafe\ud800",
    "''",
    "*",
    "NEAR(cafe lait, 2)",
    ":",
    '""',
    "AND",
    "OR",
    "NOT",
]


pytestmark = pytest.mark.sqlite_only


def test_terms_are_quoted_and_joined() -> None:
    assert match_expression("restart the worker") == '"restart" AND "the" AND "worker"'
    assert match_expression('say "hi"', operator="OR") == '"say" OR """hi"""'


def test_nothing_searchable_gives_none() -> None:
    assert match_expression("   ") is None
    assert match_expression("- ^ * :") is None
    assert literal_terms("\x00 \ud800") == []


@pytest.mark.django_db
@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_run_as_literal_text(query: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS probe_fts USING fts5("
            "body, tokenize='unicode61 remove_diacritics 2')"
        )
        cursor.execute("INSERT INTO probe_fts(body) VALUES ('café au lait and near not')")
        expression = match_expression(query)
        if expression is not None:
            cursor.execute("SELECT rowid FROM probe_fts WHERE probe_fts MATCH %s", [expression])
            cursor.fetchall()
