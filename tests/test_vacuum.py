"""``manage.py vacuum``: the database rebuilt without free pages or dead rows (issue 37)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection

from memories.write.services import memory_create, memory_delete

pytestmark = pytest.mark.django_db(transaction=True)


def test_vacuum_purges_the_keyword_index_and_rebuilds_the_database() -> None:
    memory = memory_create(namespace="user:v", kind="fact", content="Vacuum me.", actor="t")
    memory_delete(memory=memory, actor="t")
    out = io.StringIO()
    call_command("vacuum", stdout=out)
    lines = out.getvalue().splitlines()
    assert "purged: memories.store.keyword_index.purge_deleted" in lines
    assert "VACUUM" in lines
    if connection.vendor == "sqlite":
        assert "WAL checkpointed" in lines
        with connection.cursor() as cursor:
            assert cursor.execute("PRAGMA freelist_count").fetchone()[0] == 0
    assert lines[-1] == "Vacuumed."


def test_vacuum_full_on_postgresql_and_plain_vacuum_on_sqlite() -> None:
    out = io.StringIO()
    call_command("vacuum", "--full", stdout=out)
    expected = "VACUUM FULL" if connection.vendor == "postgresql" else "VACUUM"
    assert expected in out.getvalue().splitlines()
