"""Maintenance processors: TTL garbage collection, thread token limits, summaries.

Each processor is usable directly (``TokenLimiter(4000).run()``), from the
huey periodic tasks (memories.tasks) and from ``manage.py memory gc|compact``.
``record_run`` logs every run, with what it changed, as a MaintenanceRun row.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils import timezone

from memories import selectors, services
from memories.models import MaintenanceRun, Message, MessageRole, Thread
from memories.token_estimate import estimate_message_tokens, text_of
from spaceduck.errors import InvalidInput
from spaceduck.providers import ChatProvider, ProviderError, get_chat

logger = logging.getLogger(__name__)
SUMMARY_MARKER = "compaction"
KEEP_NEWEST = 2


def record_run(processor: str, work: Callable[[], dict[str, Any]]) -> MaintenanceRun:
    """Run ``work`` and keep a MaintenanceRun with its changes or its error."""
    run = MaintenanceRun.objects.create(processor=processor)
    try:
        run.changes = work()
        run.ok = not run.changes.get("errors")
    except Exception as exc:  # recorded, then re-raised: a failing run is never silent
        run.error = f"{exc.__class__.__name__}: {exc}"
        raise
    finally:
        run.finished_at = timezone.now()
        run.save()
        logger.info("maintenance %s ok=%s changes=%s %s", processor, run.ok, run.changes, run.error)
    return run


def _thread_ids(thread_ids: Iterable[str] | None) -> list[str]:
    if thread_ids is not None:
        return list(thread_ids)
    return list(Thread.objects.order_by("created_at", "id").values_list("id", flat=True))


class TtlGarbageCollector:
    """Deletes expired facts (reads already hide them; this reclaims the rows)."""

    name = "ttl_gc"

    def run(self) -> int:
        return services.delete_expired_facts()


class TokenLimiter:
    """Per thread, deletes the oldest messages until the estimated tokens fit the budget."""

    name = "token_limiter"

    def __init__(self, max_tokens: float) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int | float):
            raise InvalidInput(f"max_tokens must be a number, got {max_tokens!r}")
        if not math.isfinite(max_tokens) or max_tokens < 0:
            raise InvalidInput(f"max_tokens must be a finite number >= 0, got {max_tokens!r}")
        self.max_tokens = max_tokens

    def run(self, thread_ids: Iterable[str] | None = None) -> dict[str, int]:
        """Returns {thread id: messages deleted} for the threads that changed."""
        deleted: dict[str, int] = {}
        for thread_id in _thread_ids(thread_ids):
            oldest_first = self._over_budget(selectors.list_messages(thread_id))
            if oldest_first:
                deleted[thread_id] = services.delete_messages(thread_id, oldest_first)
        return deleted

    def _over_budget(self, messages: Sequence[Message]) -> list[str]:
        total = sum(estimate_message_tokens(m.content) for m in messages)
        drop: list[str] = []
        for message in messages:
            if total <= self.max_tokens:
                break
            total -= estimate_message_tokens(message.content)
            drop.append(message.id)
        return drop


@dataclass
class SummaryOutcome:
    summarized: dict[str, int] = field(default_factory=dict)
    finished_interrupted: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def as_changes(self) -> dict[str, Any]:
        changes: dict[str, Any] = {"summarized": self.summarized}
        if self.finished_interrupted:
            changes["finished_interrupted"] = self.finished_interrupted
        if self.errors:
            changes["errors"] = self.errors
        return changes


def is_summary(message: Message) -> bool:
    return isinstance(message.provenance, dict) and SUMMARY_MARKER in message.provenance


class Summarizer:
    """Per thread with more than 2 messages: all but the 2 newest become one summary.

    The summary is a ``system`` message dated like the oldest message it replaces,
    and its provenance lists the ids it replaces. It is saved *before* those are
    deleted: a crash in between leaves both, and the next run first finishes the
    deletion instead of summarising the summary again, so re-runs converge.
    """

    name = "summarizer"

    def __init__(self, llm: ChatProvider | None = None) -> None:
        self.llm = llm or get_chat()

    def run(self, thread_ids: Iterable[str] | None = None) -> SummaryOutcome:
        outcome = SummaryOutcome()
        for thread_id in _thread_ids(thread_ids):
            finished = self._finish_interrupted(thread_id)
            if finished:
                outcome.finished_interrupted[thread_id] = finished
            try:
                replaced = self._summarize(thread_id)
            except ProviderError as exc:  # nothing was written for this thread
                outcome.errors[thread_id] = str(exc)
                continue
            if replaced:
                outcome.summarized[thread_id] = replaced
        return outcome

    def _finish_interrupted(self, thread_id: str) -> int:
        pending: list[str] = []
        for message in selectors.list_messages(thread_id):
            if is_summary(message):
                marker = (message.provenance or {})[SUMMARY_MARKER]
                pending.extend(marker.get("replaces", []))
        return services.delete_messages(thread_id, pending) if pending else 0

    def _summarize(self, thread_id: str) -> int:
        messages = selectors.list_messages(thread_id)
        older = messages[:-KEEP_NEWEST]
        if len(messages) <= KEEP_NEWEST or (len(older) == 1 and is_summary(older[0])):
            return 0
        text = self.llm.summarize(texts=[f"{m.role}: {text_of(m.content)}" for m in older])
        ids = [m.id for m in older]
        services.save_message(
            thread_id,
            MessageRole.SYSTEM,
            text,
            created_at=older[0].created_at,
            provenance={SUMMARY_MARKER: {"replaces": ids, "by": self.llm.name}},
        )
        services.delete_messages(thread_id, ids)
        return len(ids)


def run_compaction(
    *,
    max_tokens: float | None = None,
    summarize: bool | None = None,
    thread_ids: Iterable[str] | None = None,
    stdout: Any = None,
) -> dict[str, Any]:
    """Summarise (when enabled), then enforce the token budget (when set).

    Defaults come from settings (SPACEDUCK_SUMMARIZER_ENABLED,
    SPACEDUCK_THREAD_MAX_TOKENS). Returns the changes of each processor run.
    """
    summarize = settings.SUMMARIZER_ENABLED if summarize is None else summarize
    max_tokens = settings.THREAD_MAX_TOKENS if max_tokens is None else max_tokens
    ids = None if thread_ids is None else list(thread_ids)
    result: dict[str, Any] = {}
    if summarize:
        summarizer = Summarizer()
        run = record_run(summarizer.name, lambda: summarizer.run(ids).as_changes())
        result[summarizer.name] = run.changes
    if max_tokens is not None:
        limiter = TokenLimiter(max_tokens)
        run = record_run(limiter.name, lambda: {"deleted": limiter.run(ids)})
        result[limiter.name] = run.changes
    if stdout is not None:
        for processor, changes in result.items() or [("compaction", "nothing configured")]:
            stdout.write(f"{processor}: {changes}\n")
    return result


def run_ttl_gc() -> int:
    collector = TtlGarbageCollector()
    return int(record_run(collector.name, lambda: {"deleted": collector.run()}).changes["deleted"])
