"""Files only the service's user can read: the data directory 0700, its files 0600.

The database, the queue, the secret key and their companions hold personal data (or the key
that signs sessions), so they are created private whatever the umask: ``os.open`` with
``O_CREAT | O_EXCL`` and a mode, then ``fchmod`` to exactly that mode (the umask can only
narrow a new file's mode; ``fchmod`` also undoes an odd umask that would leave it unwritable).
SQLite creates a database's ``-wal``, ``-shm`` and ``-journal`` with the database file's own
permission bits, so creating the database file 0600 before SQLite opens it makes them 0600 too.

Existing files are never changed here: `manage.py check` names each one that is wider
(spaceduck.ops.checks) and the ``chmod`` that fixes it.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
# What SQLite keeps beside a database file (and the backend's write lock, writelock.py).
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def make_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) with the directory itself 0700.

    A directory that already exists keeps its mode: `manage.py check` warns when it is wider.
    """
    if path.is_dir():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=PRIVATE_DIR)
    except FileExistsError:
        return  # another process made it first
    os.chmod(path, PRIVATE_DIR)


def create_private_file(path: str | os.PathLike[str]) -> bool:
    """Create an empty ``path`` 0600 unless it exists; True when this call created it.

    One ``open`` that fails at once when the file exists (the usual case), so it is cheap
    enough to run before every new database connection. Nor is anything created when it
    cannot be (no such directory, read-only): the program that opens it next reports that.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE)
    except OSError:  # FileExistsError, or the opener's own error to come
        return False
    try:
        os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)
    return True


def write_private_text(path: Path, text: str) -> bool:
    """Write ``text`` to a new 0600 file: never readable by others, never seen half-written.

    Written aside, then linked into place (``link`` fails when ``path`` exists, so of two
    processes starting at once one writes it and the other reads that). False, with nothing
    changed, when ``path`` exists already.
    """
    if path.exists():
        return False
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), PRIVATE_FILE)
            out.write(text)
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
    return True


def open_private_log(path: Path) -> BinaryIO:
    """``path`` opened for appending, created 0600 when new: a server's output kept in a file
    (its access lines name the paths people visit). An existing file keeps its mode."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
        os.fchmod(fd, PRIVATE_FILE)
    except FileExistsError:
        fd = os.open(path, flags)
    return os.fdopen(fd, "ab")


def sqlite_files(database: str | os.PathLike[str]) -> list[Path]:
    """A SQLite database file and the companions SQLite and the backend keep beside it."""
    name = os.fspath(database)
    return [Path(name), *(Path(name + suffix) for suffix in (*SQLITE_COMPANIONS, ".writelock"))]


def too_wide(path: Path) -> int | None:
    """The permission bits of ``path`` when others than its owner may use it, else None
    (also None when it does not exist)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None
    return mode if mode & 0o077 else None
