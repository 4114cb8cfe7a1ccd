"""The task queue as the apps' lower layers see it, and huey's SQLite queue.

``enqueue(name, *args)`` runs or queues the task an app registered under ``name``
(``@queued(name)`` in its ``tasks.py``, imported when Django loads the app:
``AppConfig.ready``). The write path and the extraction log enqueue work this way
without importing ``tasks.py``, which imports them (no circle, no upward import).

huey's SQLite queue, committed the way the main database is:

huey opens its SQLite file with ``synchronous=FULL``: an fsync of the WAL on
every enqueue and every dequeue, paid inside a message's POST. ``NORMAL`` (as
the main database) keeps the queue consistent through any crash and loses at
most the last commits on power loss. Those are recovered anyway: a queued
Extraction with no task in the queue is re-enqueued by the worker
(memories.write.recovery).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from huey.storage import SqliteStorage

from spaceduck.core.private_files import create_private_file

T = TypeVar("T", bound=Callable[..., Any])
_TASKS: dict[str, Callable[..., Any]] = {}


def queued(name: str) -> Callable[[T], T]:
    """Register a huey task (the decorated task itself) as what ``enqueue(name)`` calls."""

    def register(task: T) -> T:
        _TASKS[name] = task
        return task

    return register


def enqueue(name: str, *args: Any) -> None:
    """Queue the task registered as ``name`` (run at once where huey is immediate)."""
    try:
        task = _TASKS[name]
    except KeyError:
        raise LookupError(f"no task registered as {name!r}: is its app installed?") from None
    task(*args)


class QueueStorage(SqliteStorage):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The queue holds task arguments: created 0600 before huey opens it, so its -wal
        # and -shm (SQLite gives them the file's bits) are 0600 too, whatever the umask.
        create_private_file(kwargs.get("filename", "huey.db"))
        super().__init__(*args, **kwargs)

    def _create_connection(self) -> Any:
        conn = super()._create_connection()
        conn.execute("PRAGMA synchronous=NORMAL")
        # A finished task's payload (ids) is overwritten, as the main database's rows are.
        conn.execute(f"PRAGMA secure_delete={settings.SQLITE_SECURE_DELETE}")
        return conn
