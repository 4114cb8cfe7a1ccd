"""Keeping memory clean at write time: what happens to each candidate memory.

For each candidate that passed the extraction stages (or came in through the API),
``commit_candidate`` gathers what is known about it (``_gather``), lets
``memories.write.decide`` decide once what happens to it (a pure function: ignore,
duplicate, update, conflict or insert; its docstring has the rules), and applies that
(``_apply``) in one transaction: store, supersede, open conflicts, touch.

The reads, in order, each only while ``decide.settled`` says the outcome is still open:

1. the task's write budget (a task run writes at most ``max_memory_writes`` memories);
2. before anything is embedded, in one round trip on PostgreSQL (``_first_reads``): what
   this message already stored with this content (a re-run), the live memory with the same
   normalised content hash, and the live facts of the claim's holder and predicate
   (``memories.extraction.claims.claim_of``: the model's claim, else the rules');
3. the embedding, the identity slot's holders and the 20 nearest vectors, with the
   meaning-carrying tokens (``salient_tokens``: numbers, also inside "P11"/"Falcon11",
   names, dates, versions, emails/URLs) of those at DEDUP_THRESHOLD (0.92) or above: a near
   neighbour whose tokens differ is never a duplicate, whatever the cosine ("Project P11
   has the codename Falcon11." vs "Project P13 has the codename Falcon13." is 0.925 on
   MiniLM); then the arbiter's verdicts on the same-topic band (TOPIC_THRESHOLD, 0.60, and
   above: "Postgres 15" -> "Postgres 16" for the same server is a contradiction);
4. under the namespace's write lock, in the transaction that applies the decision: the
   message is still there (an erasure takes the same lock), the same content, the claim's
   holders and the vectors written since the search again (another worker may have stored
   one meanwhile), and whether a person confirmed what would be replaced.

Live means candidate, active or stale: re-learning a fact that was superseded
earlier creates a new memory instead of matching the dead one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from functools import lru_cache
from typing import Any

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from memories.extraction.claims import NEGATED, USER, Claim, claim_of, from_columns, stored_value
from memories.extraction.salient import salient_tokens
from memories.extraction.types import CONFIDENCE, Candidate, Verdict
from memories.extraction.understanding import RELATION, claim_of_sentence
from memories.models import Conflict, Memory, MemoryEvent, MemoryStatus
from memories.store import keyword_index, vector_index
from memories.store.selectors import memories_by_id
from memories.write import waiting
from memories.write.decide import (
    BY_A_PERSON,
    SAID_AGAIN,
    Arbitration,
    Decision,
    Facts,
    Held,
    Locked,
    Neighbour,
    New,
    arbiter_band,
    conflicts,
    decide,
    settled,
    to_confirm,
)
from memories.write.services import HistoryEvent, content_hash, memory_history_records
from spaceduck.core import runtime
from spaceduck.core.db.fast import (
    Statement,
    fast_insert,
    fast_update,
    hot_cursor,
    insert_statement,
    inserted,
    read_plan,
)
from spaceduck.core.db.locks import lock_for_write
from spaceduck.core.failpoints import failpoint
from spaceduck.core.providers import get_chat, get_embedder

LIVE = (MemoryStatus.CANDIDATE, MemoryStatus.ACTIVE, MemoryStatus.STALE)
SEMANTIC_NEIGHBOURS = 20  # nearest vectors examined; enough when kinds mix in a namespace
SEEN_CONFIDENCE_STEP = 0.15  # observed again: one bucket more certain


@dataclass
class WriteContext:
    """Where a candidate comes from and where it goes."""

    namespace: str
    actor: str
    source_type: str = "api"
    message_id: str | None = None
    thread_id: str | None = None
    task_id: str = ""
    skill_id: str = ""
    scope: str = "global"
    scope_id: str = ""
    max_memory_writes: int | None = None
    # Memory.context of what this write stores: where it was learnt.
    context: str = ""
    now: datetime = field(default_factory=timezone.now)


def initial_status(confidence: float) -> str:
    return (
        MemoryStatus.ACTIVE if confidence >= settings.ACTIVE_CONFIDENCE else MemoryStatus.CANDIDATE
    )


# Hot-path lookups run on every candidate; as raw SQL over the (namespace, ...)
# indexes they cost ~20 us instead of ~1 ms of ORM query building each.
_IN_SCOPE = (
    "kind = %s AND scope = %s AND scope_id = %s AND status IN ('candidate', 'active', 'stale')"
)
_LIVE_WHERE = f"namespace = %s AND {_IN_SCOPE}"
# The whole row ({columns}: a read plan's), so an exact duplicate costs one query.
_EXACT_SQL = (
    f"SELECT {{columns}} FROM memories_memory WHERE {_LIVE_WHERE} AND content_hash = %s "
    "ORDER BY id DESC LIMIT 1"
)
# Without statistics SQLite prefers the (namespace, status, kind) index and scans
# the namespace; slots are rare, so the partial slot index is always the right one
# (its condition, NOT (slot = ''), must appear in the query for SQLite to use it).
_SLOT_SQL = (
    "SELECT id FROM memories_memory {hint}"
    f"WHERE {_LIVE_WHERE} AND NOT (slot = '') AND slot = %s ORDER BY id"
)


def _slot_sql() -> str:
    """_SLOT_SQL with SQLite's index hint; PostgreSQL's planner has statistics (and no hint)."""
    hint = "INDEXED BY memory_slot_idx " if connection.vendor == "sqlite" else ""
    return _SLOT_SQL.format(hint=hint)


_LIVE_IDS_SQL = f"SELECT id FROM memories_memory WHERE {_LIVE_WHERE} AND id IN ({{ids}})"
# The live memories about one subject and attribute (the partial claim index; its condition
# must appear in the query for SQLite to use it).
# Whole rows ({columns}: a read plan's): one round trip, not the ids and then the rows.
_CLAIM_SQL = (
    f"SELECT {{columns}} FROM memories_memory WHERE {_LIVE_WHERE} "
    "AND NOT (claim_attribute = '') AND claim_subject = %s AND claim_attribute = %s ORDER BY id"
)
# Before anything is embedded, both look-ups by content in one round trip: what this
# message already produced, in any status (a re-run after a crash must not bring back a
# memory that a later message superseded in between), and the live exact duplicates.
_SAME_CONTENT_SQL = (
    "SELECT {columns} FROM memories_memory WHERE namespace = %s AND content_hash = %s "
    f"AND (source_message_id = %s OR ({_IN_SCOPE})) "
    "ORDER BY id"
)


_MESSAGE_EXISTS_SQL = "SELECT 1 FROM memories_message WHERE id = %s"


def _message_exists(message_id: str) -> bool:
    with hot_cursor() as cursor:
        return cursor.execute(_MESSAGE_EXISTS_SQL, [message_id]).fetchone() is not None


def _live_ids(ctx: WriteContext, kind: str, sql: str, *extra: str | int) -> list[int]:
    with hot_cursor() as cursor:
        rows = cursor.execute(sql, [ctx.namespace, kind, ctx.scope, ctx.scope_id, *extra])
        return [row[0] for row in rows.fetchall()]


def _same_message(memory: Memory, ctx: WriteContext) -> bool:
    return ctx.message_id is not None and memory.source_message_id == ctx.message_id


def touch(memory: Memory, candidate: Candidate, ctx: WriteContext, reason: str) -> list[str]:
    """Observed again: refresh last_seen_at, raise confidence, promote or revive it.

    The row and its history rows are written in one transaction: one commit
    instead of one per statement, and never a change without its history.
    """
    events = [MemoryEvent.Event.SEEN]
    memory.last_seen_at = ctx.now
    memory.confidence = min(
        CONFIDENCE["certain"], max(memory.confidence, candidate.confidence) + SEEN_CONFIDENCE_STEP
    )
    if memory.status in (MemoryStatus.CANDIDATE, MemoryStatus.STALE):
        events.append(
            MemoryEvent.Event.PROMOTED
            if memory.status == MemoryStatus.CANDIDATE
            else MemoryEvent.Event.ACTIVATED
        )
        memory.status = MemoryStatus.ACTIVE
    fields = _TOUCHED
    if memory.valid_until is not None and memory.valid_until <= ctx.now:
        # Said again after it expired: it holds again, for as long as it is said to now
        # (else it would be seen again and still left out of recall and the context).
        memory.valid_from, memory.valid_until = candidate.valid_from, candidate.valid_until
        fields = (*_TOUCHED, "valid_from", "valid_until")
    elif connection.vendor == "postgresql":
        _pg_touch(memory, [str(e) for e in events], reason, ctx.actor)
        return [str(e) for e in events]
    # No savepoint when nested (a duplicate found again under the write lock): nothing
    # catches a failure here, the caller's transaction rolls back whole.
    with transaction.atomic(savepoint=False):
        fast_update(memory, fields)
        memory_history_records([HistoryEvent(memory, e, reason) for e in events], actor=ctx.actor)
    return [str(e) for e in events]


_TOUCHED = ("last_seen_at", "confidence", "status")
# PostgreSQL: touch's row and its history rows in one statement, which commits alone (no
# BEGIN and COMMIT round trips): the history only for a row the UPDATE found.
_PG_TOUCH_SQL = (
    "WITH u AS (UPDATE memories_memory SET last_seen_at = %s, confidence = %s, status = %s "
    "WHERE id = %s RETURNING id) "
    "INSERT INTO memories_memoryevent (memory_id, namespace, event, actor, reason, data, "
    "created_at) SELECT u.id, %s, e.event, %s, %s, '{}'::jsonb, %s::timestamptz "
    "FROM u, unnest(%s::text[]) WITH ORDINALITY AS e(event, i) ORDER BY e.i"
)


def _pg_touch(memory: Memory, events: list[str], reason: str, actor: str) -> None:
    fields = [Memory._meta.get_field(name) for name in _TOUCHED]
    values = [f.get_db_prep_save(f.pre_save(memory, False), connection) for f in fields]  # type: ignore[union-attr]
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with hot_cursor() as cursor:
        cursor.execute(
            _PG_TOUCH_SQL, [*values, memory.pk, memory.namespace, actor, reason, now, events]
        )
        if cursor.rowcount == 0:  # as fast_update: the row is gone, nothing was written
            raise DatabaseError("Save with update_fields did not affect any rows.")


def _new_memory(candidate: Candidate, ctx: WriteContext) -> Memory:
    claim = candidate.claim
    return Memory(
        claim_subject=claim.subject if claim else "",
        claim_attribute=claim.attribute if claim else "",
        claim_value=stored_value(claim)[:255] if claim else "",
        claim_polarity=claim.polarity if claim else "",
        claim_mood=claim.mood if claim else "",
        namespace=ctx.namespace,
        kind=candidate.kind,
        title=candidate.title,
        content=candidate.content,
        summary=candidate.summary,
        tags=candidate.tags,
        context=ctx.context,
        importance=candidate.importance,
        confidence=candidate.confidence,
        status=initial_status(candidate.confidence),
        scope=ctx.scope,
        scope_id=ctx.scope_id,
        procedure_subtype=candidate.procedure_subtype,
        slot=candidate.slot,
        source_type=ctx.source_type,
        source_message_id=ctx.message_id,
        source_thread_id=ctx.thread_id,
        source_task_id=ctx.task_id,
        source_skill_id=ctx.skill_id,
        content_hash=content_hash(candidate.content),
        occurred_at=candidate.occurred_at,
        valid_from=candidate.valid_from,
        valid_until=candidate.valid_until,
        created_at=ctx.now,
        updated_at=ctx.now,
        last_seen_at=ctx.now,
    )


def store(
    candidate: Candidate,
    vector: np.ndarray,
    ctx: WriteContext,
    supersede: list[tuple[Memory, str]] = (),  # type: ignore[assignment]
    ask: list[tuple[Memory, str]] = (),  # type: ignore[assignment]
) -> Memory:
    """Insert the memory and supersede the old ones in ONE transaction; with pairs to
    ``ask`` a person about, it waits as a candidate and each pair goes to the conflict inbox."""
    # No savepoint when nested (commit_candidate's locked block): nothing catches a failure
    # in between, so it rolls the caller's transaction back whole; a savepoint would only
    # cost two round trips on PostgreSQL.
    with transaction.atomic(savepoint=False):
        new = _new_memory(candidate, ctx)
        if ask or candidate.doubt:
            new.status = MemoryStatus.CANDIDATE
        created = f"{candidate.stage} stage"
        if connection.vendor == "postgresql" and not supersede:
            memory = _pg_store(new, vector, created, ctx.actor)
            failpoint("extraction.in_dedup")  # crash tests: die with the insert uncommitted
            _ask(memory, ask, ctx)
            return memory
        memory = fast_insert(new)
        failpoint("extraction.in_dedup")  # crash tests: die with the insert uncommitted
        vector_index.upsert([(memory.pk, memory.namespace, vector)], new=True)
        events = [HistoryEvent(memory, MemoryEvent.Event.CREATED, created)]
        for old, reason in supersede:
            old.status = MemoryStatus.SUPERSEDED
            old.superseded_by = memory
            old.updated_at = ctx.now
            fast_update(old, ("status", "superseded_by", "updated_at"))
            data = {"superseded_by": memory.pk}
            events.append(HistoryEvent(old, MemoryEvent.Event.SUPERSEDED, reason, data))
        memory_history_records(events, actor=ctx.actor)
        _ask(memory, ask, ctx)
    return memory


def _ask(memory: Memory, ask: Sequence[tuple[Memory, str]], ctx: WriteContext) -> None:
    """Each pair to the conflict inbox, and the reviewer told (when the transaction
    commits): of the conflicts when there are some (they say why it waits), else of the
    candidate."""
    for old, reason in ask:
        conflict = Conflict.objects.create(
            namespace=ctx.namespace, old=old, new=memory, reason=reason
        )
        waiting.conflict_opened(conflict)
    if not ask and memory.status == MemoryStatus.CANDIDATE:
        waiting.candidate_waits(memory)


# PostgreSQL: a new memory's history row, in the statement that inserts it (CTE ``m``).
_PG_CREATED_CTE = (
    "history AS (INSERT INTO memories_memoryevent (memory_id, namespace, event, actor, "
    "reason, data, created_at) SELECT m.id, %s, %s, %s, %s, '{}'::jsonb, %s::timestamptz FROM m)"
)


def _pg_store(new: Memory, vector: np.ndarray, reason: str, actor: str) -> Memory:
    """The memory, its vector (with the counters and the change log) and its "created"
    history row in one statement: one round trip where there were three."""
    insert, values = insert_statement(new)  # returns the new id
    ctes, cte_values = vector_index.pg_new_vector(new.namespace, vector)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    event = str(MemoryEvent.Event.CREATED)
    sql = f"WITH m AS ({insert}), {ctes}, {_PG_CREATED_CTE} SELECT id FROM m"
    params = [*values, *cte_values, new.namespace, event, actor, reason, now]
    with hot_cursor() as cursor:
        pk = cursor.execute(sql, params).fetchone()[0]
    return inserted(new, pk)


def _budget_exhausted(ctx: WriteContext) -> bool:
    if not ctx.task_id:
        return False
    limit = (
        runtime.task_max_memory_writes() if ctx.max_memory_writes is None else ctx.max_memory_writes
    )
    return Memory.objects.filter(source_task_id=ctx.task_id).count() >= limit


def _same_content(candidate: Candidate, ctx: WriteContext) -> tuple[int | None, Memory | None]:
    """(the memory this same message already stored with this content, whatever its status;
    the newest live one with this content in the scope): one round trip for both."""
    plan = read_plan(Memory)
    with hot_cursor() as cursor:
        sql, params = _same_content_read(candidate, ctx)
        rows = [plan.instance(Memory, row) for row in cursor.execute(sql, params).fetchall()]
    return _same_content_of(rows, candidate, ctx)


def _same_content_read(candidate: Candidate, ctx: WriteContext) -> Statement:
    params = [ctx.namespace, content_hash(candidate.content), ctx.message_id]
    params += [candidate.kind, ctx.scope, ctx.scope_id]
    return _SAME_CONTENT_SQL.format(columns=read_plan(Memory).columns), params


def _same_content_of(
    rows: list[Memory], candidate: Candidate, ctx: WriteContext
) -> tuple[int | None, Memory | None]:
    earlier = next((m.pk for m in rows if _same_message(m, ctx)), None)
    live = [m for m in rows if _live_in_scope(m, candidate, ctx)]
    return earlier, (live[-1] if live else None)


def _memory_reads(
    parts: Sequence[Statement], scalars: Sequence[Statement] = ()
) -> tuple[list[Any], list[list[Memory]]]:
    """PostgreSQL: several reads of whole memory rows (each ordered by id) and of single
    values in one round trip: (the values, each part's memories)."""
    plan = read_plan(Memory)
    union = " UNION ALL ".join(
        f"SELECT {i} AS part, p{i}.* FROM ({sql}) AS p{i}" for i, (sql, _) in enumerate(parts)
    )
    heads = [f"({sql})" for sql, _ in scalars]
    sql = (
        f"SELECT {', '.join([*heads, 'x.part', plan.of('x')])} FROM (SELECT 1) AS one "
        f"LEFT JOIN ({union}) AS x ON true ORDER BY x.part, x.id"
    )
    params = [value for _, given in [*scalars, *parts] for value in given]
    with hot_cursor() as cursor:
        rows = cursor.execute(sql, params).fetchall()
    n = len(scalars)
    found: list[list[Memory]] = [[] for _ in parts]
    for row in rows:
        if row[n] is not None:
            found[row[n]].append(plan.instance(Memory, row[n + 1 :]))
    return list(rows[0][:n]), found


@dataclass(frozen=True)
class _First:
    """``commit_candidate``'s look-ups before anything is embedded."""

    earlier: int | None  # what this message already stored with this content
    exact: Memory | None  # the newest live exact duplicate
    holders: list[tuple[Memory, Claim]]  # the claim's holders
    version: tuple[int, int] | None = None  # the vector counters (PostgreSQL)
    slotted: list[Memory] | None = None  # the slot's holders (PostgreSQL)


def _first_reads(candidate: Candidate, ctx: WriteContext, claim: Claim | None) -> _First:
    """One round trip on PostgreSQL (the slot's holders and the counters with them);
    elsewhere the holders are read only when the content found nothing, the slot's holders
    and the counters later."""
    if connection.vendor != "postgresql":
        earlier, exact = _same_content(candidate, ctx)
        if earlier is not None or exact is not None or claim is None:
            return _First(earlier, exact, [])
        return _First(earlier, exact, _claim_holders(claim, ctx))
    parts = [_same_content_read(candidate, ctx)]
    if claim is not None:
        parts.append(_claim_read(claim, ctx))
    if candidate.slot:
        params = [ctx.namespace, candidate.kind, ctx.scope, ctx.scope_id, candidate.slot]
        parts.append((_SLOT_ROWS_SQL.format(columns=read_plan(Memory).columns), params))
    (epoch, version), found = _memory_reads(parts, vector_index.version_reads(ctx.namespace))
    earlier, exact = _same_content_of(found[0], candidate, ctx)
    holders = _holders_of(found[1]) if claim is not None else []
    slotted = found[-1] if candidate.slot else []
    return _First(earlier, exact, holders, (int(epoch), int(version)), slotted)


# _SLOT_SQL's memories whole (PostgreSQL: no index hint), ordered by id.
_SLOT_ROWS_SQL = (
    "SELECT {columns} FROM memories_memory "
    f"WHERE {_LIVE_WHERE} AND NOT (slot = '') AND slot = %s ORDER BY id"
)


@dataclass(frozen=True)
class _Locked:
    """What ``commit_candidate`` reads again under the write lock."""

    there: bool  # the message is still there (or the write has none)
    raced: Memory | None  # a live exact duplicate stored meanwhile
    holders: list[tuple[Memory, Claim]]  # the claim's holders now
    version: tuple[int, int] | None = None  # the namespace's vector counters (PostgreSQL)


def _locked_reads(candidate: Candidate, ctx: WriteContext, claim: Claim | None) -> _Locked:
    """The checks again under the write lock. One round trip on PostgreSQL, in a statement
    after the lock's (its snapshot sees what committed before the lock was granted), with
    the vector counters ``_near_duplicate_since`` reads next; elsewhere each only when the
    one before found nothing."""
    if connection.vendor != "postgresql":
        if ctx.message_id and not _message_exists(ctx.message_id):
            return _Locked(False, None, [])
        raced = _exact_match(candidate, ctx)
        if raced is not None or claim is None:
            return _Locked(True, raced, [])
        return _Locked(True, None, _claim_holders(claim, ctx))
    parts = [_exact_read(candidate, ctx)]
    if claim is not None:
        parts.append(_claim_read(claim, ctx))
    there: Statement = ("true", [])
    if ctx.message_id:
        there = (f"EXISTS ({_MESSAGE_EXISTS_SQL})", [ctx.message_id])
    (exists, epoch, version), found = _memory_reads(
        parts, [there, *vector_index.version_reads(ctx.namespace)]
    )
    raced = found[0][0] if found[0] else None
    holders = _holders_of(found[1]) if claim is not None else []
    return _Locked(bool(exists), raced, holders, (int(epoch), int(version)))


def _live_in_scope(memory: Memory, candidate: Candidate, ctx: WriteContext) -> bool:
    """What _LIVE_WHERE selects, for a row already read."""
    return (
        memory.kind == candidate.kind
        and memory.scope == ctx.scope
        and memory.scope_id == ctx.scope_id
        and memory.status in LIVE
    )


def _exact_match(candidate: Candidate, ctx: WriteContext) -> Memory | None:
    plan = read_plan(Memory)
    with hot_cursor() as cursor:
        row = cursor.execute(*_exact_read(candidate, ctx)).fetchone()
    return None if row is None else plan.instance(Memory, row)


def _exact_read(candidate: Candidate, ctx: WriteContext) -> Statement:
    params = [ctx.namespace, candidate.kind, ctx.scope, ctx.scope_id]
    sql = _EXACT_SQL.format(columns=read_plan(Memory).columns)
    return sql, [*params, content_hash(candidate.content)]


def _neighbours(
    vector: np.ndarray,
    candidate: Candidate,
    ctx: WriteContext,
    among: Collection[int] | None = None,
) -> list[tuple[int, float]]:
    """Live memories of the same kind and scope, nearest first: (id, cosine); ``among``
    restricts them to those ids."""
    if among is not None and not among:
        return []
    hits = vector_index.search(ctx.namespace, vector, SEMANTIC_NEIGHBOURS, candidate_ids=among)
    if not hits:
        return []
    sql = _LIVE_IDS_SQL.format(ids=", ".join(["%s"] * len(hits)))
    live = set(_live_ids(ctx, candidate.kind, sql, *(memory_id for memory_id, _ in hits)))
    return [(memory_id, score) for memory_id, score in hits if memory_id in live]


def _slot_holders(candidate: Candidate, ctx: WriteContext) -> list[Memory]:
    if not candidate.slot:
        return []
    ids = _live_ids(ctx, candidate.kind, _slot_sql(), candidate.slot)
    rows = memories_by_id(ids)
    return [rows[memory_id] for memory_id in sorted(rows)]


def _claim_holders(claim: Claim, ctx: WriteContext) -> list[tuple[Memory, Claim]]:
    """The live facts about the claim's subject and attribute (for a preference, those
    comparing the same things), oldest first."""
    plan = read_plan(Memory)
    with hot_cursor() as cursor:
        rows = cursor.execute(*_claim_read(claim, ctx)).fetchall()
    return _holders_of([plan.instance(Memory, row) for row in rows])


def _claim_read(claim: Claim, ctx: WriteContext) -> Statement:
    params = [ctx.namespace, "fact", ctx.scope, ctx.scope_id, claim.subject, claim.attribute]
    return _CLAIM_SQL.format(columns=read_plan(Memory).columns), params


def _holders_of(memories: list[Memory]) -> list[tuple[Memory, Claim]]:
    """The memories that hold a claim, with it (those of the claim's holder and predicate:
    ``decide`` keeps the ones about the same thing)."""
    held = [(memory, _stored_claim(memory)) for memory in memories]
    return [(memory, claim) for memory, claim in held if claim is not None]


def _stored_claim(memory: Memory) -> Claim | None:
    return from_columns(
        memory.claim_subject, memory.claim_attribute, memory.claim_value, memory.claim_polarity
    )


# --- Gather: what the decision weighs ---------------------------------------------------------


@dataclass
class _Gathered:
    """What ``_gather`` read about one candidate: the facts ``decide`` weighs, the rows they
    name by id (the latest read of each: what applying writes to) and the candidate's vector
    (None when the outcome was settled before it was embedded)."""

    ctx: WriteContext
    facts: Facts
    rows: dict[int, Memory] = field(default_factory=dict)
    held: dict[int, Held] = field(default_factory=dict)
    vector: np.ndarray | None = None

    def keep(self, memory: Memory, claim: Claim | None = None) -> Held:
        """``memory`` as the decision sees it (``claim``: its claim, read already)."""
        held = Held(
            memory.pk,
            _stored_claim(memory) if claim is None else claim,
            memory.confidence,
            SAID_AGAIN if memory.last_seen_at > memory.created_at else "",
            memory.slot,
            _same_message(memory, self.ctx),
        )
        self.rows[memory.pk] = memory
        self.held[memory.pk] = held
        return held


def _read_claim(candidate: Candidate) -> Claim | None:
    """A fact the attribute readers could not read (the rules' wording), read from its
    parse: "The user plays squash, usually on Tuesdays." claims about:squash, so "I quit
    squash" ends it. Offline only: a model's candidate says its claim or has none."""
    if candidate.kind != "fact" or not candidate.stage.startswith(("rules", "regex")):
        return None
    return _claim_of_sentence(candidate.content, timezone.localdate())


@lru_cache(maxsize=1024)
def _claim_of_sentence(content: str, day: date) -> Claim | None:
    """``claim_of_sentence``, remembered per sentence and day: the rules write the same
    canonical sentences again and again ("The user never deploys the app on Fridays."), and
    each read is a parse (~2 ms). A claim depends on the time (``day``, the cache's key)
    only through whether a time phrase dates, which makes a stay of a place."""
    return claim_of_sentence(content, timezone.now())


def _gather(candidate: Candidate, ctx: WriteContext, lock: ExitStack) -> _Gathered:
    """Read what decides the candidate's fate, in order, until ``settled`` says that the rest
    cannot change it. The last reads are made under the namespace's write lock, in the
    transaction ``lock`` holds open for applying the decision."""
    if _budget_exhausted(ctx):
        return _Gathered(ctx, Facts(New(candidate.kind), budget_exhausted=True))
    # The claim is read first (no database) for the look-ups below.
    claim = claim_of(candidate.kind, candidate.content, candidate.claim) or _read_claim(candidate)
    first = _first_reads(candidate, ctx, claim or None)
    new = New(
        candidate.kind,
        claim,
        candidate.slot,
        candidate.confidence,
        candidate.doubt,
        candidate.content,
        ctx.context,
    )
    got = _Gathered(ctx, Facts(new, earlier=first.earlier))
    got.facts = replace(
        got.facts,
        exact=None if first.exact is None else got.keep(first.exact),
        holders=tuple(got.keep(memory, theirs) for memory, theirs in first.holders),
    )
    if first.earlier is None and first.exact is None:
        # Its verdicts show the claim from here on; those of a duplicate by content never did.
        candidate.claim = claim
    if settled(got.facts):
        return got
    return _search(got, candidate, first, lock)


def _corrected(candidate: Candidate, ctx: WriteContext) -> list[Memory]:
    """The live memories of the candidate's kind and scope that the user's correction
    rewrites (``Candidate.replaces``: "make it seven" after "dinner for six")."""
    if not candidate.replaces:
        return []
    rows = memories_by_id(candidate.replaces)
    return [m for i, m in sorted(rows.items()) if _live_in_scope(m, candidate, ctx)]


def _naming(candidate: Candidate, ctx: WriteContext) -> list[Memory]:
    """The holder's live facts in scope that name what the candidate ends (``Candidate.ends``:
    "got rid of Netflix" ends "The user pays for Netflix every month"), whatever their claim:
    the keyword index finds them, their content must name it and be the holder's."""
    claim = candidate.claim
    if not candidate.ends or claim is None or claim.polarity != NEGATED:
        return []
    ids = keyword_index.matching_ids(ctx.namespace, candidate.ends)[-SEMANTIC_NEIGHBOURS:]
    return [
        m
        for _, m in sorted(memories_by_id(ids).items())
        if m.kind == "fact"
        and _live_in_scope(m, Candidate(kind="fact", content=""), ctx)
        and _said_of(m.content, claim.subject)
        and candidate.ends in m.content.lower()
        and m.claim_polarity != NEGATED
        and _only_about(m, candidate.ends)
        and _same_family(m, claim)
    ]


def _same_family(memory: Memory, claim: Claim) -> bool:
    """An ended opinion ("gone off true crime") ends opinions and plain sentences about the
    thing, not what the holder does with it ("listens to true crime podcasts")."""
    if not claim.attribute.startswith("opinion:"):
        return True
    return memory.claim_attribute == "" or memory.claim_attribute.startswith("opinion:")


def _said_of(content: str, holder: str) -> bool:
    """Whether a canonical sentence is about ``holder`` ("The user's dad drinks espresso."
    is the user's dad's, not the user's)."""
    text = content.lower()
    if holder == USER:
        if text.startswith("the user's "):  # "The user's favourite show is ...", not a relative's
            return not RELATION.match(text.removeprefix("the user's "))
        return text.startswith("the user ") or text.startswith("the user and ")
    return text.startswith(f"the {holder} ") or text.startswith(f"{holder} ")


_MORE_THAN_ONE = re.compile(r",|;|\band\b|\bso\b|\bbut\b", re.IGNORECASE)


def _only_about(memory: Memory, thing: str) -> bool:
    """Whether ending ``thing`` ends the whole memory: its claim is about it, or it says one
    thing only (a memory that also says something else is not retired whole)."""
    if memory.claim_attribute:
        return thing in f"{memory.claim_attribute} {memory.claim_value}".lower()
    return not _MORE_THAN_ONE.search(memory.content.rstrip("."))


def _search(got: _Gathered, candidate: Candidate, first: _First, lock: ExitStack) -> _Gathered:
    """The embedding, the slot's holders, the nearest vectors and the arbiter's verdicts."""
    ctx = got.ctx
    got.vector = get_embedder().embed([candidate.content])[0]
    # What the searches below read, or less (counters only grow): a reading before them.
    seen = first.version or vector_index.namespace_version(ctx.namespace)
    slotted = _slot_holders(candidate, ctx) if first.slotted is None else first.slotted
    hits = _neighbours(got.vector, candidate, ctx)
    got.facts = replace(
        got.facts,
        slotted=tuple(got.keep(memory) for memory in slotted),
        corrects=tuple(got.keep(memory) for memory in _corrected(candidate, ctx)),
        named=tuple(got.keep(memory) for memory in _naming(candidate, ctx)),
        neighbours=_nearby(got, hits, candidate, _close()),
    )
    if settled(got.facts):
        return got  # a near duplicate: nothing is asked, no lock taken
    band = arbiter_band(got.facts)
    if band:
        got.facts = replace(got.facts, arbitrations=_arbitrate(candidate, band, got.rows))
    return _under_lock(got, candidate, seen, lock)


def _under_lock(
    got: _Gathered, candidate: Candidate, seen: tuple[int, int], lock: ExitStack
) -> _Gathered:
    """The checks again under the write lock: another worker may have stored the same
    content, or another phrasing of it, since the reads above (two messages saying one
    thing, extracted at once). One lock per namespace, as a near duplicate has its own hash."""
    ctx = got.ctx
    lock.enter_context(transaction.atomic())
    lock_for_write(f"memory:{ctx.namespace}")
    locked = _locked_reads(candidate, ctx, got.facts.new.claim)
    again = Locked(
        erased=not locked.there,
        raced=None if locked.raced is None else got.keep(locked.raced),
        holders=tuple(got.keep(memory, theirs) for memory, theirs in locked.holders),
    )
    got.facts = replace(got.facts, locked=again)
    if settled(got.facts):
        return got
    late = _written_since(seen, got, candidate, locked.version)
    got.facts = replace(got.facts, locked=replace(again, late=late))
    ids = to_confirm(got.facts)
    if ids:
        got.facts = _confirmed(got.facts, _confirmed_by_a_person(ids))
    return got


def _close() -> float:
    """The cosine from which a neighbour can matter: the arbiter's band, or a near duplicate."""
    return min(settings.TOPIC_THRESHOLD, settings.DEDUP_THRESHOLD)


def _nearby(
    got: _Gathered,
    hits: list[tuple[int, float]],
    candidate: Candidate,
    threshold: float,
    *,
    fresh: bool = False,
) -> tuple[Neighbour, ...]:
    """The neighbours at ``threshold`` or above, nearest first, as the decision weighs them:
    their rows (one read for those not read yet, or for all with ``fresh``; those deleted
    since the search are left out) and, at the dedup threshold, the meaning-carrying tokens
    in which each differs from the candidate."""
    close = [(memory_id, score) for memory_id, score in hits if score >= threshold]
    wanted = [memory_id for memory_id, _ in close if fresh or memory_id not in got.rows]
    read = memories_by_id(wanted) if wanted else {}
    mine: frozenset[str] | None = None
    found: list[Neighbour] = []
    for memory_id, score in close:
        if memory_id in read:
            held = got.keep(read[memory_id])
        elif memory_id in got.held and not fresh:
            held = got.held[memory_id]
        else:
            continue  # deleted since the search
        differs: tuple[str, ...] = ()
        if score >= settings.DEDUP_THRESHOLD:
            mine = frozenset(salient_tokens(candidate.content)) if mine is None else mine
            differs = tuple(sorted(mine ^ salient_tokens(got.rows[memory_id].content)))
        found.append(Neighbour(held, score, differs))
    return tuple(found)


def _arbitrate(
    candidate: Candidate, band: tuple[Neighbour, ...], rows: dict[int, Memory]
) -> tuple[Arbitration, ...]:
    """The arbiter's verdict on the candidate against each memory of the band."""
    chat = get_chat()
    verdicts = []
    for near in band:
        existing = rows[near.memory.memory_id].content
        answer = chat.arbitrate(existing=existing, candidate=candidate.content)
        verdicts.append(
            Arbitration(near.memory, near.cosine, answer.verdict, answer.reason, chat.name)
        )
    return tuple(verdicts)


def _written_since(
    seen: tuple[int, int],
    got: _Gathered,
    candidate: Candidate,
    now: tuple[int, int] | None = None,
) -> tuple[Neighbour, ...]:
    """The neighbours at the dedup threshold among the vectors written in the namespace
    after version ``seen`` (only those: the earlier ones were searched); all of them when
    the change log no longer reaches back (or the table was replaced). ``now``: the
    counters as read under the lock already (``_locked_reads``)."""
    ctx = got.ctx
    if now is None:
        now = vector_index.namespace_version(ctx.namespace)
    if now == seen or got.vector is None:
        return ()  # nothing written meanwhile: the usual case, one query
    among = vector_index.changed_ids(ctx.namespace, seen[1], now[1]) if now[0] == seen[0] else None
    hits = _neighbours(got.vector, candidate, ctx, among)
    return _nearby(got, hits, candidate, settings.DEDUP_THRESHOLD, fresh=True)


def _confirmed_by_a_person(ids: Collection[int]) -> set[int]:
    """Those of ``ids`` a person confirmed: an edit, an approval, a conflict decided (each is a
    person's, or an approver's, word)."""
    decided = MemoryEvent.objects.filter(memory_id__in=list(ids)).filter(
        (Q(event=MemoryEvent.Event.EDITED) & ~Q(reason__startswith="undo of"))
        | Q(event=MemoryEvent.Event.PROMOTED, reason="approved")
        | Q(event=MemoryEvent.Event.PROMOTED, reason__startswith="conflict ")
    )
    return set(decided.values_list("memory_id", flat=True))


def _confirmed(facts: Facts, ids: set[int]) -> Facts:
    """``facts`` with each memory of ``ids`` confirmed by a person, wherever it is held."""

    def mark(held: Held) -> Held:
        return replace(held, confirmed=BY_A_PERSON) if held.memory_id in ids else held

    return replace(
        facts,
        holders=tuple(map(mark, facts.holders)),
        slotted=tuple(map(mark, facts.slotted)),
        corrects=tuple(map(mark, facts.corrects)),
        named=tuple(map(mark, facts.named)),
        arbitrations=tuple(replace(a, memory=mark(a.memory)) for a in facts.arbitrations),
        locked=replace(facts.locked, holders=tuple(map(mark, facts.locked.holders))),
    )


# --- Apply ----------------------------------------------------------------------------------


def _apply(decision: Decision, got: _Gathered, candidate: Candidate) -> Verdict:
    """Do what was decided (in the transaction of the reads under the lock, when it got that
    far): touch the duplicate, or store the memory with what it supersedes and the pairs a
    person is asked about. The Verdict says what was done, in the decision's words."""
    ctx = got.ctx
    if decision.outcome == "ignore":
        return Verdict(
            candidate, decision.verdict, decision.reason, matched_memory_id=decision.matched
        )
    if decision.outcome == "duplicate" and decision.matched is not None:
        events = touch(got.rows[decision.matched], candidate, ctx, reason=decision.reason)
        touched: dict[str, object] = {"events": events}
        if decision.cosine is not None:
            touched["cosine"] = round(decision.cosine, 4)
        return Verdict(
            candidate,
            "duplicate",
            decision.reason,
            matched_memory_id=decision.matched,
            extra=touched,
        )
    if got.vector is None:
        raise ValueError(f"{decision.outcome} before the candidate was embedded")
    supersede = [(got.rows[memory_id], why) for memory_id, why in decision.supersede]
    ask = [(got.rows[memory_id], why) for memory_id, why in decision.ask]
    memory = store(candidate, got.vector, ctx, supersede, ask)
    extra: dict[str, object] = {"status": memory.status}
    if ask:
        extra["conflicts"] = [old.pk for old, _ in ask]
        extra["asks"] = ask[0][1]
    if decision.not_duplicates:
        extra["not_duplicates"] = list(decision.not_duplicates)
    if decision.arbitrations:
        extra["arbitrations"] = list(decision.arbitrations)
    if supersede:
        extra["superseded"] = [old.pk for old, _ in supersede]
    return Verdict(candidate, "stored", decision.reason, memory_id=memory.pk, extra=extra)


def commit_candidate(candidate: Candidate, ctx: WriteContext) -> Verdict:
    """Gather what is known about one candidate, decide once what happens to it, and apply
    that. Raises ProviderError on provider failure."""
    with ExitStack() as lock:  # the transaction of the reads under the lock, when taken
        got = _gather(candidate, ctx, lock)
        return _apply(decide(got.facts), got, candidate)


def contradicting(memory: Memory) -> list[Memory]:
    """The other live facts of the memory's namespace and scope whose claim contradicts its
    claim (another value or polarity of the same thing), oldest first."""
    claim = _stored_claim(memory)
    if claim is None or memory.kind != "fact":
        return []
    ctx = WriteContext(
        namespace=memory.namespace, actor="", scope=memory.scope, scope_id=memory.scope_id
    )
    return [
        other
        for other, theirs in _claim_holders(claim, ctx)
        if other.pk != memory.pk and conflicts(claim, theirs)
    ]


def open_contradictions(memory: Memory) -> list[int]:
    """Ask a person about each other live fact whose claim contradicts ``memory``'s: two
    memories the write path did not decide between (an edit gave one a new claim; claims
    read after an upgrade). The newer word is the ``new`` side (the edited memory, else the
    later one). A pair asked about before is not asked again. Returns the conflicts' ids."""
    if memory.status not in LIVE:
        return []
    opened: list[int] = []
    for other in contradicting(memory):
        asked = Conflict.objects.filter(
            Q(old=other, new=memory) | Q(old=memory, new=other)
        ).exists()
        if asked:
            continue
        why = (
            f"memories {other.pk} and {memory.pk} are both live and claim another "
            f"{memory.claim_subject} {memory.claim_attribute}: the write path did not decide "
            "between them"
        )
        conflict = Conflict.objects.create(
            namespace=memory.namespace, old=other, new=memory, reason=why
        )
        waiting.conflict_opened(conflict)
        opened.append(conflict.pk)
    return opened
