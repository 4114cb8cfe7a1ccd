"""JSON API for memories: validate, authorise, call selectors/services, shape output."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema
from ninja.errors import HttpError

from memories import selectors, services
from memories.models import Memory
from spaceduck.access import request_token, require_namespace

router = Router(tags=["memories"])
facts_router = Router(tags=["facts"])
threads_router = Router(tags=["threads"])


class MemoryOut(Schema):
    id: int
    namespace: str
    kind: str
    title: str
    content: str
    summary: str
    tags: list[str]
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


class MemoryListOut(Schema):
    memories: list[MemoryOut]


def _visible_memory(request: HttpRequest, memory_id: int, permission: str = "read") -> Memory:
    memory = selectors.memory_get(memory_id=memory_id)
    if memory is None or not request_token(request).grants_namespace(memory.namespace):
        raise HttpError(404, f"memory {memory_id} not found")
    require_namespace(request, memory.namespace, permission)
    return memory


@router.get("", response=MemoryListOut)
def list_memories(request: HttpRequest, namespace: str, limit: int = 200) -> Any:
    canonical = require_namespace(request, namespace, "read")
    if not 1 <= limit <= 1000:
        raise HttpError(422, "limit must be between 1 and 1000")
    return {"memories": list(selectors.memory_list(namespaces=[canonical], limit=limit))}


@router.get("/{int:memory_id}", response=MemoryOut)
def get_memory(request: HttpRequest, memory_id: int) -> Any:
    return _visible_memory(request, memory_id)


@router.delete("/{int:memory_id}", response={204: None})
def delete_memory(request: HttpRequest, memory_id: int) -> Any:
    memory = _visible_memory(request, memory_id, "write")
    services.memory_delete(memory=memory, actor=f"token:{request_token(request).name}")
    return 204, None
