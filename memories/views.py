"""Dashboard views: validate, call selectors/services, render (htmx fragments by partial)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from memories import lifecycle, selectors
from memories.models import Memory, MemoryStatus
from memories.recall import RecallQuery, recall
from spaceduck.errors import ServiceError

SEARCH_TOP_K = 20


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """The memory viewer: newest memories, or with ``q`` the same hybrid recall agents get."""
    namespace = request.GET.get("namespace", "").strip()
    q = request.GET.get("q", "").strip()
    status = request.GET.get("status", "").strip()
    if status not in MemoryStatus.values:
        status = ""
    context: dict[str, object] = {
        "namespace": namespace,
        "q": q,
        "status": status,
        "statuses": MemoryStatus.values,
    }
    if q and namespace:
        statuses = [status] if status else [MemoryStatus.ACTIVE]
        query = RecallQuery(
            namespace=namespace,
            text=q,
            top_k=SEARCH_TOP_K,
            statuses=statuses,
            include_superseded=status == MemoryStatus.SUPERSEDED,
        )
        context["hits"] = recall(query)
    elif not q:
        context["memories"] = selectors.memory_list(
            namespaces=[namespace] if namespace else None,
            statuses=[status] if status else None,
            limit=50,
        )
    template = "memories/dashboard.html"
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, template + "#memory-list", context)
    context["namespaces"] = (
        Memory.objects.values("namespace").annotate(count=Count("id")).order_by("namespace")
    )
    return render(request, template, context)


@staff_member_required
@require_POST
def decide(request: HttpRequest, memory_id: int) -> HttpResponse:
    """Set a memory's status as a person (approve a candidate: ``active``; ``archived``);
    the same lifecycle service as ``PATCH /api/memories/{id}``. Answers with its row."""
    memory = Memory.objects.filter(pk=memory_id).first()
    if memory is None:
        return HttpResponse(f"memory {memory_id} not found", status=404, content_type="text/plain")
    try:
        memory = lifecycle.memory_set_status(
            memory=memory,
            status=request.POST.get("status", ""),
            actor=f"staff:{request.user.get_username()}",
            can_approve=True,  # staff are the people the approval gate waits for
        )
    except ServiceError as error:
        return HttpResponse(str(error), status=error.status_code, content_type="text/plain")
    return render(request, "memories/dashboard.html#memory-row", {"memory": memory})
