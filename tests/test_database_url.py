"""SPACEDUCK_DATABASE_URL: unset keeps the SQLite file, a postgres:// URL selects PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from spaceduck.core.db.urls import POSTGRES_ENGINE, postgres_database, with_database
from tests.postgres import server_url
from tests.processes import manage, service_env


def test_a_postgres_url_becomes_the_database_settings() -> None:
    config = postgres_database(
        "postgres://agent:s3cret@db.internal:5433/spaceduck?sslmode=require", conn_max_age=60
    )
    assert config["ENGINE"] == POSTGRES_ENGINE
    assert (config["HOST"], config["PORT"], config["NAME"]) == ("db.internal", 5433, "spaceduck")
    assert (config["USER"], config["PASSWORD"]) == ("agent", "s3cret")
    assert config["OPTIONS"] == {"sslmode": "require"}
    assert (config["CONN_MAX_AGE"], config["CONN_HEALTH_CHECKS"]) == (60, True)


def test_a_socket_directory_is_the_host() -> None:
    config = postgres_database("postgresql://postgres:@/memory?host=/run/pg", conn_max_age=0)
    assert (config["HOST"], config["NAME"], config["OPTIONS"]) == ("/run/pg", "memory", {})


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgres://u:p@db:5432/main", "postgres://u:p@db:5432/other"),
        (
            "postgresql://postgres:@/postgres?host=/tmp/pg",
            "postgresql://postgres:@/other?host=/tmp/pg",
        ),
        ("postgres://db/main?sslmode=require&x=1", "postgres://db/other?sslmode=require&x=1"),
    ],
)
def test_another_database_on_the_same_server(url: str, expected: str) -> None:
    assert with_database(url, "other") == expected


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://u:p@localhost/db", "must be a postgres:// or postgresql:// URL"),
        ("sqlite:///var/spaceduck.sqlite3", "must be a postgres:// or postgresql:// URL"),
        ("postgres://u:p@localhost", "names no database"),
        ("not a url", "SPACEDUCK_DATABASE_URL"),
    ],
)
def test_a_url_that_is_not_postgres_is_refused_with_its_reason(url: str, message: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=message):
        postgres_database(url, conn_max_age=0)


@pytest.mark.slow
def test_the_migrations_run_on_postgresql(tmp_path: Path) -> None:
    """One migration history for both databases: SQLite's search objects are skipped there."""
    url = server_url()
    env = service_env(tmp_path, SPACEDUCK_DATABASE_URL=url)
    done = manage(env, "migrate", "--no-input")
    assert done.returncode == 0, done.stderr
    assert "System check identified" not in done.stderr  # nothing to warn about
    shown = manage(env, "showmigrations", "--plan")
    assert shown.returncode == 0, shown.stderr
    assert "[ ]" not in shown.stdout  # every migration applied
    assert "[X]  memories.0019_postgresql_keyword_index" in shown.stdout
    back = manage(env, "migrate", "memories", "0001", "--no-input")
    assert back.returncode == 0, back.stderr


@pytest.mark.parametrize(
    ("collation", "warned"),
    [("C", False), ("C.UTF-8", False), ("POSIX", False), ("en_US.UTF-8", True), ("de_DE", True)],
)
def test_a_locale_collation_is_named_as_ordering_unlike_sqlite(
    collation: str, warned: bool
) -> None:
    from spaceduck.ops.checks import collation_problem

    problem = collation_problem(collation)
    assert (problem is not None) == warned
    if warned:
        assert collation in problem  # type: ignore[operator]


def test_the_test_database_sorts_by_bytes(db: None) -> None:
    from django.db import connection

    from spaceduck.ops.checks import check_database_collation

    assert check_database_collation() == []  # SQLite, or the test server's C.UTF-8
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            ordered = cursor.execute(
                "SELECT x FROM unnest(ARRAY['b', 'B', 'a', 'A']) AS t(x) ORDER BY x"
            ).fetchall()
        assert [row[0] for row in ordered] == ["A", "B", "a", "b"]  # as SQLite orders them
