"""An online copy of the database file (``manage.py backup PATH``).

SQLite's backup API copies the database page by page. Run naively next to a
writer it never finishes: every commit by another connection restarts the copy
from page one. So the copy runs inside one read transaction on the source
connection: in WAL mode (the backend always sets it) a reader sees one snapshot
and never blocks writers, and the backup steps read that snapshot, so the copy
is the database as of one commit, however long it takes, with no restart. The
price: the WAL cannot be checkpointed past that snapshot while the copy runs,
so it grows by whatever the service writes meanwhile.

The copy is written to a temporary file beside the target, switched to the
rollback journal (one self-contained file: no ``-wal`` to carry along; the
backend turns WAL on again when it opens it), then renamed into place, so PATH
is either absent or a complete copy.

The huey queue file (``spaceduck.huey.sqlite3``) is not copied: every queued
extraction is an ``Extraction`` row in the database, which the worker's
recovery queues again, and the periodic tasks are re-created at start.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlean.dbapi2 as Database
from django.db import connection

from spaceduck.core.db.backend.base import load_sqlite_vec

PAGES_PER_STEP = 1024  # 4 MB with 4 KB pages: a progress update every few milliseconds
# The FTS5 tables and the command that checks each one's internal consistency
# (not against notes_note: only the notes of search-enabled kinds are indexed).
FTS_CHECKS = {
    "memories_fts": "INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')",
    "notes_fts": "INSERT INTO notes_fts(notes_fts) VALUES ('integrity-check')",
}


class BackupError(Exception):
    pass


@dataclass(frozen=True)
class BackupResult:
    path: Path
    pages: int
    bytes: int


# This command copies a SQLite file; a PostgreSQL server has its own tools, which also
# cover what a server needs (point-in-time recovery, replicas).
NOT_SQLITE = (
    "backup copies the SQLite database file; on PostgreSQL use its own tools "
    "(pg_dump --format=custom, or pg_basebackup with WAL archiving), or "
    "python manage.py export --tokens for a file this service can import anywhere"
)


def source_path() -> Path:
    """The database file the service uses (the test database in tests)."""
    return Path(str(connection.settings_dict["NAME"]))


def backup(
    target: str | os.PathLike[str],
    *,
    force: bool = False,
    pages_per_step: int = PAGES_PER_STEP,
    progress: Callable[[int, int], object] | None = None,
    source: str | os.PathLike[str] | None = None,
) -> BackupResult:
    """Copy the database to ``target``, consistent while the service writes.

    ``progress(done_pages, total_pages)`` is called after every step. An
    existing ``target`` is refused unless ``force``.
    """
    if source is None and connection.vendor != "sqlite":
        raise BackupError(NOT_SQLITE)
    src_path = Path(source) if source is not None else source_path()
    dest = Path(target)
    if not src_path.is_file():
        raise BackupError(f"no database file at {src_path}")
    if dest.exists() and dest.resolve() == src_path.resolve():
        raise BackupError("the target is the database itself")
    if dest.exists() and not force:
        raise BackupError(f"{dest} exists; pass --force to replace it")
    if dest.exists() and not dest.is_file():
        raise BackupError(f"{dest} is not a file")
    if not dest.parent.is_dir():
        raise BackupError(f"no directory {dest.parent}")
    timeout = float(connection.settings_dict.get("OPTIONS", {}).get("timeout", 20))

    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        pages = _copy(src_path, tmp, timeout, pages_per_step, progress)
        _fsync(tmp)
        os.replace(tmp, dest)
        _fsync_dir(dest.parent)
    except BaseException:
        for leftover in (tmp, Path(f"{tmp}-journal"), Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
        raise
    return BackupResult(path=dest, pages=pages, bytes=dest.stat().st_size)


def _copy(
    src_path: Path,
    tmp: Path,
    timeout: float,
    pages_per_step: int,
    progress: Callable[[int, int], object] | None,
) -> int:
    src = Database.connect(str(src_path), timeout=timeout, isolation_level=None)
    dst = Database.connect(str(tmp), timeout=timeout, isolation_level=None)
    total = 0
    try:
        # One snapshot for the whole copy (see the module docstring). BEGIN is
        # deferred: the first read starts the read transaction.
        src.execute("BEGIN")
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()

        def step(status: int, remaining: int, pages: int) -> None:
            nonlocal total
            total = pages
            if progress is not None:
                progress(pages - remaining, pages)

        src.backup(dst, pages=max(1, pages_per_step), progress=step)
        src.execute("ROLLBACK")
        # A single self-contained file; the service's backend switches WAL back on.
        dst.execute("PRAGMA journal_mode=DELETE").fetchone()
    finally:
        dst.close()
        src.close()
    if Path(f"{tmp}-wal").exists():  # pragma: no cover - journal_mode=DELETE removes it
        raise BackupError("the copy still has a write-ahead log; not renaming it into place")
    return total


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - some platforms cannot open directories
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def verify(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Open a copy and check it: ``PRAGMA integrity_check`` and each FTS index.

    Returns ``{"integrity_check": "ok", "memories_fts": "ok", ...}``; any other
    value is the error SQLite reported. Nothing is written (the FTS checks are
    INSERT commands, so the file is opened read-write, but they change nothing).
    """
    if not Path(path).is_file():
        raise BackupError(f"no database file at {path}")
    conn = Database.connect(str(path), isolation_level=None)
    try:
        load_sqlite_vec(conn)
        rows = conn.execute("PRAGMA integrity_check").fetchall()
        result: dict[str, Any] = {"integrity_check": "; ".join(str(r[0]) for r in rows)}
        for table, check in FTS_CHECKS.items():
            exists = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [table]
            ).fetchone()
            if exists is None:
                continue
            try:
                conn.execute(check)
                result[table] = "ok"
            except Database.Error as exc:
                result[table] = str(exc)
    finally:
        conn.close()
    return result
