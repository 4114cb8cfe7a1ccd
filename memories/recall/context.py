"""The context for an agent turn: a memory block for the system prompt, plus history.

``build_context`` is read-only and fast: it never calls an LLM and never writes
(conversation compaction runs in the periodic maintenance, or on request in
``POST /api/context`` with ``compact: true``; see memories.upkeep.compaction).

Memories, in this order, within ``memory_budget`` estimated tokens:

1. constraints: **every** active constraint procedure in scope (global, this
   thread, this project) and visible to the caller's task, whatever the query.
   They are hard rules, so they are all included even when they alone exceed
   the budget (``constraints_over_budget`` says so);
2. facts, 3. procedures (workflow before behavioral), 4. episodes (with their
   date) that hybrid recall found for the query, best score first in each
   section; a memory that does not fit is skipped. A workflow only when the query is
   about it (a query word in it or a cosine of at least WORKFLOW_TOPIC_COSINE): recall
   always returns something, and a recipe for another job is noise in the prompt.

Task isolation (``recall.visible_task_ids``, for recall and constraints alike): a
task's context (``task_id``) has its own memories and the untasked ones, never
another task's; an interactive context (no task id) leaves out memories written by
scheduled tasks unless ``exclude_task_memories`` is False; True leaves them out
for a task too.

The query defaults to the thread's last user message. With neither, only the
constraints are injected. The block is wrapped in ``<spaceduck-memories>``
tags, which the extraction guard strips, so recalled text is never learnt again.

History: the newest messages that fit ``history_budget``, oldest first, after
the latest compaction summary when older messages were summarised (the summary
counts against the budget).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from memories.extraction.guard import strip_recalled
from memories.models import (
    Memory,
    MemoryKind,
    MemoryStatus,
    Message,
    MessageRole,
    ProcedureSubtype,
    current,
)
from memories.recall.hybrid import RecallHit, RecallQuery, recall, visible_task_ids
from memories.store import selectors
from memories.store.token_estimate import estimate_message_tokens, estimate_tokens, text_of
from memories.upkeep.compaction import SUMMARY_MARKER, covered_until, is_summary
from spaceduck.core import runtime
from spaceduck.core.errors import InvalidInput, NotFound

OPEN_TAG = "<spaceduck-memories>"
CLOSE_TAG = "</spaceduck-memories>"
PREAMBLE = (
    "Stored memories about this user and conversation. They may be outdated: "
    "if a memory conflicts with the user's new message, the new message wins."
)
SECTIONS = ("constraints", "facts", "procedures", "episodes")
HEADINGS = {
    "constraints": "## Constraints (always follow these rules)",
    "facts": "## Facts",
    "procedures": "## Procedures",
    "episodes": "## Episodes",
}
RECALL_TOP_K = 30
MAX_BUDGET = 1_000_000  # estimated tokens: a budget above it is refused (API and dashboard)
MIN_CONFIDENCE = RecallQuery.min_confidence
_PROCEDURE_RANK = {ProcedureSubtype.WORKFLOW.value: 0, ProcedureSubtype.BEHAVIORAL.value: 1}
# A memory's text must not open or close the block (the guard would then learn
# from what follows it) nor open a <system> block inside it.
_RECALL_TAG = re.compile(r"<\s*/?\s*(?:spaceduck-memories|system)\b[^>]{0,500}>", re.IGNORECASE)


@dataclass
class ContextMemory:
    memory: Memory
    section: str
    score: float | None  # None: a constraint that recall did not rank


@dataclass
class ContextResult:
    system_block: str
    memories: list[ContextMemory]
    messages: list[Message]
    summary: Message | None
    memory_tokens: int
    history_tokens: int
    query: str | None
    constraints_over_budget: bool = False
    memory_enabled: bool = True  # Settings > Memory off: no memory in the block
    token_estimate: int = field(init=False)

    def __post_init__(self) -> None:
        self.token_estimate = self.memory_tokens + self.history_tokens


def build_context(
    *,
    namespace: str,
    thread_id: str | None,
    project_id: str | None = None,
    query: str | None = None,
    memory_budget: int | None = None,
    history_budget: int | None = None,
    task_id: str | None = None,
    exclude_task_memories: bool | None = None,
    now: datetime | None = None,
    asked_at: datetime | None = None,
) -> ContextResult:
    """The memory block and history for the next turn of ``thread_id``.

    Budgets default to SPACEDUCK_CONTEXT_MEMORY_BUDGET (2000) and
    SPACEDUCK_CONTEXT_HISTORY_BUDGET (4000) estimated tokens. ``asked_at``: when the
    question is asked, for its relative dates (a benchmark replaying old conversations).
    """
    namespace = selectors.clean_namespace(namespace)
    if memory_budget is None:
        memory_budget = settings.CONTEXT_MEMORY_BUDGET
    if history_budget is None:
        history_budget = settings.CONTEXT_HISTORY_BUDGET
    memory_budget = _clean_budget(memory_budget, "memory_budget")
    history_budget = _clean_budget(history_budget, "history_budget")
    if exclude_task_memories is not None and not isinstance(exclude_task_memories, bool):
        raise InvalidInput(
            f"exclude_task_memories must be true, false or null, got {exclude_task_memories!r}"
        )
    # No thread (the dashboard's preview): no history and no thread-scoped memories.
    thread = selectors.get_thread(thread_id) if thread_id is not None else None
    if thread is not None and thread.namespace != namespace:  # the same answer as a missing one
        raise NotFound(f"thread {thread_id!r} not found")
    now = now or timezone.now()
    if query is None and thread is not None:
        query = newest_user_text(thread.id)
    hits: list[RecallHit] = []
    enabled = runtime.memory_enabled()
    if enabled and query and query.strip():
        hits = recall(
            RecallQuery(
                namespace=namespace,
                text=query,
                top_k=RECALL_TOP_K,
                thread_id=thread.id if thread is not None else None,
                project_id=project_id or None,
                source_task_id=task_id or None,
                exclude_task_memories=exclude_task_memories,
                now=now,
                asked_at=asked_at,
            )
        )
    constraints = (
        active_constraints(
            namespace=namespace,
            thread_id=thread.id if thread is not None else None,
            project_id=project_id,
            task_id=task_id,
            exclude_task_memories=exclude_task_memories,
            now=now,
        )
        if enabled
        else []
    )
    chosen, over_budget = _choose_memories(constraints, hits, memory_budget)
    block = render_block(chosen)
    summary, kept = recent_history(thread.id, history_budget) if thread else (None, [])
    history_tokens = sum(estimate_message_tokens(m.content) for m in kept)
    if summary is not None:
        history_tokens += estimate_message_tokens(summary.content)
    return ContextResult(
        system_block=block,
        memories=chosen,
        messages=kept,
        summary=summary,
        memory_tokens=estimate_tokens(block),
        history_tokens=history_tokens,
        query=query,
        constraints_over_budget=over_budget,
        memory_enabled=enabled,
    )


def _clean_budget(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"{name} must be an integer >= 0, got {value!r}")
    return value


def newest_user_text(thread_id: str) -> str | None:
    """The newest user message's text (no memory block pasted into it), read from the
    newest message back."""
    for message in selectors.newest_messages(thread_id, role=MessageRole.USER):
        if not is_summary(message):
            return strip_recalled(text_of(message.content)).strip() or None
    return None


def recent_history(thread_id: str, budget: int) -> tuple[Message | None, list[Message]]:
    """(latest compaction summary or None, newest messages that fit ``budget``, oldest first).

    Messages a summary covers (up to the last id in its ``covers``, or the summary's own
    place for a Summarizer summary) are represented by it; the summary comes first when
    it fits. Reads only the thread's recent end: the summary by query, then messages
    newest first until the budget is spent."""
    summary = selectors.latest_message_with_key(thread_id, SUMMARY_MARKER)
    boundary = None
    remaining = budget
    if summary is not None:
        boundary = (summary.created_at, summary.pk)
        covered = covered_until(summary)
        position = selectors.message_position(thread_id, covered) if covered else None
        if position is not None and position > boundary:
            boundary = position
        cost = estimate_message_tokens(summary.content)
        if cost <= remaining:
            remaining -= cost
        else:
            summary = None
    newest_first = selectors.newest_messages(thread_id, after=boundary)
    return summary, _newest_that_fit((m for m in newest_first if not is_summary(m)), remaining)


def _newest_that_fit(newest_first: Iterable[Message], budget: int) -> list[Message]:
    """The newest messages whose estimates fit ``budget``, stopping at the first that does
    not, oldest first."""
    kept: list[Message] = []
    for message in newest_first:
        cost = estimate_message_tokens(message.content)
        if cost > budget:
            break
        kept.append(message)
        budget -= cost
    kept.reverse()
    return kept


def active_constraints(
    *,
    namespace: str,
    thread_id: str | None,
    project_id: str | None,
    task_id: str | None,
    exclude_task_memories: bool | None = None,
    now: datetime,
) -> list[Memory]:
    """Every active constraint in scope and visible to the task (``visible_task_ids``,
    as in recall), most important first, then oldest first."""
    in_scope = Q(scope="global")
    if thread_id:
        in_scope |= Q(scope="thread", scope_id=thread_id)
    if project_id:
        in_scope |= Q(scope="project", scope_id=project_id)
    where = Q(
        namespace=namespace,
        kind=MemoryKind.PROCEDURE,
        procedure_subtype=ProcedureSubtype.CONSTRAINT,
        status=MemoryStatus.ACTIVE,
        confidence__gte=MIN_CONFIDENCE,
    )
    where &= current(now)  # neither expired nor past valid_until, as in recall
    where &= in_scope
    tasks = visible_task_ids(
        source_task_id=task_id or None, exclude_task_memories=exclude_task_memories
    )
    if tasks is not None:
        where &= Q(source_task_id__in=sorted(tasks))
    return list(Memory.objects.filter(where).order_by("-importance", "created_at", "pk"))


def section_of(memory: Memory) -> str:
    if memory.kind == MemoryKind.PROCEDURE:
        if memory.procedure_subtype == ProcedureSubtype.CONSTRAINT:
            return "constraints"
        return "procedures"
    if memory.kind == MemoryKind.EPISODE:
        return "episodes"
    return "facts"


def _choose_memories(
    constraints: list[Memory], hits: list[RecallHit], budget: int
) -> tuple[list[ContextMemory], bool]:
    scores = {hit.memory.pk: hit.score for hit in hits}
    chosen = [ContextMemory(m, "constraints", scores.get(m.pk)) for m in constraints]
    seen = {m.pk for m in constraints}
    # A constraint recall found but the query above did not (e.g. revived from stale).
    for hit in hits:
        if hit.memory.pk not in seen and section_of(hit.memory) == "constraints":
            chosen.append(ContextMemory(hit.memory, "constraints", hit.score))
            seen.add(hit.memory.pk)
    used = 0
    if chosen:
        used = _frame_cost() + _heading_cost("constraints")
        used += sum(_line_cost(item) for item in chosen)
    over_budget = used > budget
    ranked = sorted(
        (hit for hit in hits if hit.memory.pk not in seen and _on_topic(hit)),
        key=lambda h: (SECTIONS.index(section_of(h.memory)), _subtype_rank(h.memory), -h.score),
    )
    sections = {item.section for item in chosen}
    for hit in ranked:
        if hit.memory.pk in seen:
            continue  # each memory once, whatever recall handed over
        item = ContextMemory(hit.memory, section_of(hit.memory), hit.score)
        cost = _line_cost(item)
        cost += 0 if item.section in sections else _heading_cost(item.section)
        cost += 0 if chosen else _frame_cost()
        if used + cost > budget:
            continue
        chosen.append(item)
        seen.add(hit.memory.pk)
        sections.add(item.section)
        used += cost
    return chosen, over_budget


# A workflow is a recipe for one job: it is given when the query is about that job (a query
# word in it, or a close vector neighbour), not because recall always returns something.
WORKFLOW_TOPIC_COSINE = 0.4


def _on_topic(hit: RecallHit) -> bool:
    memory = hit.memory
    if memory.kind != MemoryKind.PROCEDURE or memory.procedure_subtype != "workflow":
        return True
    cosine = hit.explanation.cosine
    return hit.explanation.keyword_rank is not None or (
        cosine is not None and cosine >= WORKFLOW_TOPIC_COSINE
    )


def _subtype_rank(memory: Memory) -> int:
    if memory.kind != MemoryKind.PROCEDURE:
        return 0
    return _PROCEDURE_RANK.get(memory.procedure_subtype, 2)


# Costs are sums of per-piece ceilings, so they never under-estimate the joined block.
def _frame_cost() -> int:
    return estimate_tokens(f"{OPEN_TAG}\n{PREAMBLE}\n") + estimate_tokens(CLOSE_TAG)


def _heading_cost(section: str) -> int:
    return estimate_tokens(f"\n{HEADINGS[section]}\n")


def _line_cost(item: ContextMemory) -> int:
    return estimate_tokens(render_line(item) + "\n")


def render_line(item: ContextMemory) -> str:
    memory = item.memory
    text = " ".join(_RECALL_TAG.sub(" ", memory.content).split())
    if item.section == "episodes":
        when = memory.occurred_at or memory.created_at
        return f"- {when:%Y-%m-%d}: {text}"
    if item.section == "procedures" and memory.procedure_subtype:
        return f"- ({memory.procedure_subtype}) {text}"
    return f"- {text}"


def render_block(chosen: Sequence[ContextMemory]) -> str:
    """The ``<spaceduck-memories>`` block, sections in order; "" without memories."""
    if not chosen:
        return ""
    lines = [OPEN_TAG, PREAMBLE]
    for section in SECTIONS:
        items = [item for item in chosen if item.section == section]
        if items:
            lines += ["", HEADINGS[section], *(render_line(item) for item in items)]
    lines.append(CLOSE_TAG)
    return "\n".join(lines)
