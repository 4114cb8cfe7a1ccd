"""A memory's life after it is written: approve, archive, restore, edit, reverse, purge.

Every change is written to the memory's history with its actor and reason.
Used by the JSON API (PATCH /api/memories/{id}, DELETE /api/skills/{id}/memories),
the dashboard and the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction

from memories.models import Memory, MemoryEvent, MemoryStatus, utc_text
from memories.write import conflicts
from memories.write.dedup import LIVE, open_contradictions
from memories.write.edits import (
    claim_again,
    jsonable,
    memory_edit,
    save_changed,
    version_before,
)
from memories.write.forgetting import forget_memories
from memories.write.services import memory_history_record
from spaceduck.core.errors import InvalidInput, PermissionDenied, ServiceError

STATUS_CHANGES = ("active", "archived", "candidate")


def memory_approve(*, memory: Memory, actor: str, can_approve: bool) -> Memory:
    """candidate -> active: a person (the `approve` permission) vouches for it. Every way of
    approving comes here (the queue, its page, the API, the admin); a candidate waiting in
    the conflict inbox is the new one being right: its conflicts are decided as replace."""
    if not can_approve:
        raise PermissionDenied("making a candidate memory active needs the 'approve' permission")
    if memory.status != MemoryStatus.CANDIDATE:
        raise InvalidInput(f"only a candidate memory can be approved; this one is {memory.status}")
    with transaction.atomic():
        if conflicts.approve_new(memory=memory, actor=actor):
            memory.refresh_from_db()
            return memory
        memory.status = MemoryStatus.ACTIVE
        save_changed(memory, ["status"])
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
        save_changed(memory, ["status"])
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
        save_changed(memory, ["status"])
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
        save_changed(memory, ["status", "superseded_by"])
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
    still as the decision left it goes back, with an ``undone`` event saying what it undid;
    one that changed since is skipped with why. Superseded memories are never undone here
    (a supersession is reversed from the memory's page). An approval that decided the
    candidate's conflicts (``memory_approve``) is undone as those decisions are
    (``conflicts.conflict_undo``: the replaced memories live again, the conflict open)."""

    changed: list[int] = []
    skipped: dict[int, str] = {}
    found = Memory.objects.in_bulk(sorted(statuses))
    for memory_id, (before, after) in sorted(statuses.items()):
        memory = found.get(memory_id)
        decided = None
        if memory is not None and (before, after) == ("candidate", "active"):
            decided = conflicts.promoted_by(memory)
        if memory is None:
            skipped[memory_id] = "does not exist"
        elif memory.status != after or MemoryStatus.SUPERSEDED in (before, after):
            skipped[memory_id] = f"is {memory.status} now"
        elif decided is not None:
            try:
                conflicts.conflict_undo(conflict=decided, actor=actor, can_approve=True)
            except ServiceError as exc:
                skipped[memory_id] = f"keeps its conflict's decision: {exc}"
            else:
                changed.append(memory_id)
        else:
            with transaction.atomic():
                memory.status = before
                save_changed(memory, ["status"])
                memory_history_record(
                    memory=memory,
                    event=MemoryEvent.Event.UNDONE,
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


def memory_restore_version(*, memory: Memory, event_id: int, actor: str) -> list[str]:
    """Put back the fields an edit changed, as they were before it (the memory's page's
    *Restore this version*): a new edit through ``memory_edit`` (limits, firewall,
    re-embedding, history), so it can itself be restored away. Returns the fields changed;
    InvalidInput when the entry is not an edit of this memory or the memory holds that
    version already."""
    event = MemoryEvent.objects.filter(pk=event_id, memory_id=memory.pk).first()
    version = version_before(event) if event is not None else {}
    if event is None or not version:
        raise InvalidInput(f"history entry {event_id} is not an edit of memory {memory.pk}")
    changes = {
        name: value
        for name, value in version.items()
        if jsonable(value) != jsonable(getattr(memory, name))
    }
    if not changes:
        raise InvalidInput("the memory holds this version already: nothing to restore")
    when = utc_text(event.created_at)
    memory_edit(
        memory=memory,
        changes=changes,
        actor=actor,
        reason=f"restored the version before the edit of {when}",
    )
    return sorted(changes)


def restore_to_undo(memory: Memory) -> MemoryEvent | None:
    """The restore ``memory_undo_restore`` would undo: its newest status change, when that
    is a person's restore (of an archived or superseded memory) and it is active since."""
    if memory.status != MemoryStatus.ACTIVE:
        return None
    last = (
        MemoryEvent.objects.filter(memory_id=memory.pk, event__in=_STATUS_EVENTS)
        .order_by("-created_at", "-id")
        .first()
    )
    return last if last is not None and last.event == MemoryEvent.Event.RESTORED else None


# The events that change a memory's status (an undo looks at the newest of them).
_STATUS_EVENTS = (
    MemoryEvent.Event.PROMOTED,
    MemoryEvent.Event.SUPERSEDED,
    MemoryEvent.Event.ARCHIVED,
    MemoryEvent.Event.RESTORED,
    MemoryEvent.Event.STALE,
    MemoryEvent.Event.ACTIVATED,
    MemoryEvent.Event.UNDONE,
)


def memory_undo_restore(*, memory: Memory, actor: str) -> Memory:
    """Undo a restore: an archived memory goes back to the archive; one whose supersession
    was reversed is superseded again by the same memory, and that memory (archived by the
    reversal) is live again. Each is recorded as ``undone``. InvalidInput when the
    memory's newest status change is not a restore, or its superseder is gone or changed."""
    with transaction.atomic():
        memory = Memory.objects.select_for_update().get(pk=memory.pk)
        restore = restore_to_undo(memory)
        if restore is None:
            raise InvalidInput(
                f"memory {memory.pk} has no restore to undo: its last status change is not one"
            )
        superseder_id = (restore.data or {}).get("was_superseded_by")
        if superseder_id is None:
            memory.status = MemoryStatus.ARCHIVED
            save_changed(memory, ["status"])
            memory_history_record(
                memory=memory,
                event=MemoryEvent.Event.UNDONE,
                actor=actor,
                reason="undo of a restore",
                data={"status": {"from": MemoryStatus.ACTIVE, "to": MemoryStatus.ARCHIVED}},
            )
            return memory
        _supersede_again(memory, int(superseder_id), actor)
    return memory


def _supersede_again(memory: Memory, superseder_id: int, actor: str) -> None:
    superseder = Memory.objects.select_for_update().filter(pk=superseder_id).first()
    if superseder is None:
        raise InvalidInput(f"memory {superseder_id}, which superseded this one, was deleted")
    if superseder.status == MemoryStatus.ARCHIVED:
        # The reversal archived it: it comes back as it was before (its own history says).
        archived = (
            MemoryEvent.objects.filter(memory_id=superseder.pk, event=MemoryEvent.Event.ARCHIVED)
            .order_by("-created_at", "-id")
            .first()
        )
        was = (archived.data or {}).get("from") if archived is not None else None
        superseder.status = was if was in LIVE else MemoryStatus.ACTIVE
        save_changed(superseder, ["status"])
        memory_history_record(
            memory=superseder,
            event=MemoryEvent.Event.UNDONE,
            actor=actor,
            reason=f"undo of the reversal of its supersession of memory {memory.pk}",
            data={"status": {"from": MemoryStatus.ARCHIVED, "to": superseder.status}},
        )
    elif superseder.status not in LIVE:
        raise InvalidInput(
            f"memory {superseder.pk}, which superseded this one, is {superseder.status} now"
        )
    memory.status, memory.superseded_by = MemoryStatus.SUPERSEDED, superseder
    save_changed(memory, ["status", "superseded_by"])
    memory_history_record(
        memory=memory,
        event=MemoryEvent.Event.UNDONE,
        actor=actor,
        reason="undo of a reversed supersession",
        data={
            "status": {"from": MemoryStatus.ACTIVE, "to": MemoryStatus.SUPERSEDED},
            "superseded_by": superseder.pk,
        },
    )


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
            claim_again(memory)
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
