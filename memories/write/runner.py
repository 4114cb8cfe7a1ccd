"""Running the pipeline for one saved message, with a record of everything it decided.

The record (memories.models.Extraction) goes queued -> running -> done, or back
to queued with the error kept when a provider fails and retries remain (the
retry is scheduled with exponential backoff), or failed after the last attempt.
A failure is never recorded as "nothing to remember". Running a finished
record again changes nothing; re-extracting the same message cannot create
duplicates (dedup recognises memories that this very message produced).

Crashes: a running record is leased to the worker that claimed it (``claimed_by``,
``lease_until``), and that worker's heartbeat renews the lease. When a worker dies
(SIGKILL, OOM, a lost machine), its leases expire and recovery.py puts the records
back in the queue; a claim only succeeds on a queued record or an expired lease, so
two workers never run one record at once.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from memories.extraction import firewall
from memories.extraction.guard import strip_recalled
from memories.extraction.types import Candidate, Source, Verdict
from memories.extraction.understanding import Before
from memories.models import Extraction, Message, SourceType
from memories.store.selectors import (
    TURNS_OF_M,
    message_get,
    previous_message_content,
    recent_memories,
    turns_before,
    turns_of_json,
)
from memories.store.token_estimate import text_of
from memories.write.dedup import WriteContext, commit_candidate
from spaceduck.core import runtime
from spaceduck.core.db.fast import hot_cursor, read_plan
from spaceduck.core.failpoints import failpoint
from spaceduck.core.limits import MAX_CONTEXT_CHARS
from spaceduck.core.providers import ProviderError, get_chat, get_embedder
from spaceduck.core.queue import enqueue
from spaceduck.core.worker import worker_id

logger = logging.getLogger(__name__)

SOURCE_TYPES = {
    "user": SourceType.USER_MESSAGE,
    "assistant": SourceType.ASSISTANT_MESSAGE,
    "tool": SourceType.TOOL_RESULT,
    "system": SourceType.SYSTEM,
}


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    candidate = asdict(verdict.candidate)
    for name in ("occurred_at", "valid_from", "valid_until"):  # JSON has no datetime
        if candidate.get(name) is not None:
            candidate[name] = candidate[name].isoformat()
    claim = verdict.candidate.claim
    candidate["claim"] = claim.as_dict() if claim is not None else None
    return {
        "candidate": candidate,
        "decision": verdict.decision,
        "reason": verdict.reason,
        "memory_id": verdict.memory_id,
        "matched_memory_id": verdict.matched_memory_id,
        **({"details": verdict.extra} if verdict.extra else {}),
    }


_UNREAD: Any = object()  # the message (or the one before it) is read when it is needed


class _Turns:
    """The turns before a message, read once (or as the claim read them on PostgreSQL)."""

    def __init__(self, message: Message, prefetched: Any = _UNREAD) -> None:
        self.message, self.rows = message, prefetched

    @property
    def read(self) -> bool:
        return self.rows is not _UNREAD

    def raw(self) -> list[tuple[str, Any]]:
        if self.rows is _UNREAD:
            self.rows = turns_before(self.message)
        return self.rows  # type: ignore[no-any-return]

    def __call__(self) -> list[tuple[str, str]]:
        return [(role, strip_recalled(text_of(content))) for role, content in self.raw()]

    def previous(self) -> Any:
        """The content of the message just before: the last turn when the turns were read
        (no query), else that one row."""
        if self.read:
            return self.rows[-1][1] if self.rows else None
        return previous_message_content(self.message)


def source_of(message: Message, record: Extraction, turns: Any = _UNREAD) -> Source:
    provenance = message.provenance if isinstance(message.provenance, dict) else {}
    return Source(
        role=message.role,
        text=text_of(message.content),
        source_type=SOURCE_TYPES.get(message.role, SourceType.USER_MESSAGE),
        task_id=record.task_id,
        skill_id=record.skill_id,
        from_recall=bool(provenance.get("recalled") or provenance.get("compaction")),
        before=Before(
            turns=_Turns(message, turns), memories=lambda: recent_memories(record.namespace)
        ),
    )


def _provider_label() -> str:
    chat = get_chat()
    return f"chat={chat.name}/{chat.model} embeddings={get_embedder().fingerprint}"


# Raw SQL: these run twice per message on the ingest hot path, where compiling
# each ORM query costs ~1 ms (measured with `bench ingest`).
# A claim: a queued record, or a running one whose worker died (its lease expired;
# NULL for records claimed before leases existed). Exactly one worker wins it.
_BEGIN_SQL = (
    "UPDATE memories_extraction SET status = 'running', attempts = attempts + 1, "
    "started_at = %s, provider = %s, claimed_by = %s, lease_until = %s WHERE id = %s "
    "AND (status = 'queued' OR (status = 'running' AND "
    "(lease_until IS NULL OR lease_until < %s)))"
)
# Only the lease holder records the outcome: a worker that lost its lease (stalled
# past it while another took the record over) must not overwrite the new attempt.
_FINISH_SQL = (
    "UPDATE memories_extraction SET status = %s, candidates = %s, errors = %s, "
    "next_attempt_at = %s, duration_ms = %s, finished_at = %s, claimed_by = '', "
    "lease_until = NULL WHERE id = %s AND status = 'running' AND claimed_by = %s"
)
_RENEW_SQL = (
    "UPDATE memories_extraction SET lease_until = %s WHERE status = 'running' AND claimed_by = %s"
)


def _db_time(value: datetime | None) -> str | None:
    return connection.ops.adapt_datetimefield_value(value)


def lease_until() -> datetime:
    return timezone.now() + timedelta(seconds=settings.EXTRACTION_LEASE_SECONDS)


def renew_leases(*, worker: str) -> int:
    """Extend the leases of every extraction this worker is running (its heartbeat)."""
    with connection.cursor() as cursor:
        cursor.execute(_RENEW_SQL, [_db_time(lease_until()), worker])
        return max(cursor.rowcount, 0)


@dataclass
class Claimed:
    """A claimed record, with what PostgreSQL's claim read alongside it (else _UNREAD)."""

    record: Extraction
    message: Any = _UNREAD  # Message | None
    turns: Any = _UNREAD  # the turns before the message, (role, content) oldest first
    # PostgreSQL: synchronous_commit as it was before the claim turned it off for the
    # attempt (restored by the finish). "" while nothing needs restoring.
    sync_commit: str = ""


def _begin(extraction_id: int) -> Claimed | None:
    """Claim the record and read it back, in one statement (RETURNING)."""
    now = timezone.now()
    lease = _db_time(lease_until())
    params = [_db_time(now), _provider_label(), worker_id(), lease, extraction_id, _db_time(now)]
    if connection.vendor == "postgresql":
        return _pg_begin(params)
    plan = read_plan(Extraction)
    sql = f"{_BEGIN_SQL} RETURNING {plan.columns}"
    with transaction.atomic(), hot_cursor() as cursor:
        # SQLite's writers queue for the file's write lock at BEGIN
        # (spaceduck.core.db.backend.writelock) instead of retrying on its busy timeout.
        rows = cursor.execute(sql, params).fetchall()
    # No row: missing, done/failed, or running under a live lease.
    return Claimed(plan.instance(Extraction, rows[0])) if rows else None


@cache
def _pg_begin_sql() -> str:
    """PostgreSQL's claim: one statement in autocommit (BEGIN and COMMIT would be two more
    round trips) that also reads the message and the turns before it (what the extraction
    reads it with, and learnt_from's previous message: two more), and switches the
    session's commits to not waiting for the WAL flush for the attempt (see
    _SYNC_COMMIT_SQL; a SET would be another), its own commit with them. The one row comes
    back whether or not the claim succeeded, so the setting's old value is always returned."""
    record, message = read_plan(Extraction), read_plan(Message)
    return (
        f"WITH c AS ({_BEGIN_SQL} RETURNING {record.columns}) "
        "SELECT current_setting('synchronous_commit'), "
        "set_config('synchronous_commit', 'off', false), "
        f"{record.of('c')}, {message.of('m')}, ({TURNS_OF_M}) "
        "FROM (SELECT 1) AS one LEFT JOIN c ON true "
        "LEFT JOIN memories_message m ON m.id = c.message_id"
    )


def _pg_begin(params: list[Any]) -> Claimed | None:
    record, message = read_plan(Extraction), read_plan(Message)
    with hot_cursor() as cursor:
        row = cursor.execute(_pg_begin_sql(), params).fetchone()
    before, row = str(row[0]), row[2:]
    ours, row = row[: len(record.names)], row[len(record.names) :]
    theirs, turns = row[: len(message.names)], row[len(message.names)]
    if ours[0] is None:  # not claimed: the setting goes back at once
        _sync_commits_again(before)
        return None
    return Claimed(
        record.instance(Extraction, ours),
        message=None if theirs[0] is None else message.instance(Message, theirs),
        turns=turns_of_json(turns),
        sync_commit=before,
    )


def _message(claimed: Claimed) -> Message | None:
    if claimed.message is not _UNREAD:
        return claimed.message  # type: ignore[no-any-return]
    if claimed.record.message_id is None:
        return None
    return message_get(claimed.record.message_id)


def _extract(claimed: Claimed) -> list[Verdict]:
    record = claimed.record
    message = _message(claimed)
    if message is None:
        return []
    if not runtime.memory_enabled():
        # Switched off after the message was queued: the switch wins, nothing is written.
        return [
            Verdict(candidate=Candidate(kind="", content=""), decision="skipped", reason=MEMORY_OFF)
        ]
    # The stages (their patterns, the parser) load with the first extraction, not with
    # every process that can enqueue one (the API, the dashboard, `manage.py check`).
    from memories.extraction.pipeline import propose

    source = source_of(message, record, claimed.turns)
    kept, verdicts = propose(source, get_chat())
    ctx = WriteContext(
        namespace=record.namespace,
        actor=f"extraction:{record.pk}",
        source_type=source.source_type,
        message_id=message.pk,
        thread_id=message.thread_id,
        task_id=record.task_id,
        skill_id=record.skill_id,
        max_memory_writes=record.max_memory_writes,
        context=learnt_from(message, source) if kept else "",
    )
    return verdicts + [commit_candidate(candidate, ctx) for candidate in kept]


MEMORY_OFF = runtime.MEMORY_OFF


def learnt_from(message: Message, source: Source) -> str:
    """Memory.context for what ``message`` teaches: the previous message, then its own text.

    A fact is often the answer to the turn before ("Yes, the aisle seat."), and
    the user's own words differ from the stored phrasing; both make the memory
    findable by keyword. Recalled blocks are stripped, as for extraction, so
    recalled text never comes back as context.
    """
    turns = source.before.turns if source.before is not None else None
    previous = turns.previous() if isinstance(turns, _Turns) else previous_message_content(message)
    before = strip_recalled(text_of(previous)) if previous is not None else ""
    own = strip_recalled(source.text)
    parts = (firewall.without_secrets(before.strip()), firewall.without_secrets(own.strip()))
    text = " ".join(part for part in parts if part)
    return text[:MAX_CONTEXT_CHARS]


def enqueue_extraction(extraction_id: int) -> None:
    """The one way a queued record reaches the worker (ingest, a retry from the log and
    recovery all send it so): the task ``memories.tasks.extract_message``, by name."""
    enqueue("extract_message", extraction_id)


def run_extraction(extraction_id: int) -> Extraction | None:
    """One attempt. Returns the record, or None when there was nothing to run."""
    claimed = _begin(extraction_id)
    if claimed is None:
        return None
    try:
        return _attempt(claimed)
    finally:
        if claimed.sync_commit:  # an error before the finish, or in it
            _sync_commits_again(claimed.sync_commit)


# Everything an attempt writes can be computed again from its message: a crash between
# its commits is recovered (recovery.py queues an expired lease again, and a re-run finds
# what the message already produced). So on PostgreSQL those commits do not wait for the
# WAL flush: one fdatasync a commit, 3-4 a message, was most of a message's time (2.2 ms
# each on this project's machines, against ~60 us a round trip). A crash of the machine or
# of the server can lose the last ~0.6 s of them (3 x wal_writer_delay), only ever the
# newest (WAL is replayed in order), and never the message: its save still waits for the
# flush. SQLite's synchronous=NORMAL allows that loss for every write.
# The claim turns the session's setting off (_pg_begin_sql) and the finish sets it back in
# the same statement as its own write, which alone keeps it off (SET LOCAL): no round trip
# of its own either way. Only when the attempt ends before its finish is it one more.
_SYNC_COMMIT_SQL = "SELECT set_config('synchronous_commit', %s, false)"


def _sync_commits_again(value: str) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute(_SYNC_COMMIT_SQL, [value])
    except DatabaseError:
        # In a failed transaction the SET is rolled back with it. Otherwise the connection
        # is broken: close it, so that no later write on it skips the flush.
        if not connection.in_atomic_block:
            connection.close()
        raise


def _attempt(claimed: Claimed) -> Extraction:
    record = claimed.record
    started = time.perf_counter()
    try:
        verdicts = _extract(claimed)
    except ProviderError as exc:
        _failed_attempt(claimed, exc, started)
        return record
    except Exception as exc:
        # Any other error (a bug, "database is locked" past the busy timeout) is a failed
        # attempt too. Left "running", the record would stay claimed by this live worker,
        # whose heartbeat renews the lease forever: never retried, never failed. Seen
        # with 4 worker processes on one SQLite file (bench ingest at 1M).
        logger.exception("extraction %s: attempt %s failed", record.pk, record.attempts)
        _failed_attempt(claimed, exc, started)
        return record
    failpoint("extraction.before_finish")
    record.candidates = [verdict_json(v) for v in verdicts]
    record.status = Extraction.Status.DONE
    record.next_attempt_at = None
    _finish(claimed, started)
    return record


def _failed_attempt(claimed: Claimed, exc: Exception, started: float) -> None:
    record = claimed.record
    record.errors = [
        *record.errors,
        {"attempt": record.attempts, "error": str(exc), "at": timezone.now().isoformat()},
    ]
    if record.attempts <= runtime.extraction_retries():
        delay = settings.EXTRACTION_RETRY_DELAY * 2 ** (record.attempts - 1)
        record.status = Extraction.Status.QUEUED
        record.next_attempt_at = timezone.now() + timedelta(seconds=delay)
    else:
        record.status = Extraction.Status.FAILED
        record.next_attempt_at = None
    _finish(claimed, started)


# PostgreSQL: the finish, the session's commit setting back as it was before the claim,
# and this statement's own commit still without the flush (set_config's local form).
_PG_FINISH_SQL = (
    f"WITH f AS ({_FINISH_SQL} RETURNING 1) SELECT (SELECT count(*) FROM f), "
    "set_config('synchronous_commit', %s, false), set_config('synchronous_commit', 'off', true)"
)


def _finish(claimed: Claimed, started: float) -> None:
    record = claimed.record
    record.duration_ms = round((time.perf_counter() - started) * 1000, 2)
    record.finished_at = timezone.now()
    params = [
        record.status,
        json.dumps(record.candidates, ensure_ascii=False),
        json.dumps(record.errors, ensure_ascii=False),
        _db_time(record.next_attempt_at),
        record.duration_ms,
        _db_time(record.finished_at),
        record.pk,
        record.claimed_by,
    ]
    with hot_cursor() as cursor:
        if claimed.sync_commit:
            finished = cursor.execute(_PG_FINISH_SQL, [*params, claimed.sync_commit]).fetchone()[0]
            claimed.sync_commit = ""
        else:
            finished = cursor.execute(_FINISH_SQL, params).rowcount
    if finished == 0:
        logger.warning(
            "extraction %s: the lease was lost (taken over after expiring); "
            "this attempt's outcome is not recorded",
            record.pk,
        )


def retry_delay(record: Extraction) -> float | None:
    """Seconds until the next attempt when one is due, else None."""
    if record.status != Extraction.Status.QUEUED or record.next_attempt_at is None:
        return None
    return max(0.0, (record.next_attempt_at - timezone.now()).total_seconds())
