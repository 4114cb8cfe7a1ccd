"""Dashboard views: validate, call selectors/services, render (htmx fragments by partial)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memories import selectors
from memories.models import Memory


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    namespace = request.GET.get("namespace", "").strip()
    memories = selectors.memory_list(namespaces=[namespace] if namespace else None, limit=50)
    namespaces = (
        Memory.objects.values("namespace").annotate(count=Count("id")).order_by("namespace")
    )
    template = "memories/dashboard.html"
    if request.htmx:  # type: ignore[attr-defined]
        template += "#memory-list"
    context = {"memories": memories, "namespaces": namespaces, "namespace": namespace}
    return render(request, template, context)
