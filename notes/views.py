"""The note approval gate: staff accept or reject pending notes (the same services as the API)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from notes import selectors, services
from notes.models import NoteStatus
from spaceduck.errors import ServiceError

DECISIONS = (NoteStatus.ACCEPTED, NoteStatus.REJECTED)


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
        message = "status must be accepted or rejected"
        return HttpResponseBadRequest(message, content_type="text/plain")
    try:
        note = services.set_note_status(uid, status, by=f"staff:{request.user.get_username()}")
    except ServiceError as error:
        return HttpResponse(str(error), status=error.status_code, content_type="text/plain")
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, "notes/review.html#note-row", {"note": note, "replaces": []})
    messages.success(request, f"Note {note.uid} {note.status}.")
    return HttpResponseRedirect(reverse("notes:review"))


def browse(request: HttpRequest) -> HttpResponse:
    """Placeholder: filled in by the notes browser."""
    from django.http import Http404

    raise Http404("not built yet")
