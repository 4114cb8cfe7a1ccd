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

from memories.extraction import firewall, gate
from memories.extraction.guard import strip_recalled
from memories.extraction.types import Candidate, Source, Verdict
from memories.models import Extraction, Message, MessageRole, validity_problem
from memories.write.dedup import WriteContext, commit_candidate
from memories.write.runner import enqueue_extraction
from memories.write.services import message_draft, message_write_with
from spaceduck.core import runtime
from spaceduck.core.errors import InvalidInput
from spaceduck.core.limits import MAX_CONTEXT_CHARS, check_memory_fields, check_text


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

    def extraction(message: Message) -> Extraction:
        return Extraction(
            message=message,
            thread_id=message.thread_id,
            namespace=message.thread.namespace,
            task_id=task_id,
            skill_id=skill_id,
            max_memory_writes=max_memory_writes,
        )

    extracted = runtime.memory_enabled() and draft.role != MessageRole.SYSTEM
    with transaction.atomic():
        # Not save_message: this block already is the transaction, and save_message's own
        # atomic block would add a savepoint per message. The record goes in with the
        # message (one statement on PostgreSQL).
        message, record = message_write_with(draft, extraction if extracted else None)
        if record is not None:
            transaction.on_commit(lambda: enqueue_extraction(record.pk))
    return Ingested(message, record)


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
    context: str = "",
) -> Verdict:
    """A memory from an agent that extracts for itself: same gate, guard, injection, dedup.

    ``context`` (Memory.context: what the memory answers or continues, e.g. the turn
    before) is keyword-searched like the context the extraction runner stores; it passes
    the same firewall first (``context_check``), or InvalidInput says why not.
    """
    context = context_check(context, task_id=task_id, skill_id=skill_id)
    # The lengths every front end shares (spaceduck.core.limits); content over its limit is
    # the gate's "too_long" decision, as for an extracted memory.
    check_memory_fields(
        {
            "title": candidate.title,
            "summary": candidate.summary,
            "tags": list(candidate.tags or []),
            "scope_id": scope_id,
        }
    )
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
        context=context,
    )
    return commit_candidate(candidate, ctx)


def context_check(context: str, *, task_id: str = "", skill_id: str = "") -> str:
    """``context`` as a direct write stores it (recalled blocks stripped, as the runner
    strips them), or InvalidInput: over MAX_CONTEXT_CHARS, not valid text, an injection
    or a credential (``firewall.screen_context``)."""
    check_text(context, field="context")
    if len(context) > MAX_CONTEXT_CHARS:
        raise InvalidInput(
            f"context is {len(context):,} characters, over the limit of "
            f"{MAX_CONTEXT_CHARS:,}; nothing was stored"
        )
    if not context.strip():
        return ""
    source = Source(
        role="user", text=context, source_type="api", task_id=task_id, skill_id=skill_id
    )
    reason = firewall.screen_context(context, source)
    if reason is not None:
        raise InvalidInput(f"context rejected: {reason}; nothing was stored")
    return strip_recalled(context).strip()


def memory_write_check(
    candidate: Candidate, *, task_id: str = "", skill_id: str = ""
) -> Verdict | None:
    """The checks of a direct write that need no database: memory switched on, a validity
    that ends after it starts, the gate, the guard and the injection firewall. None when the
    candidate may go on to dedup.

    Normalises the candidate in place (the gate trims and canonicalises fields), as the
    write itself would. Forms call it to show a refusal beside the input.
    """
    runtime.require_memory_on()
    # The caller's mistake, not the memory's: refused (422), as an edit refuses it.
    problem = validity_problem(candidate.valid_from, candidate.valid_until)
    if problem is not None:
        raise InvalidInput(problem)
    source = Source(
        role="user", text=candidate.content, source_type="api", task_id=task_id, skill_id=skill_id
    )
    accepted, rejected = gate.validate([candidate])
    if rejected:
        return rejected[0]
    reason = firewall.screen(accepted[0], source)
    if reason is not None:
        return Verdict(candidate, "rejected", reason)
    return None
