"""Notes in the dashboard: the browser, a note's page, the approval gate, and switching
note search on. Views validate, call the selectors and services the JSON API calls,
and render (htmx gets the changed fragment, by partial name).
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from notes import selectors, services
from notes.forms import STATUS_CHOICES, NoteFilterForm
from notes.models import Note, NoteStatus
from spaceduck.core.errors import NotFound, ServiceError
from spaceduck.core.namespaces import NAMESPACE_KINDS
from spaceduck.core.pages import back_to, error_response, staff_actor

DECISIONS = (NoteStatus.ACCEPTED, NoteStatus.REJECTED)
BROWSER = "notes/browse.html"
PAGE_SIZE = 25
SEARCH_LIMIT = 50


# --- The browser -------------------------------------------------------------------


@staff_member_required
@require_GET
def browse(request: HttpRequest) -> HttpResponse:
    """Every note under the store's filters, newest first, or with ``q`` a full-text
    search (the selectors of ``GET /api/notes`` and ``GET /api/notes/search``)."""
    form = NoteFilterForm(request.GET)
    context: dict[str, Any] = {"form": form}
    status = 200
    if not form.is_valid():
        status = 400
    else:
        try:
            context |= _search(form) if form.searching else _browse(request, form)
        except selectors.NoteSearchNotEnabled as error:
            context |= {"error": str(error), "enable_kind": form.search_kind()}
            status = error.status_code
        except ServiceError as error:
            context["error"] = str(error)
            status = error.status_code
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, BROWSER + "#note-list", context, status=status)
    context |= _page_extras(form) | {"back": request.get_full_path()}
    return render(request, BROWSER, context, status=status)


def _page_extras(form: NoteFilterForm) -> dict[str, Any]:
    """What the full page shows around the list: filter choices, search kinds."""
    current = form.status_value()
    choices = list(STATUS_CHOICES)
    if current not in dict(choices):  # e.g. "pending,rejected" from a link
        choices.append((current, current))
    return {
        "status_choices": choices,
        "status_value": current,
        "namespaces": selectors.note_namespaces(),
        **_search_kinds_context(),
    }


def _search_kinds_context() -> dict[str, Any]:
    enabled = selectors.search_kinds()
    on = {row.kind for row in enabled}
    return {
        "search_kinds": enabled,
        "disabled_kinds": [kind for kind in NAMESPACE_KINDS if kind not in on],
    }


def _browse(request: HttpRequest, form: NoteFilterForm) -> dict[str, Any]:
    data = form.cleaned_data
    notes = selectors.list_notes(
        data["namespace"],
        status=data["status"],
        include_superseded=data["include_superseded"],
        kind=data["kind"],
        namespace_kind=data["namespace_kind"],
    ).reverse()  # newest first
    paginator = Paginator(notes, PAGE_SIZE)
    number = data["page"] or 1
    if number > paginator.num_pages:
        raise NotFound(f"page {number} is past the last page ({paginator.num_pages})")
    page = paginator.page(number)
    links = selectors.note_links(page.object_list)
    base = request.GET.copy()
    base.pop("page", None)
    return {
        "page": page,
        "rows": [(note, links[note.pk], None) for note in page.object_list],
        "filter_query": base.urlencode(),
    }


def _search(form: NoteFilterForm) -> dict[str, Any]:
    data = form.cleaned_data
    kind = form.search_kind()
    filters = {
        "status": data["status"],
        "include_superseded": data["include_superseded"],
        "note_kind": data["kind"],
    }
    if kind is None:
        searched = [row.kind for row in selectors.search_kinds()]
        hits = selectors.search_enabled_kinds(data["q"], SEARCH_LIMIT, **filters)
    else:
        searched = [kind]
        hits = selectors.search_note_hits(
            kind, data["q"], SEARCH_LIMIT, data["namespace"], **filters
        )
    links = selectors.note_links([hit.note for hit in hits])
    return {
        "searching": True,
        "searched_kinds": searched,
        "search_limit": SEARCH_LIMIT,
        "rows": [(hit.note, links[hit.note.pk], hit.score) for hit in hits],
    }


@staff_member_required
@require_POST
def enable_search(request: HttpRequest) -> HttpResponse:
    """Switch note search on for a namespace kind (the service the API and admin use)."""
    kind = request.POST.get("kind", "")
    back = back_to(request, reverse("notes:browse"))
    try:
        result = services.enable_note_search(kind)
    except ServiceError as error:
        if request.htmx:  # type: ignore[attr-defined]
            messages.error(request, f"Search was not enabled: {error}")
            return render(
                request,
                BROWSER + "#search-kinds",
                _search_kinds_context() | {"back": back},
                status=error.status_code,
            )
        return error_response(request, str(error), error.status_code)
    if result.newly_enabled:
        count = result.backfilled
        done = (
            f"Note search is on for {result.kind} namespaces: "
            f"{count} existing note{'' if count == 1 else 's'} indexed."
        )
    else:
        done = f"Note search was already on for {result.kind} namespaces."
    messages.success(request, done)
    if request.htmx:  # type: ignore[attr-defined]
        response = render(
            request, BROWSER + "#search-kinds", _search_kinds_context() | {"back": back}
        )
        # The list may be showing "search is not enabled": the filter form re-runs on this.
        response["HX-Trigger"] = "notes-search-enabled"
        return response
    return HttpResponseRedirect(back)


def _namespace_param(request: HttpRequest) -> str | None:
    # A by-id page names the namespace only when the id is used in several.
    return request.GET.get("namespace") or None


# --- A note's page -----------------------------------------------------------------


@staff_member_required
@require_GET
def note_detail(request: HttpRequest, uid: str) -> HttpResponse:
    """One note: its fields, what it supersedes and what supersedes it. ``?namespace=``
    names the note when several namespaces use its id (services.note_by_id)."""
    try:
        note = selectors.get_note(uid, _namespace_param(request))
    except ServiceError as error:
        missing = {"uid": uid, "message": str(error)}
        return render(request, "notes/missing.html", missing, status=error.status_code)
    context: dict[str, Any] = {
        "note": note,
        "row": selectors.review_rows([note])[0],
        "links": selectors.note_links([note])[note.pk],
        "provenance": (
            None
            if note.provenance is None
            else json.dumps(note.provenance, indent=2, ensure_ascii=False, sort_keys=True)
        ),
    }
    return render(request, "notes/note.html", context)


# --- The approval gate -------------------------------------------------------------


@staff_member_required
def review(request: HttpRequest) -> HttpResponse:
    """Pending notes, oldest first, each with the notes it would replace."""
    return render(request, "notes/review.html", {"rows": selectors.review_queue()})


@staff_member_required
@require_POST
def decide(request: HttpRequest, uid: str) -> HttpResponse:
    """Accept or reject one note; answers with its row, now showing the decision."""
    status = request.POST.get("status", "")
    if status not in DECISIONS:
        return error_response(request, "status must be accepted or rejected", 400)
    try:
        note: Note = services.set_note_status(
            uid, status, by=staff_actor(request), namespace=_namespace_param(request)
        )
    except ServiceError as error:
        return error_response(request, str(error), error.status_code)
    if request.htmx:  # type: ignore[attr-defined]
        row = selectors.review_rows([note])[0]
        return render(request, "notes/decided.html", {"row": row})
    messages.success(request, f"Note {note.client_id} {note.status}.")
    return HttpResponseRedirect(back_to(request, reverse("notes:review")))
