"""Write operations on memories, used by the JSON API, the dashboard and the CLI."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from memories import vector_index
from memories.models import Memory, MemoryEvent, MemoryScope, MemoryStatus, SourceType
from spaceduck.namespaces import normalize_namespace
from spaceduck.providers import get_embedder

_SPACES = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s.!?;,]+$")


def content_hash(content: str) -> str:
    """Hash of the normalised content: case, accents' composition, spacing, end punctuation."""
    text = unicodedata.normalize("NFKC", content).casefold()
    text = _TRAILING.sub("", _SPACES.sub(" ", text).strip())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embedding_text(memory: Memory) -> str:
    """The text a memory is embedded from (one place, so reindex and writes agree)."""
    return memory.content


def memory_history_record(
    *, memory: Memory, event: str, actor: str, reason: str = "", data: dict[str, Any] | None = None
) -> MemoryEvent:
    return MemoryEvent.objects.create(
        memory_id=memory.pk,
        namespace=memory.namespace,
        event=event,
        actor=actor,
        reason=reason,
        data=data or {},
    )


def memory_create(
    *,
    namespace: str,
    kind: str,
    content: str,
    actor: str,
    title: str = "",
    summary: str = "",
    tags: list[str] | None = None,
    importance: float = 0.5,
    confidence: float = 0.8,
    status: str = MemoryStatus.ACTIVE,
    scope: str = MemoryScope.GLOBAL,
    scope_id: str = "",
    procedure_subtype: str = "",
    source_type: str = SourceType.API,
    occurred_at: datetime | None = None,
    reason: str = "",
) -> Memory:
    """Insert a memory with its vector (embedded before the write transaction starts)."""
    vector = get_embedder().embed([content])[0]
    now = timezone.now()
    with transaction.atomic():
        memory = Memory.objects.create(
            namespace=normalize_namespace(namespace),
            kind=kind,
            title=title,
            content=content,
            summary=summary,
            tags=tags or [],
            importance=importance,
            confidence=confidence,
            status=status,
            scope=scope,
            scope_id=scope_id,
            procedure_subtype=procedure_subtype,
            source_type=source_type,
            content_hash=content_hash(content),
            occurred_at=occurred_at,
            created_at=now,
            updated_at=now,
            last_seen_at=now,
        )
        vector_index.upsert([(memory.pk, memory.namespace, vector)])
        memory_history_record(
            memory=memory, event=MemoryEvent.Event.CREATED, actor=actor, reason=reason
        )
    return memory


def memory_update_content(*, memory: Memory, content: str, actor: str, reason: str = "") -> Memory:
    """Change a memory's text: re-hash, re-embed and re-index (FTS follows by trigger)."""
    vector = get_embedder().embed([content])[0]
    with transaction.atomic():
        before = memory.content
        memory.content = content
        memory.content_hash = content_hash(content)
        memory.updated_at = timezone.now()
        memory.save(update_fields=["content", "content_hash", "updated_at"])
        vector_index.upsert([(memory.pk, memory.namespace, vector)])
        memory_history_record(
            memory=memory,
            event=MemoryEvent.Event.EDITED,
            actor=actor,
            reason=reason,
            data={"before": {"content": before}},
        )
    return memory


def memory_delete(*, memory: Memory, actor: str, reason: str = "") -> None:
    """Delete a memory; triggers remove its FTS and vector rows, history keeps a tombstone."""
    with transaction.atomic():
        memory_history_record(
            memory=memory,
            event=MemoryEvent.Event.DELETED,
            actor=actor,
            reason=reason,
            data={"content": memory.content, "kind": memory.kind},
        )
        memory.delete()
