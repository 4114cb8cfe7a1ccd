"""Dashboard views: validate, call selectors/services, render (htmx fragments by partial)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memories import selectors
from memories.models import Memory
from memories.recall import RecallQuery, recall

SEARCH_TOP_K = 20


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """The memory viewer: newest memories, or with ``q`` the same hybrid recall agents get."""
    namespace = request.GET.get("namespace", "").strip()
    q = request.GET.get("q", "").strip()
    context: dict[str, object] = {"namespace": namespace, "q": q}
    if q and namespace:
        context["hits"] = recall(RecallQuery(namespace=namespace, text=q, top_k=SEARCH_TOP_K))
    elif not q:
        context["memories"] = selectors.memory_list(
            namespaces=[namespace] if namespace else None, limit=50
        )
    template = "memories/dashboard.html"
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, template + "#memory-list", context)
    context["namespaces"] = (
        Memory.objects.values("namespace").annotate(count=Count("id")).order_by("namespace")
    )
    return render(request, template, context)
