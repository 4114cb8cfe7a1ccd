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
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from memories.models import MaintenanceRun, Message, MessageRole, Thread
from memories.store import selectors
from memories.store.token_estimate import estimate_message_tokens, text_of
from memories.write import services
from spaceduck.core.errors import InvalidInput
from spaceduck.core.providers import ChatProvider, ProviderError, get_chat

logger = logging.getLogger(__name__)
SUMMARY_MARKER = "compaction"
KEEP_NEWEST = 2
# Who deleted the messages a summary replaced (their tombstones, memories.models.Deletion).
ACTOR = "compaction"
SUMMARISED = "replaced by a summary"


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
    """Per thread, deletes the oldest messages until the estimated tokens fit the budget.

    The thread's latest summary is never deleted: it is what is left of the older
    conversation (the Summarizer dates its summary like the oldest message it
    replaces, so oldest-first alone would delete it right after it was written).
    It counts toward the budget; when it alone is over it, only it is left.
    Older summaries are folded into the latest one and go oldest first like any
    message.
    """

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
                deleted[thread_id] = services.delete_messages(
                    thread_id, oldest_first, actor=ACTOR, reason="over the thread's budget"
                )
        return deleted

    def _over_budget(self, messages: Sequence[Message]) -> list[str]:
        total = sum(estimate_message_tokens(m.content) for m in messages)
        kept = latest_summary(messages)
        drop: list[str] = []
        for message in messages:
            if total <= self.max_tokens:
                break
            if message is kept:
                continue
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


def latest_summary(messages: Sequence[Message]) -> Message | None:
    """The last summary of a thread's messages (in thread order), the one that stands
    for everything summarised before it (see ``conversation_tail``)."""
    return next((m for m in reversed(messages) if is_summary(m)), None)


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
                # A conversation summary replaces nothing: it is never an interrupted run.
                if isinstance(marker, dict) and not marker.get("conversation"):
                    pending.extend(marker.get("replaces", []))
        return (
            services.delete_messages(thread_id, pending, actor=ACTOR, reason=SUMMARISED)
            if pending
            else 0
        )

    def _summarize(self, thread_id: str) -> int:
        messages = selectors.list_messages(thread_id)
        older = messages[:-KEEP_NEWEST]
        if len(messages) <= KEEP_NEWEST or (len(older) == 1 and is_summary(older[0])):
            return 0
        text = self.llm.summarize(texts=[f"{m.role}: {text_of(m.content)}" for m in older])
        ids = [m.client_id for m in older]  # as the thread's client knows them
        services.save_message(
            thread_id,
            MessageRole.SYSTEM,
            text,
            created_at=older[0].created_at,
            provenance={SUMMARY_MARKER: {"replaces": ids, "by": self.llm.name}},
        )
        services.delete_messages(thread_id, ids, actor=ACTOR, reason=SUMMARISED)
        return len(ids)


# --- Conversation compaction ---------------------------------------------------------
# Non-destructive: the older part of a long conversation becomes one summary
# message; the context builder then sends summary + recent messages. The
# originals stay (only the TokenLimiter deletes messages).

COMPACTION_THRESHOLD = 0.85
SUMMARY_WORDS_MIN = 10
SUMMARY_WORDS_MAX = 400


def conversation_tail(messages: Sequence[Message]) -> tuple[Message | None, list[Message]]:
    """(latest summary or None, the messages after what it covers), in order.

    A conversation summary covers up to the last id in ``covers``; a Summarizer
    summary stands at its own place. With no summary, the whole thread.
    """
    summary: Message | None = None
    boundary = -1
    for index, message in enumerate(messages):
        if is_summary(message):
            summary, boundary = message, index
    if summary is not None:
        last_covered = covered_until(summary)
        for index, message in enumerate(messages):
            if last_covered in (message.id, message.client_id):
                boundary = max(boundary, index)
    return summary, [m for m in messages[boundary + 1 :] if not is_summary(m)]


def covered_until(summary: Message) -> str | None:
    """The id of the newest message a conversation summary covers, if it says."""
    marker = (summary.provenance or {}).get(SUMMARY_MARKER)
    covers = marker.get("covers") if isinstance(marker, dict) else None
    if isinstance(covers, list) and covers and isinstance(covers[-1], str):
        return covers[-1]
    return None


def _clean_budget(budget: object) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InvalidInput(f"budget must be an integer >= 1, got {budget!r}")
    return budget


def compact_conversation(
    thread_id: str,
    *,
    budget: int,
    llm: ChatProvider | None = None,
    threshold: float = COMPACTION_THRESHOLD,
) -> Message | None:
    """Summarise the older part of a thread past ``threshold`` x ``budget`` tokens.

    The live conversation is the latest summary (if any) plus the messages after
    what it covers. When its estimate exceeds threshold x budget, everything but
    the newest messages fitting half the budget (at least the newest one) is
    summarised, starting from the previous summary, into a ``system`` message
    dated just after the newest message it covers. Returns that summary, or None
    when the thread is under the threshold or there is nothing older to cover.
    Nothing is deleted; a ProviderError propagates with nothing written.
    """
    budget = _clean_budget(budget)
    if not 0 < threshold <= 1:
        raise InvalidInput(f"threshold must be in (0, 1], got {threshold!r}")
    previous, tail = conversation_tail(selectors.list_messages(thread_id))
    total = sum(estimate_message_tokens(m.content) for m in tail)
    if previous is not None:
        total += estimate_message_tokens(previous.content)
    if total <= threshold * budget or len(tail) < 2:
        return None
    keep_from = len(tail) - 1
    room = budget // 2 - estimate_message_tokens(tail[-1].content)
    while keep_from > 1 and estimate_message_tokens(tail[keep_from - 1].content) <= room:
        room -= estimate_message_tokens(tail[keep_from - 1].content)
        keep_from -= 1
    older, kept = tail[:keep_from], tail[keep_from:]
    llm = llm or get_chat()
    texts = [f"{m.role}: {text_of(m.content)}" for m in older]
    if previous is not None:
        texts.insert(0, f"summary of the earlier conversation: {text_of(previous.content)}")
    # About a quarter of the budget (~1.5 estimated tokens per word).
    words = max(SUMMARY_WORDS_MIN, min(SUMMARY_WORDS_MAX, budget // 6))
    text = llm.summarize(texts=texts, max_words=words).strip()
    if not text:
        raise ProviderError(f"{llm.name} returned an empty summary")
    first = older[0].client_id
    if previous is not None:
        marker = (previous.provenance or {}).get(SUMMARY_MARKER)
        covers = marker.get("covers") if isinstance(marker, dict) else None
        if isinstance(covers, list) and covers and isinstance(covers[0], str):
            first = covers[0]
    # Just after the newest covered message and before the first kept one.
    created_at = older[-1].created_at
    if kept[0].created_at > created_at + timedelta(microseconds=1):
        created_at += timedelta(microseconds=1)
    return services.save_message(
        thread_id,
        MessageRole.SYSTEM,
        text,
        created_at=created_at,
        provenance={
            SUMMARY_MARKER: {
                "conversation": True,
                "covers": [first, older[-1].client_id],
                "messages": len(older),
                "previous": None if previous is None else previous.client_id,
                "tokens_before": total,
                "budget": budget,
                "by": llm.name,
            }
        },
    )


@dataclass
class ConversationOutcome:
    compacted: dict[str, str] = field(default_factory=dict)  # thread id -> summary id
    errors: dict[str, str] = field(default_factory=dict)

    def as_changes(self) -> dict[str, Any]:
        changes: dict[str, Any] = {"compacted": self.compacted}
        if self.errors:
            changes["errors"] = self.errors
        return changes


class ConversationCompactor:
    """Per thread past the threshold of the budget: ``compact_conversation``."""

    name = "conversation_compactor"

    def __init__(
        self,
        budget: int,
        llm: ChatProvider | None = None,
        threshold: float = COMPACTION_THRESHOLD,
    ) -> None:
        self.budget = _clean_budget(budget)
        self.threshold = threshold
        self.llm = llm

    def run(self, thread_ids: Iterable[str] | None = None) -> ConversationOutcome:
        outcome = ConversationOutcome()
        llm = self.llm or get_chat()
        for thread_id in _thread_ids(thread_ids):
            try:
                summary = compact_conversation(
                    thread_id, budget=self.budget, llm=llm, threshold=self.threshold
                )
            except ProviderError as exc:  # nothing was written for this thread
                outcome.errors[thread_id] = str(exc)
                continue
            if summary is not None:
                outcome.compacted[thread_id] = summary.id
        return outcome


def run_compaction(
    *,
    max_tokens: float | None = None,
    summarize: bool | None = None,
    conversation: bool | None = None,
    thread_ids: Iterable[str] | None = None,
    stdout: Any = None,
) -> dict[str, Any]:
    """Compact conversations, summarise (when enabled), then enforce the token budget.

    Defaults come from settings (SPACEDUCK_CONVERSATION_COMPACTION,
    SPACEDUCK_SUMMARIZER_ENABLED, SPACEDUCK_THREAD_MAX_TOKENS). Conversation
    compaction comes first: it only adds summaries, so what the later, destructive
    processors delete has been summarised. Returns the changes of each processor run.
    """
    conversation = settings.CONVERSATION_COMPACTION if conversation is None else conversation
    summarize = settings.SUMMARIZER_ENABLED if summarize is None else summarize
    max_tokens = settings.THREAD_MAX_TOKENS if max_tokens is None else max_tokens
    ids = None if thread_ids is None else list(thread_ids)
    result: dict[str, Any] = {}
    if conversation:
        compactor = ConversationCompactor(settings.CONTEXT_HISTORY_BUDGET)
        run = record_run(compactor.name, lambda: compactor.run(ids).as_changes())
        result[compactor.name] = run.changes
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
