"""The write path's entry points: a message to extract from, or a memory written directly.

Both front ends call these: the JSON API (POST /api/threads/{id}/messages,
POST /api/memories) and, for direct writes, the dashboard and CLI. The request
that saves a message never waits for extraction: it records a queued
Extraction and enqueues the huey task once the transaction commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction

from memories.dedup import WriteContext, commit_candidate
from memories.extraction import gate
from memories.extraction.pipeline import candidate_rejection
from memories.extraction.types import Candidate, Source, Verdict
from memories.models import Extraction, Message, MessageRole
from memories.services import message_draft, message_write
from spaceduck import runtime
from spaceduck.db.fast import fast_insert
from spaceduck.errors import InvalidInput


@dataclass(frozen=True)
class Ingested:
    message: Message
    extraction: Extraction | None  # None when memory is disabled or the role is not extracted


def message_ingest(
    thread_id: str,
    role: str,
    content: Any,
    *,
    id: str | None = None,
    created_at: datetime | None = None,
    provenance: dict[str, Any] | None = None,
    task_id: str = "",
    skill_id: str = "",
    max_memory_writes: int | None = None,
) -> Ingested:
    """Save the message and queue its extraction (system messages are never extracted)."""
    draft = message_draft(thread_id, role, content, id, created_at, provenance)
    with transaction.atomic():
        # message_write, not save_message: this block already is the transaction,
        # and save_message's own atomic block would add a savepoint per message.
        message = message_write(draft)
        if not runtime.memory_enabled() or message.role == MessageRole.SYSTEM:
            return Ingested(message, None)
        record = fast_insert(
            Extraction(
                message=message,
                thread_id=message.thread_id,
                namespace=message.thread.namespace,
                task_id=task_id,
                skill_id=skill_id,
                max_memory_writes=max_memory_writes,
            )
        )
        transaction.on_commit(lambda: _enqueue(record.pk))
    return Ingested(message, record)


def _enqueue(extraction_id: int) -> None:
    from memories.tasks import extract_message  # the task module imports this one

    extract_message(extraction_id)


def memory_write(
    candidate: Candidate,
    *,
    namespace: str,
    actor: str,
    task_id: str = "",
    skill_id: str = "",
    scope: str = "global",
    scope_id: str = "",
    max_memory_writes: int | None = None,
) -> Verdict:
    """A memory from an agent that extracts for itself: same gate, guard, injection, dedup."""
    refused = memory_write_check(candidate, task_id=task_id, skill_id=skill_id)
    if refused is not None:
        return refused
    ctx = WriteContext(
        namespace=namespace,
        actor=actor,
        source_type="api",
        task_id=task_id,
        skill_id=skill_id,
        scope=scope,
        scope_id=scope_id,
        max_memory_writes=max_memory_writes,
    )
    return commit_candidate(candidate, ctx)


def memory_write_check(
    candidate: Candidate, *, task_id: str = "", skill_id: str = ""
) -> Verdict | None:
    """The checks of a direct write that need no database: memory switched on, the gate,
    the guard and the injection firewall. None when the candidate may go on to dedup.

    Normalises the candidate in place (the gate trims and canonicalises fields), as the
    write itself would. Forms call it to show a refusal beside the input.
    """
    if not runtime.memory_enabled():
        raise InvalidInput(
            "long-term memory is disabled on this server (Settings > Memory, "
            "or SPACEDUCK_MEMORY_ENABLED)"
        )
    source = Source(
        role="user", text=candidate.content, source_type="api", task_id=task_id, skill_id=skill_id
    )
    accepted, rejected = gate.validate([candidate])
    if rejected:
        return rejected[0]
    reason = candidate_rejection(accepted[0], source)
    if reason is not None:
        return Verdict(candidate, "rejected", reason)
    return None
