"""Extractions survive crashes: expired leases are queued again, lost tasks re-enqueued.

Run by every worker at start and then every SPACEDUCK_RECOVERY_EVERY_SECONDS
(spaceduck.management.commands.worker). Both steps are safe to run from several
workers at once: the lease check is part of each UPDATE, and a record enqueued
twice is claimed once (runner._BEGIN_SQL).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories.models import Extraction
from memories.write.runner import enqueue_extraction
from spaceduck.core import runtime

logger = logging.getLogger(__name__)

# NULL leases: records claimed before leases existed, by a worker long gone.
_EXPIRED_SQL = (
    "SELECT id, attempts, errors FROM memories_extraction WHERE status = 'running' "
    "AND (lease_until IS NULL OR lease_until < %s)"
)
_RELEASE_SQL = (
    "UPDATE memories_extraction SET status = %s, errors = %s, claimed_by = '', "
    "lease_until = NULL, next_attempt_at = NULL, finished_at = %s WHERE id = %s "
    "AND status = 'running' AND (lease_until IS NULL OR lease_until < %s)"
)
_DUE_SQL = (
    "SELECT id FROM memories_extraction WHERE status = 'queued' AND created_at < %s "
    "AND (next_attempt_at IS NULL OR next_attempt_at < %s) ORDER BY id"
)


@dataclass
class Recovered:
    requeued: list[int] = field(default_factory=list)  # expired leases, queued again
    failed: list[int] = field(default_factory=list)  # expired too often: given up
    enqueued: list[int] = field(default_factory=list)  # queued records missing from the queue

    def __bool__(self) -> bool:
        return bool(self.requeued or self.failed or self.enqueued)


def recover_extractions() -> Recovered:
    """Release expired leases, then enqueue every due record the queue does not hold."""
    done = Recovered()
    _release_expired(done)
    _enqueue_missing(done)
    if done:
        logger.warning(
            "extraction recovery: %d lease(s) expired and requeued, %d failed, %d re-enqueued",
            len(done.requeued),
            len(done.failed),
            len(done.enqueued),
        )
    return done


def _release_expired(done: Recovered) -> None:
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with transaction.atomic(), connection.cursor() as cursor:
        rows = cursor.execute(_EXPIRED_SQL, [now]).fetchall()
        for extraction_id, attempts, errors in rows:
            # Each claim counts as an attempt: a message that kills its worker every
            # time (out of memory, say) fails in the end instead of looping for ever.
            gave_up = attempts > runtime.extraction_retries()
            status = Extraction.Status.FAILED if gave_up else Extraction.Status.QUEUED
            history = [*json.loads(errors or "[]"), _lost(attempts)]
            cursor.execute(
                _RELEASE_SQL,
                [status, json.dumps(history, ensure_ascii=False), now, extraction_id, now],
            )
            if cursor.rowcount:
                (done.failed if gave_up else done.requeued).append(extraction_id)


def _lost(attempt: int) -> dict[str, object]:
    return {
        "attempt": attempt,
        "error": "the worker stopped during this attempt (its lease expired)",
        "at": timezone.now().isoformat(),
    }


def _enqueue_missing(done: Recovered) -> None:
    """Queued records that are due but in no queue (lost with a queue file, or queued
    while the worker was away and the task never written): enqueue them again."""
    grace = timezone.now() - timedelta(seconds=settings.EXTRACTION_LEASE_SECONDS)
    cutoff = connection.ops.adapt_datetimefield_value(grace)
    with connection.cursor() as cursor:
        due = [row[0] for row in cursor.execute(_DUE_SQL, [cutoff, cutoff]).fetchall()]
    due = sorted({*due, *done.requeued})  # released just now: due at once, whatever their age
    if not due:
        return
    waiting = _queued_extraction_ids()
    for extraction_id in due:
        if extraction_id not in waiting:
            enqueue_extraction(extraction_id)
            done.enqueued.append(extraction_id)


def _queued_extraction_ids() -> set[int]:
    """Extraction ids that the task queue already holds (pending or scheduled)."""
    from huey.contrib.djhuey import HUEY

    ids: set[int] = set()
    for task in [*HUEY.pending(), *HUEY.scheduled()]:
        if task.name.endswith("extract_message") and task.args:
            ids.add(int(task.args[0]))
    return ids
