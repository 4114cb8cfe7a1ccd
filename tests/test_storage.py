"""The SQLite set-up: sqlite-vec everywhere, WAL, busy timeout, IMMEDIATE transactions."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from spaceduck.core.db.backend.base import DatabaseWrapper

pytestmark = pytest.mark.sqlite_only


def test_sqlite_vec_is_loaded_in_the_test_database(db: None) -> None:
    with connection.cursor() as cursor:
        version = cursor.execute("SELECT vec_version()").fetchone()[0]
        distance = cursor.execute(
            "SELECT vec_distance_cosine(vec_f32('[1, 0]'), vec_f32('[1, 0]'))"
        ).fetchone()[0]
    assert version == "v0.1.9"
    assert distance == pytest.approx(0.0)


def test_a_file_database_uses_wal_a_busy_timeout_and_immediate_transactions(
    db: None, tmp_path: Path
) -> None:
    settings_dict = {**settings.DATABASES["default"], "NAME": str(tmp_path / "db.sqlite3")}
    wrapper = DatabaseWrapper(settings_dict, alias="probe")
    try:
        with wrapper.cursor() as cursor:
            assert cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert cursor.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
            assert cursor.execute("SELECT vec_version()").fetchone()[0] == "v0.1.9"
        assert wrapper.transaction_mode == "IMMEDIATE"
    finally:
        wrapper.close()


def test_fts5_is_compiled_in(db: None) -> None:
    with connection.cursor() as cursor:
        options = {row[0] for row in cursor.execute("PRAGMA compile_options").fetchall()}
    assert "ENABLE_FTS5" in options
