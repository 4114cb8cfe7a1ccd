"""Threads and their messages; saving a message queues its extraction.

Every route declares the errors it can answer with (``error_responses``) and the real
constraints of its input, so the OpenAPI schema says what the services check."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Field, Path, Query, Router, Schema, Status
from ninja.errors import HttpError
from pydantic import ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr, field_validator

from memories.api.schemas import (
    DELETE_ERRORS,
    READ_ERRORS,
    WRITE_ERRORS,
    SourceId,
    WriteBudget,
    task_and_skill,
)
from memories.models import (
    MessageRole,
    Thread,
    client_message_id,
)
from memories.store import selectors
from memories.write import services
from memories.write.ingest import Ingested, message_ingest
from spaceduck.core import runtime
from spaceduck.core.access import (
    Caller,
    actor,
    granted_write_budget,
    request_token,
    require_namespace,
    require_permission,
)
from spaceduck.core.errors import NotFound, error_responses
from spaceduck.core.limits import (
    MAX_SQL_INT,
    ApiDatetime,
    ApiNamespace,
    api_text,
    documented,
)
from spaceduck.core.schemas import OutSchema

router = Router(tags=["threads"])


_ONE_LINE_TITLE = r"^[^\x00-\x1f]*$"
_ThreadTitle = api_text(
    services.MAX_THREAD_TITLE_LENGTH, field="thread title", pattern=_ONE_LINE_TITLE
)


class ThreadIn(Schema):
    namespace: ApiNamespace
    title: (
        Annotated[
            _ThreadTitle,  # type: ignore[valid-type]
            Field(pattern=_ONE_LINE_TITLE),
        ]
        | None
    ) = Field(None, description="One line; surrounding spaces are dropped.")

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

    @field_validator("id")
    @classmethod
    def _client_id(cls, key: str) -> str:
        return client_message_id(key)  # the id the client chose, not the stored key


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


@router.post("", response={201: ThreadOut, **WRITE_ERRORS})
def create_thread(request: HttpRequest, payload: ThreadIn) -> Any:
    canonical = require_namespace(request, payload.namespace, "write")
    return Status(201, services.create_thread(canonical, title=payload.title, actor=actor(request)))


@router.get("", response={200: ThreadListOut, **READ_ERRORS})
def list_threads(request: HttpRequest, namespace: ApiNamespace) -> Any:
    canonical = require_namespace(request, namespace, "read")
    return {"threads": selectors.list_threads(canonical)}


@router.get("/{thread_id}", response={200: ThreadOut, **READ_ERRORS})
def get_thread(request: HttpRequest, thread_id: ThreadId) -> Any:
    return visible_thread(request, thread_id)


@router.delete("/{thread_id}", response={204: None, **DELETE_ERRORS})
def delete_thread(request: HttpRequest, thread_id: ThreadId) -> Any:
    thread = visible_thread(request, thread_id, "write")
    services.delete_thread(thread.id, actor=actor(request))
    return Status(204, None)


Cursor = Annotated[
    str,
    Field(
        max_length=selectors.MAX_MESSAGE_ID_LENGTH,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="A message id of this thread.",
    ),
]


@router.get("/{thread_id}/messages", response={200: MessageListOut, **READ_ERRORS})
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


@router.post(
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


@router.post("/{thread_id}/messages/delete", response={200: DeletedOut, **WRITE_ERRORS})
def delete_messages(request: HttpRequest, thread_id: ThreadId, payload: MessageIdsIn) -> Any:
    thread = visible_thread(request, thread_id, "write")
    deleted = services.delete_messages(thread.id, payload.ids, actor=actor(request))
    return {"deleted": deleted}
