"""`manage.py backup PATH`: SQLite's online backup, consistent while the service writes."""

from __future__ import annotations

import itertools
import threading
import time
from io import StringIO
from pathlib import Path

import pytest
import sqlean.dbapi2 as sqlean
from django.core.management import CommandError, call_command
from django.db import connection

from memories.models import Memory
from memories.write.services import memory_create
from notes.services import enable_note_search, save_note
from spaceduck.core.db.backend.base import load_sqlite_vec
from spaceduck.ops import backup


def open_copy(path: Path) -> sqlean.Connection:
    conn = sqlean.connect(str(path))
    load_sqlite_vec(conn)  # memories_vec is a vec0 table
    return conn


def one(conn: sqlean.Connection, sql: str) -> int:
    return int(conn.execute(sql).fetchone()[0])


def one_django(sql: str) -> int:
    with connection.cursor() as cursor:
        return int(cursor.execute(sql).fetchone()[0])


def consistency(conn: sqlean.Connection) -> dict[str, int]:
    """What must hold in any committed state: one vector, one keyword row, one event per memory."""
    return {
        "without_vector": one(
            conn,
            "SELECT count(*) FROM memories_memory "
            "WHERE id NOT IN (SELECT memory_id FROM memories_vec)",
        ),
        "orphan_vectors": one(
            conn,
            "SELECT count(*) FROM memories_vec WHERE memory_id NOT IN "
            "(SELECT id FROM memories_memory)",
        ),
        "keyword_rows": one(conn, "SELECT count(*) FROM memories_fts_docsize")
        - one(conn, "SELECT count(*) FROM memories_memory"),
        "without_history": one(
            conn,
            "SELECT count(*) FROM memories_memory WHERE id NOT IN "
            "(SELECT memory_id FROM memories_memoryevent WHERE event = 'created')",
        ),
    }


@pytest.mark.sqlite_only  # PostgreSQL: the command refuses, see the test below
@pytest.mark.django_db(transaction=True)
def test_backup_while_a_writer_thread_inserts_memories(tmp_path: Path) -> None:
    # Earlier transactional tests end with a flush that empties notes_note after
    # NoteSearchKind, so their notes' index rows stay behind (notes are never deleted
    # in the service). Start from an index that matches the (empty) notes table.
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO notes_fts(notes_fts) VALUES ('rebuild')")
    assert one_django("SELECT count(*) FROM notes_fts_docsize") == 0
    for i in range(200):
        memory_create(
            namespace=f"user:u{i % 5}",
            kind="fact",
            content=f"Seed memory {i} about the {['sea', 'hills', 'city'][i % 3]}",
            actor="t",
        )
    enable_note_search("user")
    for i in range(50):
        save_note(f"user:u{i % 5}", f"A searchable note number {i}", id=f"n{i}")

    stop = threading.Event()
    written: list[float] = []
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            i = 0
            while not stop.is_set():
                memory_create(
                    namespace=f"user:u{i % 5}",
                    kind="fact",
                    content=f"Written during the backup {i}",
                    actor="writer",
                )
                save_note(f"user:u{i % 5}", f"Note written during the backup {i}")
                written.append(time.monotonic())
                i += 1
        except BaseException as exc:  # reported by the test below
            errors.append(exc)
        finally:
            connection.close()

    steps: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        steps.append((done, total))
        time.sleep(0.002)  # a slow disk: give the writer time to commit between steps

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while len(written) < 20:  # the writer is running
            time.sleep(0.01)
        started = time.monotonic()
        result = backup.backup(tmp_path / "copy.sqlite3", pages_per_step=4, progress=progress)
        finished = time.monotonic()
        during = sum(1 for t in written if started <= t <= finished)
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not errors, errors
    assert during > 0, "the writer was blocked during the backup"
    assert len(steps) > 10  # many small steps, never restarted from the first page
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(steps))
    assert steps[-1][0] == steps[-1][1] == result.pages

    copy = result.path
    assert not Path(f"{copy}-wal").exists()  # one self-contained file
    assert backup.verify(copy) == {
        "integrity_check": "ok",
        "memories_fts": "ok",
        "notes_fts": "ok",
    }
    conn = open_copy(copy)
    try:
        assert consistency(conn) == {
            "without_vector": 0,
            "orphan_vectors": 0,
            "keyword_rows": 0,
            "without_history": 0,
        }
        in_copy = one(conn, "SELECT count(*) FROM memories_memory")
        assert 200 < in_copy < Memory.objects.count()  # a snapshot taken mid-stream
        notes = one(conn, "SELECT count(*) FROM notes_note")
        assert one(conn, "SELECT count(*) FROM notes_fts_docsize") == notes
        assert one(conn, "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH 'searchable'") == 50
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    finally:
        conn.close()


@pytest.mark.sqlite_only
@pytest.mark.django_db
def test_the_command_refuses_to_overwrite_and_verifies(tmp_path: Path) -> None:
    memory_create(namespace="user:alice", kind="fact", content="Alice likes kites.", actor="t")
    target = tmp_path / "backup.sqlite3"
    out = StringIO()
    call_command("backup", str(target), "--no-progress", "--verify", stdout=out)
    assert "Backed up" in out.getvalue()
    assert "Verified: integrity_check, memories_fts, notes_fts ok." in out.getvalue()
    first = target.stat().st_mtime_ns

    with pytest.raises(CommandError, match="exists; pass --force"):
        call_command("backup", str(target), "--no-progress", stdout=StringIO())
    assert target.stat().st_mtime_ns == first
    call_command("backup", str(target), "--no-progress", "--force", stdout=StringIO())
    with pytest.raises(CommandError, match="no directory"):
        call_command("backup", str(tmp_path / "nope" / "b.sqlite3"), "--no-progress")
    with pytest.raises(CommandError, match="the database itself"):
        call_command("backup", str(backup.source_path()), "--no-progress", "--force")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["backup.sqlite3"]  # no temp files


@pytest.mark.sqlite_only
@pytest.mark.django_db(transaction=True)  # the copy reads committed rows only
def test_verify_reports_a_damaged_keyword_index(tmp_path: Path) -> None:
    memory_create(namespace="user:alice", kind="fact", content="Alice likes kites.", actor="t")
    copy = backup.backup(tmp_path / "copy.sqlite3").path
    conn = sqlean.connect(str(copy))
    conn.execute("DELETE FROM memories_fts_data WHERE id > 10")  # damage the index itself
    conn.commit()
    conn.close()
    checks = backup.verify(copy)
    assert checks["memories_fts"] != "ok"


@pytest.mark.django_db
def test_on_postgresql_the_command_points_to_its_own_tools(tmp_path: Path) -> None:
    if connection.vendor == "sqlite":
        pytest.skip("the SQLite copy is tested above")
    with pytest.raises(CommandError, match="pg_dump"):
        call_command("backup", str(tmp_path / "b"), "--no-progress", stdout=StringIO())
    assert not (tmp_path / "b").exists()
