"""One write transaction at a time on a database file, queued outside SQLite.

SQLite makes a blocked ``BEGIN IMMEDIATE`` retry on its own sleep schedule
(1, 2, 5, 10 ... 100 ms), so a writer that arrives while another commits waits
far longer than the transaction ahead of it takes: under `bench load` (8
clients, two web processes and the worker) that put write p95 at 150-180 ms
while the writes themselves take a few ms. Here writers queue on a lock that
hands over as soon as it is free: a thread lock within the process, then an
``flock`` on ``<database>.writelock`` between processes (polled every
0.5-2 ms, because ``flock`` has no timeout). SQLite's own lock stays the
safety net for anyone else who opens the file (the sqlite3 shell, backups).
"""

from __future__ import annotations

import fcntl
import os
import threading
import time

_THREADS = threading.Lock()
_files: dict[str, tuple[int, int]] = {}  # lock path -> (pid that opened it, fd)
_files_guard = threading.Lock()


def _fd(path: str) -> int:
    # A descriptor inherited over fork() shares its flock with the parent, so
    # each process opens its own.
    with _files_guard:
        pid, fd = _files.get(path, (-1, -1))
        if pid != os.getpid():
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            _files[path] = (os.getpid(), fd)
        return fd


def acquire(database: str | None, timeout: float) -> int | None:
    """Take the write lock; returns the locked descriptor (None: thread lock only).

    Raises TimeoutError when another writer holds it for ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    if not _THREADS.acquire(timeout=timeout):
        raise TimeoutError("another thread of this process is writing")
    if database is None:
        return None
    try:
        fd = _fd(f"{database}.writelock")
        pause = 0.0005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError("another process is writing") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.002)
    except BaseException:
        _THREADS.release()
        raise


def release(fd: int | None) -> None:
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        _THREADS.release()
