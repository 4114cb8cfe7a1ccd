"""A memory's life after it is written: approve, archive, restore, edit, reverse, purge.

Every change is written to the memory's history with its actor and reason.
Used by the JSON API (PATCH /api/memories/{id}, DELETE /api/skills/{id}/memories),
the dashboard and the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from memories.extraction.claims import claim_of, stored_value
from memories.extraction.firewall import screened
from memories.models import Memory, MemoryEvent, MemoryStatus
from memories.store import vector_index
from memories.write.dedup import LIVE, open_contradictions
from memories.write.forgetting import forget_memories
from memories.write.services import content_hash, embedding_text, memory_history_record
from spaceduck.core.errors import InvalidInput, PermissionDenied
from spaceduck.core.limits import check_memory_fields
from spaceduck.core.providers import get_embedder

EDITABLE = (
    "title",
    "content",
    "summary",
    "tags",
    "importance",
    "confidence",
    "kind",
    "procedure_subtype",
    "scope",
    "scope_id",
    "occurred_at",
    "expires_at",
    "valid_from",
    "valid_until",
)
STATUS_CHANGES = ("active", "archived", "candidate")


def _save(memory: Memory, fields: list[str]) -> None:
    memory.updated_at = timezone.now()
    memory.save(update_fields=[*fields, "updated_at"])


def memory_approve(*, memory: Memory, actor: str, can_approve: bool) -> Memory:
    """candidate -> active: a person (the `approve` permission) vouches for it."""
    if not can_approve:
        raise PermissionDenied("making a candidate memory active needs the 'approve' permission")
    if memory.status != MemoryStatus.CANDIDATE:
        raise InvalidInput(f"only a candidate memory can be approved; this one is {memory.status}")
    with transaction.atomic():
        memory.status = MemoryStatus.ACTIVE
        _save(memory, ["status"])
        memory_history_record(
            memory=memory, event=MemoryEvent.Event.PROMOTED, actor=actor, reason="approved"
        )
    return memory


def memory_archive(*, memory: Memory, actor: str, reason: str = "") -> Memory:
    if memory.status == MemoryStatus.ARCHIVED:
        return memory
    with transaction.atomic():
        before = memory.status
        memory.status = MemoryStatus.ARCHIVED
        _save(memory, ["status"])
        memory_history_record(
            memory=memory,
            event=MemoryEvent.Event.ARCHIVED,
            actor=actor,
            reason=reason,
            data={"from": before},
        )
    return memory


def memory_restore(*, memory: Memory, actor: str, reason: str = "") -> Memory:
    """archived -> active; a superseded memory is restored by reversing its supersession."""
    if memory.status == MemoryStatus.SUPERSEDED:
        return memory_reverse_supersession(memory=memory, actor=actor, reason=reason)
    if memory.status != MemoryStatus.ARCHIVED:
        raise InvalidInput(
            f"only an archived or superseded memory can be restored; this one is {memory.status}"
        )
    with transaction.atomic():
        memory.status = MemoryStatus.ACTIVE
        _save(memory, ["status"])
        memory_history_record(
            memory=memory, event=MemoryEvent.Event.RESTORED, actor=actor, reason=reason
        )
    return memory


def memory_reverse_supersession(*, memory: Memory, actor: str, reason: str = "") -> Memory:
    """A person overrules a supersession: the old memory is live again, its superseder archived."""
    if memory.status != MemoryStatus.SUPERSEDED:
        raise InvalidInput(f"memory {memory.pk} is not superseded")
    with transaction.atomic():
        superseder = memory.superseded_by
        memory.status, memory.superseded_by = MemoryStatus.ACTIVE, None
        _save(memory, ["status", "superseded_by"])
        memory_history_record(
            memory=memory,
            event=MemoryEvent.Event.RESTORED,
            actor=actor,
            reason=reason or "supersession reversed",
            data={"was_superseded_by": superseder.pk if superseder else None},
        )
        if superseder is not None and superseder.status in LIVE:
            memory_archive(
                memory=superseder,
                actor=actor,
                reason=f"its supersession of memory {memory.pk} was reversed",
            )
    return memory


def status_change_error(current: str, new: str) -> str | None:
    """Why ``current`` -> ``new`` is not a status change a person or agent may make, or None.

    The rules of memory_set_status, without side effects: forms ask first, so a
    refused change is a message beside the field instead of a failed save.
    """
    if new == current:
        return None
    if new == MemoryStatus.ARCHIVED:
        return None
    if new == MemoryStatus.ACTIVE and current in (
        MemoryStatus.CANDIDATE,
        MemoryStatus.ARCHIVED,
        MemoryStatus.SUPERSEDED,
    ):
        return None
    if new == MemoryStatus.ACTIVE:
        return (
            f"a {current} memory cannot be made active by hand; "
            "only candidate, archived or superseded ones"
        )
    return f"status can be set to active (approve/restore) or archived, not {new!r}"


def memory_set_status(*, memory: Memory, status: str, actor: str, can_approve: bool) -> Memory:
    if status == "active" and memory.status == MemoryStatus.CANDIDATE:
        return memory_approve(memory=memory, actor=actor, can_approve=can_approve)
    if status == "archived":
        return memory_archive(memory=memory, actor=actor)
    if status == "active":
        return memory_restore(memory=memory, actor=actor)
    raise InvalidInput(f"status can be set to active (approve/restore) or archived, not {status!r}")


# What a person can do to many memories at once (the review queue, admin actions).
BULK_DECISIONS = {"approve", "reject", "archive", "restore"}


@dataclass(frozen=True)
class BulkOutcome:
    changed: list[int]
    skipped: dict[int, str]  # memory id -> why it was left as it was
    # memory id -> (status before, status after): what an undo puts back
    statuses: dict[int, tuple[str, str]] = field(default_factory=dict)


def memories_decide(
    *, memory_ids: Iterable[int], decision: str, actor: str, can_approve: bool
) -> BulkOutcome:
    """Approve (candidate -> active), reject (candidate -> archived), archive or restore
    each memory; one that does not allow it is skipped with the reason, the others change."""
    if decision not in BULK_DECISIONS:
        raise InvalidInput(f"decision must be one of {', '.join(sorted(BULK_DECISIONS))}")
    if decision == "approve" and not can_approve:
        raise PermissionDenied("making a candidate memory active needs the 'approve' permission")
    ids = sorted({int(i) for i in memory_ids})
    if not ids:
        raise InvalidInput("choose at least one memory")
    found = {m.pk: m for m in Memory.objects.filter(pk__in=ids)}
    changed: list[int] = []
    skipped: dict[int, str] = {}
    statuses: dict[int, tuple[str, str]] = {}
    for memory_id in ids:
        memory = found.get(memory_id)
        if memory is None:
            skipped[memory_id] = "does not exist"
            continue
        why = _decision_error(memory, decision)
        if why is not None:
            skipped[memory_id] = why
            continue
        before = memory.status
        if decision == "approve":
            memory_approve(memory=memory, actor=actor, can_approve=can_approve)
        elif decision == "restore":
            memory_restore(memory=memory, actor=actor)
        else:
            memory_archive(memory=memory, actor=actor, reason=f"{decision}ed")
        changed.append(memory_id)
        statuses[memory_id] = (before, memory.status)
    return BulkOutcome(changed=changed, skipped=skipped, statuses=statuses)


def memories_undo(*, statuses: dict[int, tuple[str, str]], actor: str, what: str) -> BulkOutcome:
    """Put back the statuses a bulk decision changed (``BulkOutcome.statuses``): each memory
    still as the decision left it goes back, with an ``edited`` event saying it was an undo;
    one that changed since is skipped with why. Superseded memories are never undone here
    (a supersession is reversed from the memory's page)."""
    changed: list[int] = []
    skipped: dict[int, str] = {}
    found = Memory.objects.in_bulk(sorted(statuses))
    for memory_id, (before, after) in sorted(statuses.items()):
        memory = found.get(memory_id)
        if memory is None:
            skipped[memory_id] = "does not exist"
        elif memory.status != after or MemoryStatus.SUPERSEDED in (before, after):
            skipped[memory_id] = f"is {memory.status} now"
        else:
            with transaction.atomic():
                memory.status = before
                _save(memory, ["status"])
                memory_history_record(
                    memory=memory,
                    event=MemoryEvent.Event.EDITED,
                    actor=actor,
                    reason=f"undo of a bulk {what}",
                    data={"status": {"from": after, "to": before}},
                )
            changed.append(memory_id)
    return BulkOutcome(changed=changed, skipped=skipped)


def _decision_error(memory: Memory, decision: str) -> str | None:
    if decision in ("approve", "reject") and memory.status != MemoryStatus.CANDIDATE:
        return f"is {memory.status}, not a candidate"
    if decision == "archive" and memory.status == MemoryStatus.ARCHIVED:
        return "is archived already"
    if decision == "restore" and memory.status not in (
        MemoryStatus.ARCHIVED,
        MemoryStatus.SUPERSEDED,
    ):
        return f"is {memory.status}; only archived or superseded memories can be restored"
    return None


def memory_edit(*, memory: Memory, changes: dict[str, Any], actor: str) -> Memory:
    """Edit fields; a new content is re-hashed, re-embedded and re-indexed."""
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise InvalidInput(f"not editable: {', '.join(unknown)}; editable: {', '.join(EDITABLE)}")
    # The lengths every front end shares (spaceduck.core.limits): the API's schema says them,
    # and the dashboard, the admin, the CLI and spaceduck.store get the same refusal here.
    check_memory_fields(changes)
    # The same firewall as every other write: an edit may not smuggle a credential in (its
    # title, content, summary or tags).
    screened("memory", changes)
    before = {name: _jsonable(getattr(memory, name)) for name in changes}
    for name, value in changes.items():
        setattr(memory, name, value)
    try:
        memory.full_clean(
            exclude=["superseded_by", "source_message", "source_thread", "content_hash"]
        )
    except ValidationError as exc:
        raise InvalidInput(
            "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
        ) from None
    content_changed = "content" in changes and before["content"] != memory.content
    vector = get_embedder().embed([embedding_text(memory)])[0] if content_changed else None
    with transaction.atomic():
        fields = list(changes)
        if content_changed:
            memory.content_hash = content_hash(memory.content)
            fields.append("content_hash")
        if content_changed or "kind" in changes:
            fields += _claim_again(memory)
        _save(memory, fields)
        if vector is not None:
            vector_index.upsert([(memory.pk, memory.namespace, vector)])
        memory_history_record(
            memory=memory, event=MemoryEvent.Event.EDITED, actor=actor, data={"before": before}
        )
        if content_changed or "kind" in changes:
            open_contradictions(memory)  # its new claim may contradict another memory
    return memory


def _claim_again(memory: Memory) -> list[str]:
    """Read what the edited memory claims (the claim columns it changes)."""
    claim = claim_of(memory.kind, memory.content)
    memory.claim_subject = claim.subject if claim else ""
    memory.claim_attribute = claim.attribute if claim else ""
    memory.claim_value = stored_value(claim)[:255] if claim else ""
    memory.claim_polarity = claim.polarity if claim else ""
    memory.claim_mood = claim.mood if claim else ""
    return ["claim_subject", "claim_attribute", "claim_value", "claim_polarity", "claim_mood"]


def _jsonable(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


def skill_purge(*, skill_id: str, namespaces: Iterable[str] | None, actor: str) -> int:
    """Delete every memory a skill wrote, as ``memory_delete`` does: a ``purged`` tombstone
    each, no copy of what they said (FTS and vector rows go by trigger)."""
    if not skill_id.strip():
        raise InvalidInput("skill id must not be empty")
    memories = Memory.objects.filter(source_skill_id=skill_id)
    if namespaces is not None:
        memories = memories.filter(namespace__in=list(namespaces))
    doomed = list(memories)
    forget_memories(
        doomed, actor=actor, reason=f"skill {skill_id} uninstalled", event=MemoryEvent.Event.PURGED
    )
    return len(doomed)


def claims_backfill(*, batch: int = 1000) -> tuple[int, int, int]:
    """Read the claims of live facts and episodes written before claims existed (migration
    0022 added the columns empty); (claims read, memories examined, conflicts opened: live
    facts whose claims now contradict each other go to the conflict inbox). Safe to run
    again: a memory with no claim the rules can read is examined again, and left as it is;
    a pair asked about once is not asked again."""
    read = examined = opened = 0
    after = 0
    while True:
        rows = list(
            Memory.objects.filter(
                id__gt=after,
                claim_attribute="",
                kind__in=["fact", "episode"],
                status__in=["candidate", "active", "stale"],
            ).order_by("id")[:batch]
        )
        if not rows:
            return read, examined, opened
        for memory in rows:
            _claim_again(memory)
            if memory.claim_attribute:
                Memory.objects.filter(pk=memory.pk).update(
                    claim_subject=memory.claim_subject,
                    claim_attribute=memory.claim_attribute,
                    claim_value=memory.claim_value,
                    claim_polarity=memory.claim_polarity,
                    claim_mood=memory.claim_mood,
                )
                read += 1
                opened += len(open_contradictions(memory))
        examined += len(rows)
        after = rows[-1].pk
