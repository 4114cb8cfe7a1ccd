"""Extraction records: list, read, retry.

Every route declares the errors it can answer with (``error_responses``) and the real
constraints of its input, so the OpenAPI schema says what the services check."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Field, Query, Router
from ninja.errors import HttpError
from pydantic import field_validator

from memories.api.schemas import READ_ERRORS, RowId, column_length
from memories.models import (
    Extraction,
    client_message_id,
)
from memories.store import selectors
from memories.store.positions import NUMERIC_PATTERN, Position
from memories.write import extraction_log
from spaceduck.core import runtime
from spaceduck.core.access import (
    actor,
    request_token,
    require_namespace,
    require_permission,
)
from spaceduck.core.errors import error_responses
from spaceduck.core.limits import (
    ApiDatetime,
    ApiNamespace,
    api_choices,
    documented,
)
from spaceduck.core.schemas import OutSchema

router = Router(tags=["extractions"])


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

    @field_validator("message_id")
    @classmethod
    def _client_id(cls, key: str | None) -> str | None:
        return None if key is None else client_message_id(key)  # as the client knows it


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


@router.get("", response={200: ExtractionListOut, **READ_ERRORS})
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
    task_id: str | None = Query(
        None, max_length=column_length(Extraction, "task_id"), pattern=ONE_LINE
    ),
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


@router.get("/{int:extraction_id}", response={200: ExtractionOut, **READ_ERRORS})
def get_extraction(request: HttpRequest, extraction_id: RowId) -> Any:
    return _visible_extraction(request, extraction_id, "read")


@router.post(
    "/{int:extraction_id}/retry",
    response={200: ExtractionOut, **error_responses(401, 403, 404, 409, 422)},
)
def retry_extraction(request: HttpRequest, extraction_id: RowId) -> Any:
    """Queue a failed extraction again (fresh attempts; its errors stay as history).

    409 when it is not failed, or when its message was deleted."""
    record = _visible_extraction(request, extraction_id, "write")
    runtime.require_memory_on()  # a retry would write what the extraction finds
    return extraction_log.extraction_retry(extraction_id=record.pk, actor=actor(request))
