"""After a delete or an erase: nothing of the deleted rows left in the database's files.

SQLite keeps a deleted row's bytes in places a delete alone does not touch:

- the page it lived on, until the page is reused: ``PRAGMA secure_delete=ON`` (set on every
  connection, ``settings.DATABASES``) overwrites deleted cells and freed pages with zeros;
- a keyword index that cannot remove a document's terms when it is deleted: the memories'
  contentless FTS5 index only marks the document deleted until its segments are merged. The
  app that owns such an index registers a purge (``register``), run here after the delete;
- the write-ahead log, which holds the page images of earlier transactions, the row's
  insert among them, until a checkpoint copies them back and the log is truncated.

``forget_after_commit()`` runs the registered purges and then that checkpoint once the
current transaction commits (a rolled-back delete needs neither), once per transaction
however many rows it deleted. On PostgreSQL a deleted row is not queryable once the
transaction commits (the purges keep the keyword documents in step); its dead tuple stays
in the table's file until VACUUM reclaims it (README, Privacy).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import DatabaseError, connection, transaction

log = logging.getLogger(__name__)

_PURGES: list[Callable[[], None]] = []


def register(purge: Callable[[], None]) -> None:
    """Run ``purge`` after every delete that must leave no trace (an app's ``ready``)."""
    if purge not in _PURGES:
        _PURGES.append(purge)


def forget_after_commit(*, indexes: bool = True) -> None:
    """Once this transaction commits: the registered purges, then a WAL checkpoint.

    ``indexes=False`` for a delete that touched no indexed row (a fact): the checkpoint
    alone, without merging the keyword index (84 ms at 100k memories). Outside a
    transaction (autocommit) the delete has committed already: they run now.
    """
    asked = {func for _sids, func, _robust in connection.run_on_commit}
    if forget_now in asked or (not indexes and _checkpoint_now in asked):
        return  # asked for already in this transaction
    transaction.on_commit(forget_now if indexes else _checkpoint_now)


def _checkpoint_now() -> None:
    checkpoint()


def forget_now() -> None:
    """The purges and the checkpoint; a failure is logged, never raised: the delete it
    follows has committed, and the next delete (or the next merge) finishes the job."""
    for purge in _PURGES:
        try:
            purge()
        except DatabaseError as exc:
            log.warning("purge after a delete failed (%s): %s", purge.__qualname__, exc)
    checkpoint()


def checkpoint() -> bool:
    """Copy SQLite's write-ahead log into the database file and truncate it to zero bytes.

    False when another connection's read transaction kept part of the log (SQLite then
    copies what it can; the next checkpoint, at the latest the automatic one after 1,000
    pages, finishes the job). True on PostgreSQL, which has no such log in the data
    directory of this service.
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


def vacuum(*, full: bool = False) -> list[str]:
    """Rewrite the database so that no free page or dead row holds old bytes; what was done.

    SQLite: the registered purges, ``VACUUM`` (the file rebuilt from its live rows: free
    pages left by deletes made before ``secure_delete`` was on are gone, and the file
    shrinks), then a WAL checkpoint. PostgreSQL: ``VACUUM`` marks dead rows' space free
    for reuse; ``full`` runs ``VACUUM FULL``, which rewrites every table into new files
    (the old files' disk blocks go back to the file system as they are).
    """
    done: list[str] = []
    for purge in _PURGES:
        purge()
        done.append(f"purged: {purge.__module__}.{purge.__qualname__}")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM FULL" if full and connection.vendor == "postgresql" else "VACUUM")
    done.append("VACUUM FULL" if full and connection.vendor == "postgresql" else "VACUUM")
    if connection.vendor == "sqlite":
        done.append("WAL checkpointed" if checkpoint() else "WAL checkpoint incomplete (busy)")
    return done
