"""The conflict inbox: two memories the engine would not decide between on its own.

``memories.write.dedup`` opens a conflict, in the transaction that stores the new memory, when it
is not confident in what a new candidate means for a live memory (the arbiter unsure, a new
value, said once and without a word that anything changed, for a claim that was said again
or confirmed by a person; a statement that may not be meant: sarcasm, a hypothetical, a
quotation). The new memory
waits as a candidate; the old one stays as it was. A person then decides, here for the API
(``/api/conflicts``), the dashboard (``/review/conflicts/``) and the admin alike:

- **replace**: the new one becomes active and supersedes the old one (history, reversible
  from the old memory's page), and every other live memory whose claim it contradicts;
- **keep both**: the new one becomes active beside the old one;
- **merge** (edit into one): the new one gets the text the person wrote, and the title they
  gave or else one made from that text (the old title described the text it replaced),
  becomes active and supersedes the old one.

A decision can be undone (``conflict_undo``) while its memories are as it left them: the
superseded ones are live again, the new one a candidate with its own text again, and the
conflict waits in the inbox again; each change is recorded as ``undone``.

Deciding needs the ``approve`` permission: an agent cannot settle its own conflict.
Approving the new memory as a candidate (the candidate queue one by one, by keyboard or in
bulk, its page, ``PATCH /api/memories/{id}`` with ``"status": "active"``, the admin: all go
through ``lifecycle.memory_approve``) is a person saying the new one is right: it decides
its open conflicts as **replace** (``approve_new``), recorded under that person and undone
as any replace (the queue's Undo of the approval does it). Leaving the pair open would leave
two active memories that contradict each other for agents to recall, the question
``dedup.open_contradictions`` asks about when an edit or claims read after an upgrade make
such a pair. A conflict whose memories changed meanwhile (the candidate rejected in the
candidate queue, either memory archived, superseded or deleted) is settled elsewhere: it
leaves the inbox and a decision on it is refused with what happened.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from memories.extraction.classify import clip_title
from memories.models import Conflict, Memory, MemoryEvent, MemoryStatus
from memories.write.dedup import LIVE, contradicting
from memories.write.edits import memory_edit
from memories.write.services import memory_history_record
from spaceduck.core.errors import Conflict as ConflictError
from spaceduck.core.errors import InvalidInput, NotFound, PermissionDenied

DECISIONS = ("replace", "keep_both", "merge")
BULK_DECISIONS = ("replace", "keep_both")  # merge needs the text of each pair
# The new side waits as a candidate, or is active beside the old one (two live memories the
# write path did not decide between: dedup.open_contradictions).
_NEW_WAITING = (MemoryStatus.CANDIDATE, MemoryStatus.ACTIVE)
_PENDING = Q(status=Conflict.Status.OPEN, new__status__in=_NEW_WAITING, old__status__in=LIVE)


def pending(namespace: str = "") -> QuerySet[Conflict]:
    """Open conflicts still waiting for a person, newest first, with both memories."""
    conflicts = Conflict.objects.filter(_PENDING).select_related(
        "old__source_message", "new__source_message"
    )
    return conflicts.filter(namespace=namespace) if namespace else conflicts


def pending_of(memory_ids: Iterable[int]) -> dict[int, Conflict]:
    """memory id -> the conflict it waits in (as the new or the old side), for the memories
    given: why a candidate waits, and what a memory's page warns of (one query)."""
    ids = list(memory_ids)
    found: dict[int, Conflict] = {}
    for conflict in pending().filter(Q(new_id__in=ids) | Q(old_id__in=ids)).order_by("created_at"):
        for memory_id in (conflict.new_id, conflict.old_id):
            if memory_id in ids:
                found[memory_id] = conflict  # the newest conflict wins
    return found


def pending_count(cap: int = 1000) -> tuple[int, bool]:
    """How many wait (counted up to ``cap``) and whether there are more."""
    counted = len(Conflict.objects.filter(_PENDING).values_list("pk", flat=True)[: cap + 1])
    return min(counted, cap), counted > cap


def conflict_get(conflict_id: int) -> Conflict:
    try:
        return Conflict.objects.select_related("old", "new").get(pk=conflict_id)
    except Conflict.DoesNotExist:
        raise NotFound(f"conflict {conflict_id} does not exist") from None


def conflict_resolve(
    *,
    conflict: Conflict,
    decision: str,
    actor: str,
    can_approve: bool,
    content: str = "",
    title: str = "",
) -> Conflict:
    """Apply a person's decision (see the module docstring); InvalidInput, PermissionDenied
    or ConflictError (already decided, or settled elsewhere) when it cannot be applied."""
    if decision not in DECISIONS:
        raise InvalidInput(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    if not can_approve:
        raise PermissionDenied("deciding a conflict needs the 'approve' permission")
    content, title = content.strip(), title.strip()
    if decision == "merge" and not content:
        raise InvalidInput("merge needs the content of the memory that replaces both")
    if decision != "merge" and (content or title):
        raise InvalidInput("content and title are only for merge (edit into one)")
    with transaction.atomic():
        # Locked and read again: of two reviewers deciding the same pair, one wins.
        conflict = (
            Conflict.objects.select_for_update().select_related("old", "new").get(pk=conflict.pk)
        )
        settled = _settled_elsewhere(conflict)  # closes it when settled (committed)
        if not settled:
            _apply(conflict, decision, actor, content, title)
    if settled:
        raise ConflictError(settled)
    return conflict


def approve_new(*, memory: Memory, actor: str) -> bool:
    """A person approved ``memory`` while it waits as the new side of open conflicts: each
    is decided as replace (see the module docstring), in the caller's transaction; False
    when it waits in none (a plain approval). The caller checked the permission."""
    waiting = pending().filter(new_id=memory.pk).order_by("id").values_list("pk", flat=True)
    decided = False
    for conflict_id in list(waiting):
        conflict = (
            Conflict.objects.select_for_update().select_related("old", "new").get(pk=conflict_id)
        )
        # One an earlier replace of this approval settled (its old memory superseded too)
        # is closed as settled; the others are this person's decision.
        if not _settled_elsewhere(conflict):
            _apply(conflict, "replace", actor, "", "", how=APPROVED)
            decided = True
    return decided


# Added to the reasons of a replace made by approving the new memory as a candidate.
APPROVED = "the new one approved"


def promoted_by(memory: Memory) -> Conflict | None:
    """The decided conflict whose decision made ``memory`` active, when that is its latest
    promotion: what an undo of its approval in the candidate queue undoes."""
    last = (
        MemoryEvent.objects.filter(memory_id=memory.pk, event=MemoryEvent.Event.PROMOTED)
        .order_by("-created_at", "-id")
        .first()
    )
    found = _PROMOTED_BY.match(last.reason) if last is not None else None
    if found is None:
        return None
    return Conflict.objects.filter(
        pk=int(found.group(1)), new_id=memory.pk, status=Conflict.Status.RESOLVED
    ).first()


def _apply(
    conflict: Conflict, decision: str, actor: str, content: str, title: str, how: str = ""
) -> None:
    new = conflict.new
    said = _LABEL[decision] + (f" ({how})" if how else "")
    if decision == "merge":
        # Validated and re-embedded as any edit (limits, the secrets firewall); its claim is
        # read again from the new text. The title is the person's, else made from the text
        # as the write path makes one: the candidate's described what it said before.
        memory_edit(
            memory=new,
            changes={"content": content, "title": title or clip_title(content)},
            actor=actor,
            reason=f"conflict {conflict.pk}: {_LABEL[decision]}",
        )
    if new.status == MemoryStatus.CANDIDATE:
        new.status = MemoryStatus.ACTIVE
        new.updated_at = timezone.now()
        new.save(update_fields=["status", "updated_at"])
        memory_history_record(
            memory=new,
            event=MemoryEvent.Event.PROMOTED,
            actor=actor,
            reason=f"{_promoted_tag(conflict)}{conflict.old_id}: {said}",
            data={"status": {"from": MemoryStatus.CANDIDATE, "to": MemoryStatus.ACTIVE}},
        )
    elif decision == "keep_both":
        # Both were live and stay so: this row is the decision's only trace (the activity
        # log and the memory's history show it; its undo writes one too).
        memory_history_record(
            memory=new,
            event=MemoryEvent.Event.KEPT,
            actor=actor,
            reason=f"conflict {conflict.pk}: {said}",
        )
    if decision != "keep_both":
        for old in _replaced(conflict):
            _supersede(old, new, actor, f"conflict {conflict.pk}: {said}")
    _close(conflict, decision, actor)


def conflict_undo(*, conflict: Conflict, actor: str, can_approve: bool) -> Conflict:
    """Undo a person's decision (replace, keep both, merge): the memories it superseded are
    as they were before, the new one is a candidate again (with its own text after a
    merge), and the conflict is open again. Refused (ConflictError) when the memories
    changed since: the new one no longer active, an old one no longer superseded by it,
    the merged text edited again."""
    if not can_approve:
        raise PermissionDenied("undoing a conflict decision needs the 'approve' permission")
    with transaction.atomic():
        conflict = Conflict.objects.select_for_update().select_related("new").get(pk=conflict.pk)
        if conflict.status != Conflict.Status.RESOLVED or conflict.resolution not in DECISIONS:
            raise InvalidInput(f"conflict {conflict.pk} has no decision of a person to undo")
        new = Memory.objects.select_for_update().get(pk=conflict.new_id)
        if new.status != MemoryStatus.ACTIVE:
            raise ConflictError(f"memory {new.pk} is {new.status} now: the decision stays")
        tag = f"conflict {conflict.pk}: "
        superseded = _superseded_by_decision(conflict, new, tag)
        merged = _merge_edit(new, tag) if conflict.resolution == "merge" else {}
        for old, was in superseded:
            old.status, old.superseded_by = was, None
            old.updated_at = timezone.now()
            old.save(update_fields=["status", "superseded_by", "updated_at"])
            memory_history_record(
                memory=old,
                event=MemoryEvent.Event.UNDONE,
                actor=actor,
                reason=_undo_reason(conflict),
                data={"status": {"from": MemoryStatus.SUPERSEDED, "to": was}},
            )
        if merged:
            memory_edit(
                memory=new,
                changes=merged,
                actor=actor,
                reason=_undo_reason(conflict),
                event=MemoryEvent.Event.UNDONE,
            )
        if not _unpromote(new, conflict, actor) and not superseded and not merged:
            # A "keep both" of two live memories changed no memory: its undo is this row.
            memory_history_record(
                memory=new,
                event=MemoryEvent.Event.UNDONE,
                actor=actor,
                reason=_undo_reason(conflict),
            )
        conflict.status, conflict.resolution = Conflict.Status.OPEN, ""
        conflict.resolved_by, conflict.resolved_at = "", None
        conflict.save(update_fields=["status", "resolution", "resolved_by", "resolved_at"])
    return conflict


def _decided_by_a_person() -> QuerySet[Conflict]:
    return Conflict.objects.filter(status=Conflict.Status.RESOLVED, resolution__in=DECISIONS)


def undoable(memory: Memory) -> list[Conflict]:
    """The conflicts of ``memory`` a person decided (newest first): what its page offers to
    undo (``conflict_undo`` says whether it still can)."""
    decided = _decided_by_a_person().filter(Q(old=memory) | Q(new=memory))
    return list(decided.order_by("-resolved_at", "-id")[:5])


def still_decided(ids: Iterable[int]) -> list[Conflict]:
    """Of the conflicts ``ids`` (the decisions just taken), those a person's decision still
    holds, newest first: what the inbox offers to undo."""
    return list(_decided_by_a_person().filter(pk__in=list(ids)).order_by("-id"))


def _superseded_by_decision(conflict: Conflict, new: Memory, tag: str) -> list[tuple[Memory, str]]:
    """The memories the decision superseded, each with the status it had before."""
    if conflict.resolution == "keep_both":
        return []
    held = {m.pk: m for m in Memory.objects.select_for_update().filter(superseded_by=new)}
    events = MemoryEvent.objects.filter(
        memory_id__in=list(held), event=MemoryEvent.Event.SUPERSEDED, reason__startswith=tag
    )
    found = [(held[e.memory_id], (e.data or {}).get("from")) for e in events]
    if conflict.old_id not in {m.pk for m, _ in found}:
        raise ConflictError(
            f"memory {conflict.old_id} is no longer superseded by memory {new.pk}: "
            "the decision stays"
        )
    return [
        (m, was if was in LIVE else MemoryStatus.ACTIVE)
        for m, was in found
        if m.status == MemoryStatus.SUPERSEDED
    ]


def _undo_reason(conflict: Conflict) -> str:
    """ "undo of conflict 4: replace" (or keep both, edit into one): the decision's label."""
    return f"undo of conflict {conflict.pk}: {conflict.get_resolution_display()}"


def _merge_edit(new: Memory, tag: str) -> dict[str, Any]:
    """The fields the merge changed (the text, the title), as the new memory had them
    before it; ConflictError when one was edited since."""
    edit = (
        MemoryEvent.objects.filter(
            memory_id=new.pk, event=MemoryEvent.Event.EDITED, reason__startswith=tag
        )
        .order_by("-created_at", "-id")
        .first()
    )
    data = edit.data if edit is not None and isinstance(edit.data, dict) else {}
    before, after = data.get("before", {}), data.get("after", {})
    changed = {name: value for name, value in before.items() if after.get(name) != value}
    if any(after.get(name) != getattr(new, name) for name in changed):
        raise ConflictError(f"memory {new.pk} was edited after the merge: the decision stays")
    return changed


def _unpromote(new: Memory, conflict: Conflict, actor: str) -> bool:
    """The new memory back to a candidate, when this decision is what made it active
    (True), else False."""
    promoted = MemoryEvent.objects.filter(
        memory_id=new.pk,
        event=MemoryEvent.Event.PROMOTED,
        reason__startswith=_promoted_tag(conflict),
    ).exists()
    if not promoted:
        return False  # it was active before (a pair of live memories): it stays so
    new.status, new.updated_at = MemoryStatus.CANDIDATE, timezone.now()
    new.save(update_fields=["status", "updated_at"])
    memory_history_record(
        memory=new,
        event=MemoryEvent.Event.UNDONE,
        actor=actor,
        reason=_undo_reason(conflict),
        data={"status": {"from": MemoryStatus.ACTIVE, "to": MemoryStatus.CANDIDATE}},
    )
    return True


def _promoted_tag(conflict: Conflict) -> str:
    """How the new memory's promotion by a decision starts: what an undo looks for."""
    return f"conflict {conflict.pk} with memory "


_PROMOTED_BY = re.compile(r"conflict (\d+) with memory ")
# The decision as its history reasons say it ("conflict 4: replaced").
_LABEL = {"replace": "replaced", "keep_both": "both kept", "merge": "edited into one"}


def conflicts_resolve(
    *, conflict_ids: Iterable[int], decision: str, actor: str, can_approve: bool
) -> tuple[list[int], dict[int, str]]:
    """One decision for many conflicts: (those decided, {id: why another was left})."""
    if decision not in BULK_DECISIONS:
        raise InvalidInput(f"a bulk decision is one of {', '.join(BULK_DECISIONS)}")
    if not can_approve:
        raise PermissionDenied("deciding a conflict needs the 'approve' permission")
    ids = sorted({int(i) for i in conflict_ids})
    if not ids:
        raise InvalidInput("choose at least one conflict")
    found = Conflict.objects.select_related("old", "new").in_bulk(ids)
    done: list[int] = []
    skipped: dict[int, str] = {}
    for conflict_id in ids:
        conflict = found.get(conflict_id)
        if conflict is None:
            skipped[conflict_id] = "does not exist"
            continue
        try:
            conflict_resolve(
                conflict=conflict, decision=decision, actor=actor, can_approve=can_approve
            )
        except ConflictError as exc:
            skipped[conflict_id] = str(exc)
            continue
        done.append(conflict_id)
    return done, skipped


def _settled_elsewhere(conflict: Conflict) -> str:
    """Why the conflict can no longer be decided ("" when it can); closes it if settled."""
    if conflict.status != Conflict.Status.OPEN:
        return (
            f"conflict {conflict.pk} was decided already ({conflict.get_resolution_display()} "
            f"by {conflict.resolved_by or 'someone'})"
        )
    new, old = _reload(conflict.new), _reload(conflict.old)
    if new is None or old is None:
        gone = conflict.new_id if new is None else conflict.old_id
        return f"memory {gone} of conflict {conflict.pk} was deleted"
    conflict.new, conflict.old = new, old
    why = ""
    if new.status not in _NEW_WAITING:
        why = f"memory {new.pk} is {new.status} now"
    elif old.status not in LIVE:
        why = f"memory {old.pk} is {old.status} now"
    if why:
        _close(conflict, Conflict.Resolution.SETTLED, "")
        return f"conflict {conflict.pk} was settled elsewhere: {why}"
    return ""


def _reload(memory: Memory) -> Memory | None:
    return Memory.objects.filter(pk=memory.pk).first()


def _replaced(conflict: Conflict) -> list[Memory]:
    """The old memory, and every other live fact whose claim the new one contradicts (in
    its namespace and scope, as the write path decides)."""
    old = conflict.old
    gone = [old] if old.status in LIVE else []
    return gone + [m for m in contradicting(conflict.new) if m.pk != old.pk]


def _supersede(old: Memory, new: Memory, actor: str, reason: str) -> None:
    was = old.status  # what an undo puts back
    old.status, old.superseded_by, old.updated_at = MemoryStatus.SUPERSEDED, new, timezone.now()
    old.save(update_fields=["status", "superseded_by", "updated_at"])
    memory_history_record(
        memory=old,
        event=MemoryEvent.Event.SUPERSEDED,
        actor=actor,
        reason=reason,
        data={"superseded_by": new.pk, "from": was},
    )


def _close(conflict: Conflict, resolution: str, actor: str) -> None:
    conflict.status, conflict.resolution = Conflict.Status.RESOLVED, resolution
    conflict.resolved_by, conflict.resolved_at = actor, timezone.now()
    conflict.save(update_fields=["status", "resolution", "resolved_by", "resolved_at"])


__all__ = [
    "BULK_DECISIONS",
    "DECISIONS",
    "approve_new",
    "conflict_get",
    "conflict_resolve",
    "conflict_undo",
    "conflicts_resolve",
    "pending",
    "pending_count",
    "promoted_by",
    "undoable",
]
