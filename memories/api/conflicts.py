"""JSON API of the conflict inbox (``memories.write.conflicts``): list the pairs waiting for a
person, decide one. Deciding needs the ``approve`` permission, as approving a candidate
does: an agent cannot settle a conflict about what it said itself."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Field, Query, Router, Schema
from ninja.errors import HttpError
from pydantic import ConfigDict

from memories.api.memories import MemoryOut
from memories.api.schemas import READ_ERRORS, ContentText, RowId, TitleText
from memories.models import Conflict
from memories.write import conflicts
from spaceduck.core import runtime
from spaceduck.core.access import actor, request_token, require_permission, resolve_namespace
from spaceduck.core.errors import NotFound, error_responses
from spaceduck.core.limits import ApiNamespace
from spaceduck.core.schemas import OutSchema

router = Router(tags=["conflicts"])
LIST_LIMIT, LIST_MAX = 50, 200


class ConflictOut(OutSchema):
    id: int
    namespace: str
    reason: str = Field(description="Why the engine did not decide on its own.")
    status: Literal["open", "resolved"]
    resolution: str = Field(
        description="replace, keep_both, merge, or settled (the memories changed elsewhere); "
        "empty while open."
    )
    resolved_by: str
    resolved_at: datetime | None
    created_at: datetime
    old: MemoryOut = Field(description="The memory it was about (live while open).")
    new: MemoryOut = Field(description="The new statement, waiting as a candidate while open.")


class ConflictListOut(OutSchema):
    conflicts: list[ConflictOut]
    next: int | None = Field(description="Pass as `before` for the next (older) page.")


class ResolveIn(Schema):
    decision: Literal["replace", "keep_both", "merge"] = Field(
        description="replace: the new memory supersedes the old one (and every other live "
        "memory its claim contradicts); keep_both: both stay active; merge: the new memory "
        "takes `content` and supersedes the old one."
    )
    content: ContentText = Field("", description="For merge only: the text of the one memory.")
    title: TitleText = Field(
        "",
        description="For merge only: the title of the one memory. Empty: one made from "
        "`content` (the old title described the text it replaced).",
    )

    model_config = ConfigDict(extra="forbid")


@router.get("", response={200: ConflictListOut, **READ_ERRORS})
def list_conflicts(
    request: Any,
    namespace: Annotated[
        ApiNamespace | None,
        Query(None, description="Defaults to the token's namespace when it is its only one."),
    ] = None,
    limit: int = Query(LIST_LIMIT, ge=1, le=LIST_MAX),
    before: int | None = Query(None, ge=1, le=2**63 - 1, description="A page's `next`."),
) -> Any:
    """Conflicts waiting for a person in one namespace, newest first."""
    canonical = resolve_namespace(request, namespace, "read")
    waiting = conflicts.pending(canonical).order_by("-id")
    if before is not None:
        waiting = waiting.filter(pk__lt=before)
    page = list(waiting[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return {"conflicts": page, "next": page[-1].pk if more else None}


@router.post(
    "/{int:conflict_id}/resolve",
    response={200: ConflictOut, **error_responses(400, 401, 403, 404, 409, 413, 422)},
)
def resolve_conflict(request: Any, conflict_id: RowId, payload: ResolveIn) -> Any:
    """Decide a conflict; 409 when it was decided already or its memories changed since."""
    conflict = _visible(request, conflict_id)
    require_permission(request, "approve")
    runtime.require_memory_on()  # replace and merge write memories
    return conflicts.conflict_resolve(
        conflict=conflict,
        decision=payload.decision,
        actor=actor(request),
        can_approve=True,
        content=payload.content,
        title=payload.title,
    )


def _visible(request: Any, conflict_id: int) -> Conflict:
    """The conflict, or the same 404 whether it is missing or outside the token's grants."""
    try:
        found = conflicts.conflict_get(conflict_id)
    except NotFound:
        found = None
    if found is None or not request_token(request).grants_namespace(found.namespace):
        raise HttpError(404, f"conflict {conflict_id} not found")
    return found
