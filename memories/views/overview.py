"""The overview: per namespace what is remembered, and whether the service is running
(work waiting for a person, the queue, the worker, the last day's extractions)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memories import overview as counts
from memories.models import MemoryKind, MemoryStatus
from memories.selectors import clean_namespace
from spaceduck.errors import InvalidInput

PAGE = "memories/overview.html"


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
        context["page"] = counts.namespace_counts(after=after)
    template = PAGE + "#overview" if request.htmx else PAGE  # type: ignore[attr-defined]
    return render(request, template, context, status=status)
