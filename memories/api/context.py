"""The context block an agent is given (POST /api/context).

Every route declares the errors it can answer with (``error_responses``) and the real
constraints of its input, so the OpenAPI schema says what the services check."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from ninja import Field, Router, Schema
from ninja.errors import HttpError
from pydantic import ConfigDict, StrictBool, StrictStr

from memories.api.schemas import (
    EXCLUDE_TASK_MEMORIES,
    SOURCE_TASK_ID,
    WRITE_ERRORS,
    MemorySwitch,
    ProjectId,
    SourceId,
    task_and_skill,
)
from memories.api.threads import MessageId, MessageOut, visible_thread
from memories.recall.context import MAX_BUDGET, ContextResult, build_context
from memories.upkeep.compaction import compact_conversation
from spaceduck.core.access import (
    require_permission,
    resolve_namespace,
)
from spaceduck.core.errors import error_responses
from spaceduck.core.limits import (
    ApiNamespace,
    api_int,
)
from spaceduck.core.providers import ProviderError
from spaceduck.core.schemas import OutSchema

router = Router(tags=["context"])
MAX_CONTEXT_BUDGET = MAX_BUDGET
Budget = api_int(ge=0, le=MAX_CONTEXT_BUDGET)


class ContextIn(Schema):
    namespace: ApiNamespace | None = Field(None, description="Defaults to the token's only one.")
    thread_id: MessageId
    project_id: ProjectId | None = None
    query: StrictStr | None = Field(None, description="Default: the last user message.")
    memory_budget: Budget | None = Field(None, description="Tokens; default 2000.")
    history_budget: Budget | None = Field(None, description="Tokens; default 4000.")
    task_id: SourceId | None = Field(
        None, description="Or the X-Spaceduck-Task header; the same as `source_task_id`."
    )
    source_task_id: SourceId | None = Field(None, description=SOURCE_TASK_ID)
    exclude_task_memories: StrictBool | None = Field(None, description=EXCLUDE_TASK_MEMORIES)
    compact: StrictBool = Field(
        False,
        description="First summarise the thread's older messages if it passes 85% of the "
        "history budget (needs the write permission; calls the chat LLM).",
    )

    model_config = ConfigDict(extra="forbid")


class ContextMemoryOut(OutSchema):
    id: int
    section: str
    score: float | None
    kind: str
    procedure_subtype: str
    scope: str
    content: str
    occurred_at: datetime | None


class ContextTokensOut(OutSchema):
    memories: int
    history: int
    total: int


class ContextOut(OutSchema):
    system: str
    memory: MemorySwitch
    query: str | None
    memories: list[ContextMemoryOut]
    constraints_over_budget: bool
    summary: MessageOut | None
    summary_id: str | None
    messages: list[MessageOut]
    compacted: bool
    token_estimate: ContextTokensOut


def _context_task(payload: ContextIn) -> str | None:
    """``task_id`` and ``source_task_id`` name the same thing: either, or both alike."""
    given = {t for t in (payload.task_id, payload.source_task_id) if t is not None}
    if len(given) > 1:
        raise HttpError(422, "task_id and source_task_id differ; send one of them")
    return given.pop() if given else None


@router.post("", response={200: ContextOut, **WRITE_ERRORS, **error_responses(502)})
def build_context_view(request: HttpRequest, payload: ContextIn) -> Any:
    """The memory block (system prompt) and history for an agent's next turn.

    Task isolation, for recalled memories and constraints alike: a task (`task_id`,
    `source_task_id` or the X-Spaceduck-Task header) is given its own memories and those
    written outside any task, never another task's; an interactive context (no task)
    leaves out memories written by scheduled tasks unless `exclude_task_memories` is
    false."""
    canonical = resolve_namespace(request, payload.namespace, "read")
    thread = visible_thread(request, payload.thread_id)
    if thread.namespace != canonical:
        raise HttpError(404, f"thread {payload.thread_id!r} not found")
    task_id, _ = task_and_skill(request, _context_task(payload), None)
    history_budget = payload.history_budget
    if history_budget is None:
        history_budget = settings.CONTEXT_HISTORY_BUDGET
    compacted = None
    if payload.compact:
        require_permission(request, "write")
        if history_budget < 1:
            raise HttpError(422, "compact needs a history_budget of at least 1")
        try:
            compacted = compact_conversation(thread.id, budget=history_budget)
        except ProviderError as exc:
            raise HttpError(502, f"compaction failed, nothing was changed: {exc}") from None
    result = build_context(
        namespace=canonical,
        thread_id=thread.id,
        project_id=payload.project_id,
        query=payload.query,
        memory_budget=payload.memory_budget,
        history_budget=history_budget,
        task_id=task_id or None,
        exclude_task_memories=payload.exclude_task_memories,
    )
    return context_out(result, compacted=compacted is not None)


def context_out(result: ContextResult, *, compacted: bool) -> dict[str, Any]:
    """A built context as ContextOut (the REST context and MCP get_context)."""
    return {
        "system": result.system_block,
        "memory": "enabled" if result.memory_enabled else "disabled",
        "query": result.query,
        "memories": [
            {
                "id": item.memory.pk,
                "section": item.section,
                "score": item.score,
                "kind": item.memory.kind,
                "procedure_subtype": item.memory.procedure_subtype,
                "scope": item.memory.scope,
                "content": item.memory.content,
                "occurred_at": item.memory.occurred_at,
            }
            for item in result.memories
        ],
        "constraints_over_budget": result.constraints_over_budget,
        "summary": result.summary,
        "summary_id": None if result.summary is None else result.summary.id,
        "messages": result.messages,
        "compacted": compacted,
        "token_estimate": {
            "memories": result.memory_tokens,
            "history": result.history_tokens,
            "total": result.token_estimate,
        },
    }
