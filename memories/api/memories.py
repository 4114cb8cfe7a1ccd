"""Memories: list, search (hybrid recall), read, write, patch, delete, history.

Every route declares the errors it can answer with (``error_responses``) and the real
constraints of its input, so the OpenAPI schema says what the services check."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status
from ninja.errors import HttpError
from pydantic import AfterValidator, ConfigDict, StrictStr

from memories.api.schemas import (
    DELETE_ERRORS,
    EXCLUDE_TASK_MEMORIES,
    READ_ERRORS,
    SOURCE_TASK_ID,
    WRITE_ERRORS,
    ConfidenceIn,
    ContentText,
    ContextText,
    ImportanceIn,
    KindIn,
    MemorySwitch,
    RowId,
    ScopeId,
    ScopeIn,
    SourceId,
    SubtypeIn,
    SummaryText,
    Tags,
    TitleText,
    Unit,
    WriteBudget,
    column_length,
    task_and_skill,
)
from memories.extraction.types import Verdict, candidate_from_api
from memories.models import (
    Memory,
    MemoryKind,
    MemoryScope,
    MemoryStatus,
)
from memories.recall.hybrid import RecallHit, RecallQuery, recall
from memories.store import selectors
from memories.write import edits, lifecycle, services
from memories.write.ingest import memory_write
from spaceduck.core import runtime
from spaceduck.core.access import (
    Caller,
    actor,
    granted_write_budget,
    request_token,
    require_namespace,
    require_permission,
    resolve_namespace,
)
from spaceduck.core.limits import (
    ApiDatetime,
    ApiNamespace,
    api_choices,
    documented,
)
from spaceduck.core.namespaces import WHITESPACE
from spaceduck.core.schemas import OutSchema

router = Router(tags=["memories"])


class ClaimOut(OutSchema):
    subject: str = Field(description='"user", or a person of theirs ("user\'s sister").')
    attribute: str = Field(description="e.g. location, employer, opinion:jazz, habit:run.")
    value: str
    polarity: str = Field(description="affirmed, negated or past.")
    mood: str = Field(
        "",
        description="How it was said: asserted, hypothetical, question, reported or past; "
        "empty for a claim read before moods were recorded.",
    )


class MemoryOut(OutSchema):
    id: int
    namespace: str
    kind: str
    title: str
    content: str
    summary: str
    tags: list[str]
    context: str = Field("", description="Where it was learnt; keyword-searched, not embedded.")
    importance: float
    confidence: float
    status: str
    superseded_by_id: int | None
    scope: str
    scope_id: str
    procedure_subtype: str
    source_type: str
    source_task_id: str
    source_skill_id: str
    occurred_at: datetime | None
    expires_at: datetime | None
    valid_from: datetime | None = Field(None, description="When what it says starts to hold.")
    valid_until: datetime | None = Field(
        None,
        description="When what it says stops holding: from then on it is left out of recall "
        "and the context block, and marked stale.",
    )
    created_at: datetime
    updated_at: datetime
    last_seen_at: datetime
    claim: ClaimOut | None = Field(
        None,
        description="What it claims: another value or polarity of the same subject and "
        "attribute replaces it, the same value restates it. Null when none was read.",
    )


class MemoryListOut(OutSchema):
    memories: list[MemoryOut]


def visible_memory(request: Caller, memory_id: int, permission: str | None = "read") -> Memory:
    """The memory, or the same 404 whether it is missing or outside the token's grants;
    then 403 without ``permission`` (None: the caller checks it)."""
    memory = selectors.memory_get(memory_id=memory_id)
    if memory is None or not request_token(request).grants_namespace(memory.namespace):
        raise HttpError(404, f"memory {memory_id} not found")
    if permission is not None:
        require_permission(request, permission)
    return memory


KindsFilter = api_choices(MemoryKind.values)
StatusFilter = api_choices(MemoryStatus.values)
ScopeFilter = api_choices(MemoryScope.values)


@router.get("", response={200: MemoryListOut, **READ_ERRORS})
def list_memories(
    request: HttpRequest,
    namespace: Annotated[
        ApiNamespace | None,
        Query(None, description="Defaults to the token's namespace when it is its only one."),
    ] = None,
    kinds: Annotated[KindsFilter | None, Query(None)] = None,
    status: Annotated[StatusFilter | None, Query(None)] = None,
    scope: Annotated[ScopeFilter | None, Query(None)] = None,
    limit: int = Query(selectors.MEMORY_LIST_LIMIT, ge=1, le=selectors.MEMORY_LIST_MAX),
) -> Any:
    """Memories of one namespace, newest ``updated_at`` first."""
    canonical = resolve_namespace(request, namespace, "read")
    memories = selectors.memory_list(
        namespaces=[canonical],
        kinds=selectors.parse_choices(kinds, MemoryKind.values, "kind"),
        statuses=selectors.parse_choices(status, MemoryStatus.values, "status"),
        scopes=selectors.parse_choices(scope, MemoryScope.values, "scope"),
        limit=selectors.clean_page_limit(limit),
    )
    return {"memories": list(memories)}


class SearchHitOut(OutSchema):
    memory: MemoryOut
    score: float
    match_source: str
    explanation: dict[str, Any] | None


class SearchOut(OutSchema):
    memories: list[SearchHitOut]
    memory: MemorySwitch


def _recall_text(text: str) -> str:
    if not text.strip():
        raise ValueError("q is required: the text to recall memories for")
    return text


# Something to recall: at least one character other than whitespace.
QueryText = Annotated[
    str, AfterValidator(_recall_text), documented({"pattern": f"[^{WHITESPACE}]"})
]


SourceTaskQuery = Annotated[
    StrictStr,
    Field(max_length=column_length(Memory, "source_task_id")),
]


@router.get("/search", response={200: SearchOut, **READ_ERRORS})
def search_memories(
    request: HttpRequest,
    q: Annotated[QueryText, Query(..., description="What to recall (literal text).")],
    namespace: Annotated[
        ApiNamespace | None, Query(None, description="Defaults to the token's only namespace.")
    ] = None,
    kinds: Annotated[KindsFilter | None, Query(None)] = None,
    status: Annotated[StatusFilter | None, Query(None, description="Default: active.")] = None,
    scope: Annotated[ScopeFilter | None, Query(None)] = None,
    thread: str | None = Query(None, description="Thread context: its thread-scoped memories."),
    project: str | None = Query(None, description="Project context: its project memories."),
    top_k: int = Query(10, alias="topK", ge=1, le=100),
    explain: bool = Query(False, description="Add each hit's score breakdown."),
    include_superseded: bool = Query(False, alias="includeSuperseded"),
    exclude_task_memories: bool | None = Query(None, description=EXCLUDE_TASK_MEMORIES),
    source_task_id: Annotated[
        SourceTaskQuery | None, Query(None, description=SOURCE_TASK_ID)
    ] = None,
) -> Any:
    """Hybrid recall (vector + keyword, fused, multiplied); see memories.recall.hybrid.

    Task isolation: a task (`source_task_id` or the X-Spaceduck-Task header) is given
    its own memories and those written outside any task, never another task's; without
    a task, memories written by scheduled tasks are left out unless
    `exclude_task_memories=false`."""
    canonical = resolve_namespace(request, namespace, "read")
    statuses = selectors.parse_choices(status, MemoryStatus.values, "status") or ["active"]
    task_id, _ = task_and_skill(request, source_task_id, None)
    if not runtime.memory_enabled():
        return {"memories": [], "memory": "disabled"}
    query = RecallQuery(
        namespace=canonical,
        text=q,
        top_k=top_k,
        kinds=selectors.parse_choices(kinds, MemoryKind.values, "kind"),
        statuses=statuses,
        scopes=selectors.parse_choices(scope, MemoryScope.values, "scope"),
        thread_id=thread,
        project_id=project,
        include_superseded=include_superseded or "superseded" in statuses,
        exclude_task_memories=exclude_task_memories,
        source_task_id=task_id or None,
    )
    return {"memories": hits_out(recall(query), explain=explain), "memory": "enabled"}


def hits_out(hits: list[RecallHit], *, explain: bool) -> list[dict[str, Any]]:
    """Recall hits as SearchHitOut (the REST search and MCP recall)."""
    return [
        {
            "memory": hit.memory,
            "score": hit.score,
            "match_source": hit.match_source,
            "explanation": hit.explanation.as_dict() if explain else None,
        }
        for hit in hits
    ]


@router.get("/{int:memory_id}", response={200: MemoryOut, **READ_ERRORS})
def get_memory(request: HttpRequest, memory_id: RowId) -> Any:
    return visible_memory(request, memory_id)


@router.delete("/{int:memory_id}", response={204: None, **DELETE_ERRORS})
def delete_memory(request: HttpRequest, memory_id: RowId) -> Any:
    memory = visible_memory(request, memory_id, "write")
    services.memory_delete(memory=memory, actor=actor(request))
    return Status(204, None)


VALID_FROM = "When what it says starts to hold (RFC 3339 with an offset); null: always did."
VALID_UNTIL = (
    "When what it says stops holding (RFC 3339 with an offset), after valid_from: from then "
    "on the memory is left out of recall and the context block. Null: open-ended."
)


class MemoryIn(Schema):
    namespace: ApiNamespace
    kind: Annotated[StrictStr, Field(max_length=column_length(Memory, "kind"))] = Field(
        description="fact, episode or procedure (anything else: decision rejected)."
    )
    content: ContentText
    title: TitleText = ""
    summary: SummaryText = ""
    tags: Tags = []
    importance: ImportanceIn = Field("standard", description="0..1 or a bucket name.")
    confidence: ConfidenceIn = Field("stated", description="0..1 or a bucket name.")
    procedure_subtype: Annotated[
        StrictStr, Field(max_length=column_length(Memory, "procedure_subtype"))
    ] = ""
    slot: Annotated[StrictStr, Field(max_length=column_length(Memory, "slot"))] = ""
    scope: ScopeIn = "global"
    scope_id: ScopeId = ""
    context: ContextText = Field(
        "",
        description="What the memory answers or continues (e.g. the previous turn): "
        "keyword-searched, not embedded. Refused (422) when it holds a credential or a "
        "prompt injection.",
    )
    occurred_at: ApiDatetime | None = Field(
        None, description="When it happened (RFC 3339 with an offset)."
    )
    valid_from: ApiDatetime | None = Field(None, description=VALID_FROM)
    valid_until: ApiDatetime | None = Field(None, description=VALID_UNTIL)
    task_id: SourceId | None = Field(None, description="Or the X-Spaceduck-Task header.")
    skill_id: SourceId | None = Field(None, description="Or the X-Spaceduck-Skill header.")
    max_memory_writes: WriteBudget | None = None

    model_config = ConfigDict(extra="forbid")


class WriteDecisionOut(OutSchema):
    decision: str
    reason: str
    memory_id: int | None
    matched_memory_id: int | None
    memory: MemoryOut | None
    details: dict[str, Any]


def _unchanged() -> Any:
    """The default of a field a PATCH may omit (``payload.dict(exclude_unset=True)`` drops
    it); not shown in the schema, where it would read as "null is a value"."""
    return Field(None, json_schema_extra=lambda schema: schema.pop("default", None))


class MemoryPatchIn(Schema):
    status: Literal["active", "archived"] | None = Field(
        None,
        description="active: approve a candidate (needs only the approve permission), or "
        "restore an archived or superseded memory; archived: archive it.",
    )
    # Absent: unchanged. These columns cannot hold null, so null is refused (422);
    # only the dates can be cleared with null.
    title: TitleText = _unchanged()
    content: ContentText = _unchanged()
    summary: SummaryText = _unchanged()
    tags: Tags = _unchanged()
    importance: Unit = _unchanged()
    confidence: Unit = _unchanged()
    kind: KindIn = _unchanged()
    procedure_subtype: SubtypeIn = _unchanged()
    scope: ScopeIn = _unchanged()
    scope_id: ScopeId = _unchanged()
    occurred_at: ApiDatetime | None = None
    expires_at: ApiDatetime | None = None
    valid_from: ApiDatetime | None = Field(None, description=VALID_FROM)
    valid_until: ApiDatetime | None = Field(None, description=VALID_UNTIL)

    model_config = ConfigDict(extra="forbid")


class MemoryEventOut(OutSchema):
    id: int
    memory_id: int
    event: str
    actor: str
    reason: str
    data: dict[str, Any]
    created_at: datetime


class HistoryOut(OutSchema):
    events: list[MemoryEventOut]
    deleted: bool = Field(
        False,
        description="The memory was deleted: its history is the tombstone alone (who, when, "
        "why, its kind in data; never what it said).",
    )


@router.post("", response={200: WriteDecisionOut, 201: WriteDecisionOut, **WRITE_ERRORS})
def write_memory(request: HttpRequest, payload: MemoryIn) -> Any:
    namespace = require_namespace(request, payload.namespace, "write")
    task_id, skill_id = task_and_skill(request, payload.task_id, payload.skill_id)
    verdict = memory_write(
        candidate_from_api(payload.dict()),
        namespace=namespace,
        actor=actor(request),
        task_id=task_id,
        skill_id=skill_id,
        scope=payload.scope,
        scope_id=payload.scope_id,
        max_memory_writes=granted_write_budget(request, payload.max_memory_writes),
        context=payload.context,
    )
    return Status(201 if verdict.decision == "stored" else 200, decision_out(verdict))


def decision_out(verdict: Verdict) -> dict[str, Any]:
    """The write path's decision as WriteDecisionOut (the REST write and MCP remember)."""
    memory_id = verdict.memory_id or verdict.matched_memory_id
    return {
        "decision": verdict.decision,
        "reason": verdict.reason,
        "memory_id": verdict.memory_id,
        "matched_memory_id": verdict.matched_memory_id,
        "memory": selectors.memory_get(memory_id=memory_id) if memory_id else None,
        "details": verdict.extra,
    }


def _approval_only(memory: Memory, changes: dict[str, Any], status: str | None) -> bool:
    return not changes and status == "active" and memory.status == MemoryStatus.CANDIDATE


@router.patch("/{int:memory_id}", response={200: MemoryOut, **WRITE_ERRORS})
def patch_memory(request: HttpRequest, memory_id: RowId, payload: MemoryPatchIn) -> Any:
    memory = visible_memory(request, memory_id, None)
    runtime.require_memory_on()  # an agent's edit or approval is a memory write (409)
    changes = payload.dict(exclude_unset=True)
    status = changes.pop("status", None)
    # Approving a candidate is a reviewer's decision: approve alone is enough for it.
    require_permission(request, "approve" if _approval_only(memory, changes, status) else "write")
    if changes:
        memory = edits.memory_edit(memory=memory, changes=changes, actor=actor(request))
    if status is not None:
        memory = lifecycle.memory_set_status(
            memory=memory,
            status=status,
            actor=actor(request),
            can_approve=request_token(request).has_permission("approve"),
        )
    return memory


@router.get("/{int:memory_id}/history", response={200: HistoryOut, **READ_ERRORS})
def memory_history(request: HttpRequest, memory_id: RowId) -> Any:
    """A live memory's history; a deleted one's tombstone (the one route a deleted id
    answers), under the same rules: 404 outside the token's namespaces, 403 without read."""
    if selectors.memory_get(memory_id=memory_id) is not None:
        memory = visible_memory(request, memory_id)
        return {"events": list(selectors.memory_history(memory_id=memory.pk))}
    tombstone = selectors.memory_tombstone(memory_id=memory_id)
    if tombstone is None or not request_token(request).grants_namespace(tombstone.namespace):
        raise HttpError(404, f"memory {memory_id} not found")
    require_permission(request, "read")
    return {"events": [tombstone], "deleted": True}
