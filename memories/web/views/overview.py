"""The overview: per namespace what is remembered, and whether the service is running
(work waiting for a person, the queue, the worker, the last day's extractions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from memories.models import MemoryKind, MemoryStatus
from memories.store.selectors import clean_namespace
from memories.web import overview as counts
from spaceduck.core.errors import InvalidInput

PAGE = "memories/overview.html"


@dataclass(frozen=True)
class Cell:
    count: str  # formatted with thousands separators
    href: str  # "" for a zero: nothing to list
    css: str = ""
    label: str = ""  # the column's name: a phone shows the row as a card, each cell labelled


@dataclass(frozen=True)
class NamespaceRow:
    namespace: str
    href: str
    total: str
    kinds: list[Cell]
    statuses: list[Cell]


def _namespace_rows(page: counts.NamespacePage) -> list[NamespaceRow]:
    """The table's cells with their links, built here once per page: a ``{% url %}`` per
    cell made the template the page's main cost (50 namespaces x 10 cells)."""
    listing, review = reverse("memories:dashboard"), reverse("memories:review")
    rows = []
    for row in page.rows:
        ns = quote(row.namespace, safe="")
        base = f"{listing}?namespace={ns}"
        kinds = [
            Cell(f"{n:,}", f"{base}&kind={kind}" if n else "", label=kind) for kind, n in row.kinds
        ]
        statuses = [
            Cell(f"{n:,}", f"{review}?namespace={ns}", "candidates", label=status)
            if n and status == MemoryStatus.CANDIDATE
            else Cell(f"{n:,}", f"{base}&status={status}" if n else "", label=status)
            for status, n in row.statuses
        ]
        rows.append(NamespaceRow(row.namespace, base, f"{row.total:,}", kinds, statuses))
    return rows


@staff_member_required
@require_GET
def overview(request: HttpRequest) -> HttpResponse:
    """``after`` (a namespace) is where the page of namespaces starts; htmx gets the
    ``#overview`` part (the pager, the refresh button and the periodic refresh)."""
    context: dict[str, Any] = {
        "kinds": MemoryKind.values,
        "statuses": MemoryStatus.values,
        "state": counts.service_state(),
        "worker_stale_seconds": settings.WORKER_STALE_SECONDS,
    }
    status = 200
    after = request.GET.get("after", "")
    try:
        after = clean_namespace(after) if after else ""
    except InvalidInput as error:
        context["error"] = f"after: {error}"
        status = 400
    else:
        page = counts.namespace_counts(after=after)
        context |= {"page": page, "rows": _namespace_rows(page)}
    template = PAGE + "#overview" if request.htmx else PAGE  # type: ignore[attr-defined]
    return render(request, template, context, status=status)
