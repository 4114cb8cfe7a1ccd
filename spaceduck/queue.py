"""huey's SQLite queue, committed the way the main database is.

huey opens its SQLite file with ``synchronous=FULL``: an fsync of the WAL on
every enqueue and every dequeue, paid inside a message's POST. ``NORMAL`` (as
the main database) keeps the queue consistent through any crash and loses at
most the last commits on power loss. Those are recovered anyway: a queued
Extraction with no task in the queue is re-enqueued by the worker
(memories.extraction.recovery).
"""

from __future__ import annotations

from typing import Any

from huey.storage import SqliteStorage


class QueueStorage(SqliteStorage):
    def _create_connection(self) -> Any:
        conn = super()._create_connection()
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn
