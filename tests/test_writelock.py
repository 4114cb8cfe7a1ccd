"""The write lock that queues writers of one database file across threads and processes."""

from __future__ import annotations

import multiprocessing
import threading
import time
from pathlib import Path

import pytest

from spaceduck.core.db.backend import writelock


def _hold(database: str, ready: multiprocessing.synchronize.Event, seconds: float) -> None:
    fd = writelock.acquire(database, 5.0)
    ready.set()
    time.sleep(seconds)
    writelock.release(fd)


def _try(
    database: str, go: multiprocessing.synchronize.Event, answer: multiprocessing.queues.Queue
) -> None:
    go.wait(30)
    try:
        writelock.release(writelock.acquire(database, 0.2))
        answer.put("acquired")
    except TimeoutError as exc:
        answer.put(str(exc))


def test_a_writer_in_another_process_waits_and_gets_the_lock_once_it_is_free(
    tmp_path: Path,
) -> None:
    database = str(tmp_path / "db.sqlite3")
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold, args=(database, ready, 0.6))
    holder.start()
    assert ready.wait(30)
    with pytest.raises(TimeoutError, match="another process"):
        writelock.acquire(database, 0.1)
    started = time.monotonic()
    fd = writelock.acquire(database, 10.0)
    waited = time.monotonic() - started
    writelock.release(fd)
    holder.join(10)
    # Handed over when the holder let go (~0.5 s left), not on a long sleep schedule.
    assert 0.2 < waited < 2.0


def test_a_forked_child_does_not_share_its_parents_lock(tmp_path: Path) -> None:
    """gunicorn forks its workers: a descriptor inherited over fork() would share
    its flock with the parent, and both would think they hold the lock."""
    database = str(tmp_path / "db.sqlite3")
    writelock.release(writelock.acquire(database, 1.0))  # the descriptor exists before the fork
    ctx = multiprocessing.get_context("fork")
    go, answer = ctx.Event(), ctx.Queue()
    child = ctx.Process(target=_try, args=(database, go, answer))
    child.start()
    fd = writelock.acquire(database, 1.0)
    try:
        go.set()
        assert answer.get(timeout=30) == "another process is writing"
    finally:
        writelock.release(fd)
        child.join(10)


def test_threads_of_one_process_take_turns(tmp_path: Path) -> None:
    database = str(tmp_path / "db.sqlite3")
    inside = 0
    most = 0
    guard = threading.Lock()

    def write() -> None:
        nonlocal inside, most
        for _ in range(20):
            fd = writelock.acquire(database, 5.0)
            with guard:
                inside += 1
                most = max(most, inside)
            time.sleep(0.001)
            with guard:
                inside -= 1
            writelock.release(fd)

    threads = [threading.Thread(target=write) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert most == 1


def test_an_in_memory_database_takes_only_the_thread_lock() -> None:
    assert writelock.acquire(None, 1.0) is None
    writelock.release(None)
    assert writelock.acquire(None, 1.0) is None  # released: free again
    writelock.release(None)
