"""Dashboard pages over both apps: a person's data (find it, download it, erase it).

Project-level views (they read memories and notes alike), staff only as every dashboard
page. They call the same services as the rest: ``spaceduck.ops.people`` to search,
``spaceduck.ops.transfer.export.ExportStream`` (``manage.py export``'s format) to download and
``spaceduck.ops.erasure.erase_namespace`` (``manage.py erase``, ``DELETE
/api/namespaces/{ns}``) to erase.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memories.store import timeline
from spaceduck.core.errors import InvalidInput, ServiceError
from spaceduck.core.pages import error_response, staff_actor
from spaceduck.models import NamespaceErasure
from spaceduck.ops import people
from spaceduck.ops.erasure import canonical, describe, erase_namespace
from spaceduck.ops.transfer.export import ExportStream
from spaceduck.ops.transfer.formats import TransferError

SEARCH = "people/people.html"
PERSON = "people/person.html"
ERASURES_SHOWN = 20


def _page_number(request: HttpRequest) -> int:
    raw = request.GET.get("page", "1")
    if not raw.isdigit() or int(raw) < 1:
        raise InvalidInput("page must be a whole number from 1")
    return int(raw)


@staff_member_required
@require_GET
def people_search(request: HttpRequest) -> HttpResponse:
    """``/people/?q=``: namespaces and rows holding the text; ``?namespace=``: one person."""
    if request.GET.get("namespace"):
        return _person(request)
    try:
        found = people.search(
            request.GET.get("q", ""), kind=request.GET.get("kind", ""), page=_page_number(request)
        )
    except ServiceError as exc:
        return error_response(request, str(exc), exc.status_code)
    context: dict[str, Any] = {
        "found": found,
        "query": found.query,
        "base_query": urlencode({"q": found.query}),
        "kind": request.GET.get("kind", ""),
        "erasures": _described(NamespaceErasure.objects.all()[:ERASURES_SHOWN]),
        "max_query": people.MAX_QUERY,
    }
    template = f"{SEARCH}#people-results" if getattr(request, "htmx", False) else SEARCH
    return render(request, template, context)


def _person(request: HttpRequest) -> HttpResponse:
    try:
        person = people.person(
            request.GET["namespace"],
            kind=request.GET.get("kind", ""),
            page=_page_number(request),
        )
    except ServiceError as exc:
        return error_response(request, str(exc), exc.status_code)
    context = {
        "person": person,
        "kind": request.GET.get("kind", ""),
        "total": sum(person.counts.values()),
        "base_query": urlencode({"namespace": person.namespace}),
        "describe": describe(person.counts),
        "erasures": _described(
            NamespaceErasure.objects.filter(namespace=person.namespace)[:ERASURES_SHOWN]
        ),
    }
    if getattr(request, "htmx", False):  # a page of one kind's rows
        return render(request, f"{PERSON}#person-rows", context)
    context["beliefs"] = timeline.changed_beliefs(person.namespace)
    template = PERSON
    return render(request, template, context)


def _described(erasures: Iterable[NamespaceErasure]) -> list[NamespaceErasure]:
    """Each erasure with what went in plain words ("6 history entries, 1 fact")."""
    shown = list(erasures)
    for erasure in shown:
        erasure.described = describe(erasure.counts)  # type: ignore[attr-defined]
    return shown


def _filename(namespace: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", namespace).strip("-")[:80] or "namespace"
    return f"spaceduck-{slug}-{timezone.now():%Y%m%d-%H%M%S}.jsonl"


@staff_member_required
@require_GET
def person_export(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """The namespace in ``manage.py export``'s format, streamed as it is read (a large
    namespace is never held in memory); ``manage.py import`` reads the file back."""
    try:
        stream = ExportStream(namespace=request.GET.get("namespace", ""), vectors=False)
    except TransferError as exc:
        return error_response(request, str(exc), 422)
    response = StreamingHttpResponse(
        (line.encode("utf-8") for line in stream), content_type="application/x-ndjson"
    )
    assert stream.namespace is not None
    response["Content-Disposition"] = f'attachment; filename="{_filename(stream.namespace)}"'
    response["Cache-Control"] = "no-store"
    return response


@staff_member_required
@require_POST
def person_erase(request: HttpRequest) -> HttpResponse:
    """Erase after the person typed the namespace's name exactly; then back to search."""
    try:
        namespace = canonical(request.POST.get("namespace", ""))
        typed = request.POST.get("confirm", "").strip()
        if typed != namespace:
            raise InvalidInput(
                f"type the namespace's name exactly ({namespace}) to erase it: nothing was erased"
            )
        erasure = erase_namespace(namespace, by=staff_actor(request))
    except ServiceError as exc:
        return error_response(request, str(exc), exc.status_code)
    messages.success(
        request,
        f"Erased {erasure.namespace}: {describe(erasure.counts)}. "
        "Backups made before still hold it until they are rotated away.",
    )
    target = reverse("people") + "?" + urlencode({"q": ""})
    if getattr(request, "htmx", False):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = target
        return response
    return HttpResponseRedirect(target)


@staff_member_required
@require_GET
def nav_counts(request: HttpRequest) -> HttpResponse:
    """The navigation's counts (candidates, conflicts, notes) as out-of-band swaps: every
    dashboard page polls it every 30 s, so a queue another reviewer emptied shows it."""
    return render(request, "includes/nav_counts.html")
