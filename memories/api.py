"""JSON API for memories: validate, authorise, call selectors/services, shape output.

Every route declares the errors it can answer with (``error_responses``) and
the real constraints of its input (lengths, patterns, bounds), so the OpenAPI
schema says what the services check.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.conf import settings
from django.http import HttpRequest
from ninja import Field, Path, Query, Router, Schema, Status
from ninja.errors import HttpError
from pydantic import AfterValidator, ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr

from memories import extraction_log, lifecycle, selectors, services
from memories.compaction import compact_conversation
from memories.context import MAX_BUDGET, ContextResult, build_context
from memories.extraction.pipeline import MAX_CONTEXT_CHARS
from memories.extraction.types import CONFIDENCE, IMPORTANCE, Verdict, candidate_from_api
from memories.ingest import Ingested, memory_write, message_ingest
from memories.models import (
    Extraction,
    Memory,
    MemoryKind,
    MemoryScope,
    MemoryStatus,
    MessageRole,
    ProcedureSubtype,
    Thread,
)
from memories.positions import NUMERIC_PATTERN, Position
from memories.recall import RecallHit, RecallQuery, recall
from spaceduck import runtime
from spaceduck.access import (
    Caller,
    actor,
    granted_write_budget,
    request_token,
    require_namespace,
    require_permission,
    resolve_namespace,
)
from spaceduck.errors import NotFound, error_responses
from spaceduck.limits import (
    MAX_SQL_INT,
    MAX_TAG_CHARS,
    ApiDatetime,
    ApiNamespace,
    ApiNamespaceSegment,
    api_choices,
    api_int,
    documented,
    max_memory_tags,
    memory_text_limits,
)
from spaceduck.namespaces import WHITESPACE
from spaceduck.providers import ProviderError
from spaceduck.schemas import OutSchema

router = Router(tags=["memories"])
extractions_router = Router(tags=["extractions"])
skills_router = Router(tags=["skills"])
facts_router = Router(tags=["facts"])
threads_router = Router(tags=["threads"])

# The errors each kind of route can answer with (spaceduck.errors.ErrorOut).
READ_ERRORS = error_responses(401, 403, 404, 422)
WRITE_ERRORS = error_responses(400, 401, 403, 404, 413, 422)
DELETE_ERRORS = error_responses(401, 403, 404, 422)


def _column(model: type[Any], name: str) -> int:
    """A CharField's max_length: the schema's maxLength is the column's size."""
    return int(model._meta.get_field(name).max_length)


# --- Input types: the constraints the services and the gate check, as the schema says them.

# A row id in the path (memories, extractions): a positive 64-bit integer.
RowId = Annotated[int, Path(..., ge=1, le=MAX_SQL_INT)]
# The lengths of a memory's fields: spaceduck.limits, which the forms and the services
# read too (the schema is built once, at import, from the settings of that moment).
_LENGTHS = {name: limit for name, (limit, _source) in memory_text_limits().items()}
ContentText = Annotated[StrictStr, Field(min_length=1, max_length=_LENGTHS["content"])]
TitleText = Annotated[StrictStr, Field(max_length=_LENGTHS["title"])]
SummaryText = Annotated[StrictStr, Field(max_length=_LENGTHS["summary"])]
Tags = Annotated[
    list[Annotated[StrictStr, Field(max_length=MAX_TAG_CHARS)]],
    Field(max_length=max_memory_tags()),
]
ContextText = Annotated[StrictStr, Field(max_length=MAX_CONTEXT_CHARS)]
ScopeId = Annotated[StrictStr, Field(max_length=_LENGTHS["scope_id"])]
SourceId = Annotated[StrictStr, Field(max_length=_column(Memory, "source_task_id"))]
# A number in [0, 1] (an integer too; a numeric string is not a number here).
Unit = Annotated[StrictFloat, Field(ge=0, le=1)] | Annotated[StrictInt, Field(ge=0, le=1)]
ImportanceIn = Unit | Literal[tuple(IMPORTANCE)]  # type: ignore[valid-type]
ConfidenceIn = Unit | Literal[tuple(CONFIDENCE)]  # type: ignore[valid-type]
KindIn = Literal[tuple(MemoryKind.values)]  # type: ignore[valid-type]
ScopeIn = Literal[tuple(MemoryScope.values)]  # type: ignore[valid-type]
SubtypeIn = Literal[("", *ProcedureSubtype.values)]  # type: ignore[valid-type]
# A task run's write budget; far beyond any real one, well inside 64 bits.
MAX_MEMORY_WRITES = 1_000_000
WriteBudget = api_int(ge=0, le=MAX_MEMORY_WRITES)


class ClaimOut(OutSchema):
    subject: str = Field(description='"user", or a person of theirs ("user\'s sister").')
    attribute: str = Field(description="e.g. location, employer, opinion:jazz, habit:run.")
    value: str
    polarity: str = Field(description="affirmed, negated or past.")


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


MemorySwitch = Annotated[
    Literal["enabled", "disabled"],
    Field(description="Settings > Memory: when disabled, agents are given no memories."),
]


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


# Task isolation (memories.recall.visible_task_ids), as search and context document it.
EXCLUDE_TASK_MEMORIES = (
    "Task isolation. true: only memories written outside any task. false: without a task, "
    "also those written by scheduled tasks. Default (null): left out without a task; a "
    "task is given its own and the untasked ones, never another task's."
)
SOURCE_TASK_ID = (
    "The task asking (or the X-Spaceduck-Task header): it is given its own memories and "
    "those written outside any task. Empty: no task (an interactive caller)."
)
SourceTaskQuery = Annotated[
    StrictStr,
    Field(max_length=_column(Memory, "source_task_id")),
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
    """Hybrid recall (vector + keyword, fused, multiplied); see memories.recall.

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


class MemoryIn(Schema):
    namespace: ApiNamespace
    kind: Annotated[StrictStr, Field(max_length=_column(Memory, "kind"))] = Field(
        description="fact, episode or procedure (anything else: decision rejected)."
    )
    content: ContentText
    title: TitleText = ""
    summary: SummaryText = ""
    tags: Tags = []
    importance: ImportanceIn = Field("standard", description="0..1 or a bucket name.")
    confidence: ConfidenceIn = Field("stated", description="0..1 or a bucket name.")
    procedure_subtype: Annotated[
        StrictStr, Field(max_length=_column(Memory, "procedure_subtype"))
    ] = ""
    slot: Annotated[StrictStr, Field(max_length=_column(Memory, "slot"))] = ""
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
    # only the two dates can be cleared with null.
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
    changes = payload.dict(exclude_unset=True)
    status = changes.pop("status", None)
    # Approving a candidate is a reviewer's decision: approve alone is enough for it.
    require_permission(request, "approve" if _approval_only(memory, changes, status) else "write")
    if changes:
        memory = lifecycle.memory_edit(memory=memory, changes=changes, actor=actor(request))
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
    memory = visible_memory(request, memory_id)
    return {"events": list(selectors.memory_history(memory_id=memory.pk))}


class ExtractionOut(OutSchema):
    id: int
    status: str
    namespace: str
    thread_id: str
    message_id: str | None
    attempts: int
    candidates: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    provider: str
    task_id: str
    skill_id: str
    duration_ms: float | None
    next_attempt_at: datetime | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class ExtractionListOut(OutSchema):
    extractions: list[ExtractionOut]
    next: str | None = Field(
        description="Pass as `after` for the next (older) page; null on the last page."
    )


ExtractionStatusFilter = api_choices(extraction_log.STATUSES)
ONE_LINE = r"^[^\x00-\x1f\x7f]+$"
PageCursorIn = Annotated[
    str,
    documented({"pattern": NUMERIC_PATTERN, "maxLength": 39}),
]


@extractions_router.get("", response={200: ExtractionListOut, **READ_ERRORS})
def list_extractions(
    request: HttpRequest,
    namespace: Annotated[
        ApiNamespace | None,
        Query(None, description="Default: every namespace the token is granted."),
    ] = None,
    status: Annotated[ExtractionStatusFilter | None, Query(None)] = None,
    thread: str | None = Query(
        None,
        max_length=selectors.MAX_MESSAGE_ID_LENGTH,
        pattern=ONE_LINE,
        description="A thread id.",
    ),
    task_id: str | None = Query(None, max_length=_column(Extraction, "task_id"), pattern=ONE_LINE),
    failed: bool = Query(
        False, description="Only records with a failed attempt (failed, or retried after one)."
    ),
    created_from: Annotated[
        ApiDatetime | None, Query(None, alias="from", description="created_at >= from.")
    ] = None,
    created_to: Annotated[
        ApiDatetime | None, Query(None, alias="to", description="created_at <= to.")
    ] = None,
    limit: int = Query(extraction_log.API_LIST_LIMIT, ge=1, le=extraction_log.API_LIST_MAX),
    after: Annotated[
        PageCursorIn | None, Query(None, description="The `next` of the previous page.")
    ] = None,
) -> Any:
    """Extraction records, newest first, limited to the token's namespaces."""
    scope = None
    canonical = ""
    if namespace is not None:
        canonical = require_namespace(request, namespace, "read")
    else:
        require_permission(request, "read")
        scope = extraction_log.NamespaceScope.of_grants(request_token(request).namespaces)
    filters = extraction_log.ExtractionFilter(
        namespace=canonical,
        statuses=tuple(selectors.parse_choices(status, extraction_log.STATUSES, "status")),
        thread_id=thread or "",
        task_id=task_id or "",
        failed=failed,
        created_from=created_from,
        created_to=created_to,
        scope=scope,
    )
    page = extraction_log.extraction_page(
        filters=filters,
        after=None if after is None else Position.decode(after),
        size=limit,
    )
    return {
        "extractions": page.extractions,
        "next": None if page.older is None else page.older.encode(),
    }


def _visible_extraction(request: HttpRequest, extraction_id: int, permission: str) -> Extraction:
    """The record, or the same 404 whether it is missing or outside the token's grants."""
    record = extraction_log.extraction_get(extraction_id=extraction_id)
    if record is None or not request_token(request).grants_namespace(record.namespace):
        raise HttpError(404, f"extraction {extraction_id} not found")
    require_permission(request, permission)
    return record


@extractions_router.get("/{int:extraction_id}", response={200: ExtractionOut, **READ_ERRORS})
def get_extraction(request: HttpRequest, extraction_id: RowId) -> Any:
    return _visible_extraction(request, extraction_id, "read")


@extractions_router.post(
    "/{int:extraction_id}/retry",
    response={200: ExtractionOut, **error_responses(401, 403, 404, 409, 422)},
)
def retry_extraction(request: HttpRequest, extraction_id: RowId) -> Any:
    """Queue a failed extraction again (fresh attempts; its errors stay as history).

    409 when it is not failed, or when its message was deleted."""
    record = _visible_extraction(request, extraction_id, "write")
    return extraction_log.extraction_retry(extraction_id=record.pk, actor=actor(request))


class PurgedOut(OutSchema):
    deleted: int


# A skill id: up to 255 characters, not only whitespace (one URL path segment).
SkillId = Annotated[
    str,
    Path(..., max_length=_column(Memory, "source_skill_id"), pattern=f"[^{WHITESPACE}]"),
]


@skills_router.delete(
    "/{skill_id}/memories", response={200: PurgedOut, **error_responses(401, 403, 422)}
)
def purge_skill(request: HttpRequest, skill_id: SkillId) -> Any:
    require_permission(request, "write")
    token = request_token(request)
    namespaces = [
        ns for ns in selectors.skill_namespaces(skill_id=skill_id) if token.grants_namespace(ns)
    ]
    deleted = lifecycle.skill_purge(skill_id=skill_id, namespaces=namespaces, actor=actor(request))
    return {"deleted": deleted}


# --- Facts ------------------------------------------------------------------------
# Keys are matched with Django's ``path`` converter, so a key may contain "/"
# (``/api/facts/user:alice/prefs/theme`` is key ``prefs/theme``). Other
# reserved characters (``?``, ``#``, ``%``) must be percent-encoded.
# Routes with a single response status (201, 204) return the body alone and
# ninja answers with that status (returning a tuple is deprecated).


class FactIn(Schema):
    # No default: a body without "value" is a 422, while "value": null stores
    # JSON null, which is a valid fact value.
    value: Any = Field(
        description="Any JSON value, at most SPACEDUCK_MAX_FACT_VALUE_BYTES as compact JSON."
    )
    ttl_ms: api_int(ge=0, le=services.MAX_TTL_MS) | None = None
    provenance: dict[str, Any] | None = None

    model_config = ConfigDict(extra="forbid")


class FactOut(OutSchema):
    namespace: str
    key: str
    value: Any
    ttl_ms: int | None
    expires_at: datetime | None
    provenance: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime


class FactListOut(OutSchema):
    facts: list[FactOut]


FactKey = Annotated[
    str,
    Path(
        ...,
        max_length=selectors.MAX_FACT_KEY_LENGTH,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="May contain '/'; percent-encode '?', '#' and '%'.",
    ),
]


@facts_router.get("", response={200: FactListOut, **READ_ERRORS})
def list_facts(request: HttpRequest, namespace: ApiNamespace) -> Any:
    canonical = require_namespace(request, namespace, "read")
    return {"facts": selectors.list_facts(canonical)}


@facts_router.get("/{namespace}/{path:key}", response={200: FactOut, **READ_ERRORS})
def get_fact(request: HttpRequest, namespace: ApiNamespaceSegment, key: FactKey) -> Any:
    canonical = require_namespace(request, namespace, "read")
    fact = selectors.get_fact(canonical, key)
    if fact is None:  # missing and expired look the same
        raise HttpError(404, f"fact {key!r} not found in namespace {canonical!r}")
    return fact


@facts_router.put("/{namespace}/{path:key}", response={200: FactOut, **WRITE_ERRORS})
def put_fact(
    request: HttpRequest, namespace: ApiNamespaceSegment, key: FactKey, payload: FactIn
) -> Any:
    canonical = require_namespace(request, namespace, "write")
    return services.set_fact(
        canonical, key, payload.value, ttl_ms=payload.ttl_ms, provenance=payload.provenance
    )


@facts_router.delete("/{namespace}/{path:key}", response={204: None, **DELETE_ERRORS})
def delete_fact(request: HttpRequest, namespace: ApiNamespaceSegment, key: FactKey) -> Any:
    canonical = require_namespace(request, namespace, "write")
    services.delete_fact(canonical, key)  # idempotent: a missing key is fine
    return Status(204, None)


# --- Threads and messages ---------------------------------------------------------


class ThreadIn(Schema):
    namespace: ApiNamespace
    title: (
        Annotated[
            StrictStr,
            Field(
                max_length=services.MAX_THREAD_TITLE_LENGTH,
                pattern=r"^[^\x00-\x1f]*$",
                description="One line; surrounding spaces are dropped.",
            ),
        ]
        | None
    ) = None

    model_config = ConfigDict(extra="forbid")


class ThreadOut(OutSchema):
    id: str
    namespace: str
    title: str
    created_at: datetime
    updated_at: datetime


class ThreadListOut(OutSchema):
    threads: list[ThreadOut]


# A message's content: text or any JSON value except null (the server rejects null).
MessageContent = StrictStr | StrictBool | StrictInt | StrictFloat | list[Any] | dict[str, Any]
# Message and thread ids: 1..64 characters, no control characters.
MessageId = Annotated[
    StrictStr,
    documented(
        {
            "minLength": 1,
            "maxLength": selectors.MAX_MESSAGE_ID_LENGTH,
            "pattern": r"^[^\x00-\x1f\x7f]+$",
        }
    ),
]


class MessageIn(Schema):
    role: Annotated[StrictStr, documented({"enum": list(MessageRole.values)})]
    content: MessageContent = Field(
        description="Text or any JSON value except null; at most SPACEDUCK_MAX_MESSAGE_BYTES "
        "(the text's UTF-8, or compact JSON)."
    )
    id: MessageId | None = Field(None, description="Saving an existing id replaces it.")
    created_at: ApiDatetime | None = None
    provenance: dict[str, Any] | None = None
    task_id: SourceId | None = Field(None, description="Or the X-Spaceduck-Task header.")
    skill_id: SourceId | None = Field(None, description="Or the X-Spaceduck-Skill header.")
    max_memory_writes: WriteBudget | None = Field(None, description="Task write budget.")

    model_config = ConfigDict(extra="forbid")


class MessageOut(OutSchema):
    id: str
    thread_id: str
    role: str
    content: MessageContent
    provenance: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime


class ExtractionRef(OutSchema):
    id: int
    status: str


class MessageSavedOut(MessageOut):
    """The answer to saving a message: the message, plus the extraction it queued."""

    extraction: ExtractionRef | None
    memory: str  # "enabled" or "disabled"


class MessageListOut(OutSchema):
    messages: list[MessageOut]


class MessageIdsIn(Schema):
    ids: list[StrictStr] = Field(description="Ids of other threads and unknown ids are ignored.")

    model_config = ConfigDict(extra="forbid")


class DeletedOut(OutSchema):
    deleted: int


ThreadId = Annotated[
    str,
    Path(..., max_length=selectors.MAX_MESSAGE_ID_LENGTH, pattern=r"^[^\x00-\x1f\x7f]+$"),
]


def visible_thread(request: Caller, thread_id: str, permission: str = "read") -> Thread:
    """The thread, or the same 404 whether it is missing or outside the token's grants."""
    try:
        thread = selectors.get_thread(thread_id)
    except NotFound:
        thread = None
    if thread is None or not request_token(request).grants_namespace(thread.namespace):
        raise HttpError(404, f"thread {thread_id!r} not found")
    require_permission(request, permission)
    return thread


@threads_router.post("", response={201: ThreadOut, **WRITE_ERRORS})
def create_thread(request: HttpRequest, payload: ThreadIn) -> Any:
    canonical = require_namespace(request, payload.namespace, "write")
    return Status(201, services.create_thread(canonical, title=payload.title))


@threads_router.get("", response={200: ThreadListOut, **READ_ERRORS})
def list_threads(request: HttpRequest, namespace: ApiNamespace) -> Any:
    canonical = require_namespace(request, namespace, "read")
    return {"threads": selectors.list_threads(canonical)}


@threads_router.get("/{thread_id}", response={200: ThreadOut, **READ_ERRORS})
def get_thread(request: HttpRequest, thread_id: ThreadId) -> Any:
    return visible_thread(request, thread_id)


@threads_router.delete("/{thread_id}", response={204: None, **DELETE_ERRORS})
def delete_thread(request: HttpRequest, thread_id: ThreadId) -> Any:
    thread = visible_thread(request, thread_id, "write")
    services.delete_thread(thread.id)
    return Status(204, None)


Cursor = Annotated[
    str,
    Field(
        max_length=selectors.MAX_MESSAGE_ID_LENGTH,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="A message id of this thread.",
    ),
]


@threads_router.get("/{thread_id}/messages", response={200: MessageListOut, **READ_ERRORS})
def list_messages(
    request: HttpRequest,
    thread_id: ThreadId,
    limit: int | None = Query(None, ge=0, le=MAX_SQL_INT, description="The newest N (or N after)."),
    before: Annotated[Cursor | None, Query(None)] = None,
    after: Annotated[Cursor | None, Query(None)] = None,
) -> Any:
    thread = visible_thread(request, thread_id)
    messages = selectors.list_messages(thread.id, limit=limit, before=before, after=after)
    return {"messages": messages}


@threads_router.post(
    "/{thread_id}/messages",
    response={201: MessageSavedOut, **error_responses(400, 401, 403, 404, 409, 413, 422)},
)
def save_message(request: HttpRequest, thread_id: ThreadId, payload: MessageIn) -> Any:
    thread = visible_thread(request, thread_id, "write")
    task_id, skill_id = task_and_skill(request, payload.task_id, payload.skill_id)
    ingested = message_ingest(
        thread.id,
        payload.role,
        payload.content,
        id=payload.id,
        created_at=payload.created_at,
        provenance=payload.provenance,
        task_id=task_id,
        skill_id=skill_id,
        max_memory_writes=granted_write_budget(request, payload.max_memory_writes),
    )
    return Status(201, message_saved_out(ingested))


def message_saved_out(ingested: Ingested) -> dict[str, Any]:
    """A saved message as MessageSavedOut (the REST message save and MCP remember)."""
    extraction = ingested.extraction
    if extraction is not None:  # "done" already in immediate mode, or a quick worker
        extraction.status = selectors.extraction_status(extraction.pk) or extraction.status
    return {
        **MessageOut.model_validate(ingested.message).model_dump(),
        "extraction": None
        if extraction is None
        else {"id": extraction.pk, "status": extraction.status},
        "memory": "enabled" if runtime.memory_enabled() else "disabled",
    }


def task_and_skill(
    request: HttpRequest, task_id: str | None, skill_id: str | None
) -> tuple[str, str]:
    """Body fields win over the X-Spaceduck-Task / X-Spaceduck-Skill headers."""
    task = task_id if task_id is not None else request.headers.get("X-Spaceduck-Task", "")
    skill = skill_id if skill_id is not None else request.headers.get("X-Spaceduck-Skill", "")
    return task.strip(), skill.strip()


@threads_router.post("/{thread_id}/messages/delete", response={200: DeletedOut, **WRITE_ERRORS})
def delete_messages(request: HttpRequest, thread_id: ThreadId, payload: MessageIdsIn) -> Any:
    thread = visible_thread(request, thread_id, "write")
    return {"deleted": services.delete_messages(thread.id, payload.ids)}


# --- Context ----------------------------------------------------------------------

context_router = Router(tags=["context"])
MAX_CONTEXT_BUDGET = MAX_BUDGET
Budget = api_int(ge=0, le=MAX_CONTEXT_BUDGET)


class ContextIn(Schema):
    namespace: ApiNamespace | None = Field(None, description="Defaults to the token's only one.")
    thread_id: MessageId
    project_id: ScopeId | None = None
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


@context_router.post("", response={200: ContextOut, **WRITE_ERRORS, **error_responses(502)})
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
