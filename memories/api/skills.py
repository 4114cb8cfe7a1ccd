"""Skills: purge the memories a skill wrote.

Every route declares the errors it can answer with (``error_responses``) and the real
constraints of its input, so the OpenAPI schema says what the services check."""

from __future__ import annotations

from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Path, Router

from memories.api.schemas import column_length
from memories.models import (
    Memory,
)
from memories.store import selectors
from memories.write import lifecycle
from spaceduck.core.access import (
    actor,
    request_token,
    require_permission,
)
from spaceduck.core.errors import error_responses
from spaceduck.core.namespaces import WHITESPACE
from spaceduck.core.schemas import OutSchema

router = Router(tags=["skills"])


class PurgedOut(OutSchema):
    deleted: int


# A skill id: up to 255 characters, not only whitespace (one URL path segment).
SkillId = Annotated[
    str,
    Path(..., max_length=column_length(Memory, "source_skill_id"), pattern=f"[^{WHITESPACE}]"),
]


@router.delete("/{skill_id}/memories", response={200: PurgedOut, **error_responses(401, 403, 422)})
def purge_skill(request: HttpRequest, skill_id: SkillId) -> Any:
    require_permission(request, "write")
    token = request_token(request)
    namespaces = [
        ns for ns in selectors.skill_namespaces(skill_id=skill_id) if token.grants_namespace(ns)
    ]
    deleted = lifecycle.skill_purge(skill_id=skill_id, namespaces=namespaces, actor=actor(request))
    return {"deleted": deleted}
