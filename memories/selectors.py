"""Read queries on memories, used by the JSON API, the dashboard and the CLI."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from memories.models import Memory, MemoryEvent


def memory_list(
    *,
    namespaces: Iterable[str] | None = None,
    kinds: Iterable[str] | None = None,
    statuses: Iterable[str] | None = None,
    limit: int = 200,
) -> QuerySet[Memory]:
    """Newest ``updated_at`` first."""
    queryset = Memory.objects.all()
    if namespaces is not None:
        queryset = queryset.filter(namespace__in=list(namespaces))
    if kinds:
        queryset = queryset.filter(kind__in=list(kinds))
    if statuses:
        queryset = queryset.filter(status__in=list(statuses))
    return queryset.order_by("-updated_at", "-id")[:limit]


def memory_get(*, memory_id: int) -> Memory | None:
    return Memory.objects.filter(pk=memory_id).first()


def memory_history(*, memory_id: int) -> QuerySet[MemoryEvent]:
    return MemoryEvent.objects.filter(memory_id=memory_id).order_by("created_at", "id")
