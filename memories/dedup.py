"""Keeping memory clean at write time: exact dedup, semantic dedup, contradictions.

For each candidate that passed the extraction stages (or came in through the
API), ``commit_candidate`` decides, against the live memories of the same
namespace and kind:

1. task budget: a task run writes at most ``max_memory_writes`` memories;
2. exact duplicate (normalised content hash, same scope): touch it, store nothing;
3. identity slot: a new value for a slot supersedes the old value, whatever the cosine;
4. cosine >= DEDUP_THRESHOLD (0.92): near-duplicate, touch it, store nothing;
5. TOPIC_THRESHOLD (0.60) <= cosine < 0.92: same topic, ask the arbiter; on a
   contradiction the old memory is superseded by the new one in one transaction;
6. otherwise: store.

Live means candidate, active or stale: re-learning a fact that was superseded
earlier creates a new memory instead of matching the dead one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memories import vector_index
from memories.extraction.types import CONFIDENCE, Candidate, Verdict
from memories.models import Memory, MemoryEvent, MemoryStatus, Message, Thread
from memories.services import content_hash, memory_history_record
from spaceduck.providers import get_chat, get_embedder

LIVE = (MemoryStatus.CANDIDATE, MemoryStatus.ACTIVE, MemoryStatus.STALE)
SEMANTIC_NEIGHBOURS = 20  # nearest vectors examined; enough when kinds mix in a namespace
MAX_ARBITRATIONS = 5  # same-topic memories the arbiter is asked about per candidate
SEEN_CONFIDENCE_STEP = 0.15  # observed again: one bucket more certain


@dataclass
class WriteContext:
    """Where a candidate comes from and where it goes."""

    namespace: str
    actor: str
    source_type: str = "api"
    message: Message | None = None
    thread: Thread | None = None
    task_id: str = ""
    skill_id: str = ""
    scope: str = "global"
    scope_id: str = ""
    max_memory_writes: int | None = None
    now: datetime = field(default_factory=timezone.now)


def initial_status(confidence: float) -> str:
    return (
        MemoryStatus.ACTIVE if confidence >= settings.ACTIVE_CONFIDENCE else MemoryStatus.CANDIDATE
    )


def _live(ctx: WriteContext, kind: str) -> object:
    return Memory.objects.filter(
        namespace=ctx.namespace, kind=kind, status__in=LIVE, scope=ctx.scope, scope_id=ctx.scope_id
    )


def _same_message(memory: Memory, ctx: WriteContext) -> bool:
    return ctx.message is not None and memory.source_message_id == ctx.message.pk


def touch(memory: Memory, candidate: Candidate, ctx: WriteContext, reason: str) -> list[str]:
    """Observed again: refresh last_seen_at, raise confidence, promote or revive it."""
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
    memory.save(update_fields=["last_seen_at", "confidence", "status"])
    for event in events:
        memory_history_record(memory=memory, event=event, actor=ctx.actor, reason=reason)
    return [str(e) for e in events]


def _new_memory(candidate: Candidate, ctx: WriteContext) -> Memory:
    return Memory(
        namespace=ctx.namespace,
        kind=candidate.kind,
        title=candidate.title,
        content=candidate.content,
        summary=candidate.summary,
        tags=candidate.tags,
        importance=candidate.importance,
        confidence=candidate.confidence,
        status=initial_status(candidate.confidence),
        scope=ctx.scope,
        scope_id=ctx.scope_id,
        procedure_subtype=candidate.procedure_subtype,
        slot=candidate.slot,
        source_type=ctx.source_type,
        source_message=ctx.message,
        source_thread=ctx.thread,
        source_task_id=ctx.task_id,
        source_skill_id=ctx.skill_id,
        content_hash=content_hash(candidate.content),
        occurred_at=candidate.occurred_at,
        created_at=ctx.now,
        updated_at=ctx.now,
        last_seen_at=ctx.now,
    )


def store(
    candidate: Candidate,
    vector: np.ndarray,
    ctx: WriteContext,
    supersede: list[tuple[Memory, str]] = (),  # type: ignore[assignment]
) -> Memory:
    """Insert the memory and supersede the old ones in ONE transaction."""
    with transaction.atomic():
        memory = _new_memory(candidate, ctx)
        memory.save()
        vector_index.upsert([(memory.pk, memory.namespace, vector)])
        memory_history_record(
            memory=memory,
            event=MemoryEvent.Event.CREATED,
            actor=ctx.actor,
            reason=f"{candidate.stage} stage",
        )
        for old, reason in supersede:
            old.status = MemoryStatus.SUPERSEDED
            old.superseded_by = memory
            old.updated_at = ctx.now
            old.save(update_fields=["status", "superseded_by", "updated_at"])
            memory_history_record(
                memory=old,
                event=MemoryEvent.Event.SUPERSEDED,
                actor=ctx.actor,
                reason=reason,
                data={"superseded_by": memory.pk},
            )
    return memory


def _budget_exhausted(ctx: WriteContext) -> bool:
    if not ctx.task_id:
        return False
    limit = (
        settings.TASK_MAX_MEMORY_WRITES if ctx.max_memory_writes is None else ctx.max_memory_writes
    )
    return Memory.objects.filter(source_task_id=ctx.task_id).count() >= limit


def _exact_match(candidate: Candidate, ctx: WriteContext) -> Memory | None:
    return (
        _live(ctx, candidate.kind)  # type: ignore[attr-defined]
        .filter(content_hash=content_hash(candidate.content))
        .order_by("-id")
        .first()
    )


def _neighbours(
    vector: np.ndarray, candidate: Candidate, ctx: WriteContext
) -> list[tuple[Memory, float]]:
    """Live memories of the same kind and scope, nearest first, with their cosine."""
    hits = vector_index.search(ctx.namespace, vector, SEMANTIC_NEIGHBOURS)
    rows = _live(ctx, candidate.kind).in_bulk([memory_id for memory_id, _ in hits])  # type: ignore[attr-defined]
    return [(rows[memory_id], score) for memory_id, score in hits if memory_id in rows]


def _slot_holders(candidate: Candidate, ctx: WriteContext) -> list[Memory]:
    if not candidate.slot:
        return []
    return list(_live(ctx, candidate.kind).filter(slot=candidate.slot))  # type: ignore[attr-defined]


def _duplicate(
    memory: Memory, candidate: Candidate, ctx: WriteContext, why: str, score: float | None
) -> Verdict:
    if _same_message(memory, ctx):
        # A re-run of the same message: it already produced this memory; change nothing.
        return Verdict(candidate, "already_extracted", why, matched_memory_id=memory.pk)
    events = touch(memory, candidate, ctx, reason=why)
    extra: dict[str, object] = {"events": events}
    if score is not None:
        extra["cosine"] = round(score, 4)
    return Verdict(candidate, "duplicate", why, matched_memory_id=memory.pk, extra=extra)


def _arbitrate(
    candidate: Candidate, neighbours: list[tuple[Memory, float]]
) -> tuple[list[tuple[Memory, str]], list[dict[str, object]]]:
    """Ask the arbiter about same-topic memories; return those to supersede and the verdicts."""
    chat = get_chat()
    supersede: list[tuple[Memory, str]] = []
    verdicts: list[dict[str, object]] = []
    band = [
        (m, s) for m, s in neighbours if settings.TOPIC_THRESHOLD <= s < settings.DEDUP_THRESHOLD
    ]
    for memory, score in band[:MAX_ARBITRATIONS]:
        if memory.slot and candidate.slot and memory.slot != candidate.slot:
            continue  # different subjects: only the same slot can be superseded
        answer = chat.arbitrate(existing=memory.content, candidate=candidate.content)
        verdicts.append(
            {
                "memory_id": memory.pk,
                "cosine": round(score, 4),
                "verdict": answer.verdict,
                "reason": answer.reason,
                "arbiter": chat.name,
            }
        )
        if answer.verdict == "contradiction":
            supersede.append((memory, f"contradicted ({chat.name} arbiter: {answer.reason})"))
    return supersede, verdicts


def commit_candidate(candidate: Candidate, ctx: WriteContext) -> Verdict:
    """Decide and apply what happens to one candidate. Raises ProviderError on provider failure."""
    if _budget_exhausted(ctx):
        return Verdict(candidate, "rejected", "budget_exhausted")
    exact = _exact_match(candidate, ctx)
    if exact is not None:
        return _duplicate(exact, candidate, ctx, "exact duplicate (content hash)", None)
    vector = get_embedder().embed([candidate.content])[0]
    supersede = [
        (m, f"slot '{candidate.slot}' has a new value") for m in _slot_holders(candidate, ctx)
    ]
    neighbours = [] if supersede else _neighbours(vector, candidate, ctx)
    if neighbours and neighbours[0][1] >= settings.DEDUP_THRESHOLD:
        memory, score = neighbours[0]
        return _duplicate(memory, candidate, ctx, f"near duplicate (cosine {score:.3f})", score)
    arbitrations: list[dict[str, object]] = []
    if neighbours:
        supersede, arbitrations = _arbitrate(candidate, neighbours)
    memory = store(candidate, vector, ctx, supersede)
    extra: dict[str, object] = {"status": memory.status}
    if arbitrations:
        extra["arbitrations"] = arbitrations
    if supersede:
        extra["superseded"] = [old.pk for old, _ in supersede]
    reason = "superseded older memory" if supersede else "new memory"
    return Verdict(candidate, "stored", reason, memory_id=memory.pk, extra=extra)
