"""After a delete or an erase: nothing of the deleted rows left in the database's files.

SQLite keeps a deleted row's bytes in two places a delete alone does not touch:

- the page it lived on, until the page is reused: ``PRAGMA secure_delete`` (set on every
  connection, ``settings.DATABASES``) overwrites deleted cells and freed pages with zeros;
- the write-ahead log, which holds the page images of earlier transactions, the row's
  insert among them, until a checkpoint copies them back and the log is truncated.

``forget_after_commit()`` asks for that checkpoint once the current transaction commits
(a rolled-back delete needs none). The keyword index removes a deleted document's terms
itself (FTS5's ``secure-delete`` option, memories migration 0027). On PostgreSQL a
deleted row is not queryable once the transaction commits; its dead tuple stays in the
table's file until VACUUM reclaims it (README, Privacy).
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, connection, transaction

log = logging.getLogger(__name__)


def forget_after_commit() -> None:
    """Checkpoint and truncate SQLite's write-ahead log once this transaction commits."""
    if connection.vendor != "sqlite":
        return
    transaction.on_commit(checkpoint)


def checkpoint() -> bool:
    """Copy the write-ahead log into the database file and truncate it to zero bytes.

    False when another connection's read transaction kept part of the log (SQLite then
    copies what it can; the next checkpoint, at the latest the automatic one after 1,000
    pages, finishes the job). Never raises: the delete it follows has committed.
    """
    if connection.vendor != "sqlite":
        return True
    try:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            busy, _log_pages, _copied = cursor.fetchone()
    except DatabaseError as exc:  # e.g. locked for longer than the busy timeout
        log.warning("WAL checkpoint after a delete failed: %s", exc)
        return False
    return not busy
