"""A memory's edit, the one way its fields change: checked as every write is (the limits,
the secrets firewall), re-hashed, re-embedded, its claim read again, and recorded with each
field before and after (what the memory's page diffs and *Restore this version* puts
back). Its own module, below ``lifecycle`` and ``conflicts``, which both edit memories
(a merge is an edit; ``lifecycle`` approves through the conflicts)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memories.extraction.claims import claim_of, stored_value
from memories.extraction.firewall import screened
from memories.models import Memory, MemoryEvent
from memories.store import vector_index
from memories.write.dedup import open_contradictions
from memories.write.services import content_hash, embedding_text, memory_history_record
from spaceduck.core.errors import InvalidInput
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


def save_changed(memory: Memory, fields: list[str]) -> None:
    memory.updated_at = timezone.now()
    memory.save(update_fields=[*fields, "updated_at"])


def memory_edit(
    *,
    memory: Memory,
    changes: dict[str, Any],
    actor: str,
    reason: str = "",
    event: str = MemoryEvent.Event.EDITED,
) -> Memory:
    """Edit fields; a new content is re-hashed, re-embedded and re-indexed. The history
    entry keeps each changed field before and after (what the memory's page diffs); an
    undo that puts text back records it as ``undone`` (``event``), not as a person's edit."""
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise InvalidInput(f"not editable: {', '.join(unknown)}; editable: {', '.join(EDITABLE)}")
    # The lengths every front end shares (spaceduck.core.limits): the API's schema says them,
    # and the dashboard, the admin, the CLI and spaceduck.store get the same refusal here.
    check_memory_fields(changes)
    # The same firewall as every other write: an edit may not smuggle a credential in (its
    # title, content, summary or tags).
    screened("memory", changes)
    before = {name: jsonable(getattr(memory, name)) for name in changes}
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
            fields += claim_again(memory)
        save_changed(memory, fields)
        if vector is not None:
            vector_index.upsert([(memory.pk, memory.namespace, vector)])
        after = {name: jsonable(getattr(memory, name)) for name in changes}
        memory_history_record(
            memory=memory,
            event=event,
            actor=actor,
            reason=reason,
            data={"before": before, "after": after},
        )
        if content_changed or "kind" in changes:
            open_contradictions(memory)  # its new claim may contradict another memory
    return memory


# The entries that changed fields (a person's edit, or an undo putting text back).
_EDITS = (MemoryEvent.Event.EDITED, MemoryEvent.Event.UNDONE)
# Fields an edit's history keeps as ISO text (``jsonable``) and a restore reads back.
_DATES = ("occurred_at", "expires_at", "valid_from", "valid_until")


def version_before(event: MemoryEvent) -> dict[str, Any]:
    """The editable fields as they were before the edit ``event`` recorded (its ``before``),
    as ``memory_edit`` takes them; {} for an entry that is not such an edit."""
    before = event.data.get("before") if isinstance(event.data, dict) else None
    if event.event not in _EDITS or not isinstance(before, dict):
        return {}
    version = {name: value for name, value in before.items() if name in EDITABLE}
    for name in _DATES:
        if isinstance(version.get(name), str):
            version[name] = parse_datetime(version[name])
    return version


def claim_again(memory: Memory) -> list[str]:
    """Read what the edited memory claims (the claim columns it changes)."""
    claim = claim_of(memory.kind, memory.content)
    memory.claim_subject = claim.subject if claim else ""
    memory.claim_attribute = claim.attribute if claim else ""
    memory.claim_value = stored_value(claim)[:255] if claim else ""
    memory.claim_polarity = claim.polarity if claim else ""
    memory.claim_mood = claim.mood if claim else ""
    return ["claim_subject", "claim_attribute", "claim_value", "claim_polarity", "claim_mood"]


def jsonable(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value
