"""The conflict inbox in the dashboard (``/review/conflicts/``): each pair side by side with
where both came from; replace, keep both or edit into one, one by one or in bulk.

The decisions are ``memories.write.conflicts``' (the API's too); every control is a plain form,
htmx only swaps the inbox in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_http_methods, require_POST

from memories.models import Conflict
from memories.store.selectors import clean_namespace
from memories.web.views.memory import render_memory_page
from memories.write import conflicts
from spaceduck.core.errors import InvalidInput, NotFound, ServiceError
from spaceduck.core.pages import staff_actor

INBOX = "memories/conflicts.html"
PAGE_SIZE = 50
_DONE = {"replace": "replaced", "keep_both": "kept both", "merge": "edited into one"}


@staff_member_required
@require_http_methods(["GET", "POST"])
def inbox(request: HttpRequest) -> HttpResponse:
    """The open conflicts, newest first (``?namespace=`` for one namespace)."""
    if request.method == "POST":
        return _decide(request)
    namespace, error = _namespace(request.GET.get("namespace", ""))
    status = 400 if error else 200
    return _render(request, namespace, error, status, _ids(request.GET.getlist("undo")))


def _ids(raw: list[str]) -> list[int]:
    return [int(i) for i in raw if i.isdigit()][:PAGE_SIZE]


def _namespace(raw: str) -> tuple[str, str]:
    """(the canonical namespace or "", the error to show)."""
    if not raw.strip():
        return "", ""
    try:
        return clean_namespace(raw.strip()), ""
    except InvalidInput as exc:
        return raw, str(exc)


@dataclass(frozen=True)
class _Draft:
    """A merge the service refused: the reviewer's text and title, kept in its form, and why."""

    conflict_id: int
    content: str
    title: str
    refusal: str


def _render(
    request: HttpRequest,
    namespace: str,
    error: str,
    status: int = 200,
    decided: list[int] | None = None,
    draft: _Draft | None = None,
) -> HttpResponse:
    context: dict[str, Any] = {
        "namespace": namespace,
        "error": error,
        "pairs": [],
        "max_content": settings.MAX_MEMORY_CONTENT_CHARS,
        "max_title": settings.MAX_MEMORY_TITLE_CHARS,
        # The decisions just taken, each with its Undo (while it is one to undo).
        "decided": conflicts.still_decided(decided or []),
    }
    if not error:
        waiting = conflicts.pending(namespace).order_by("-id")
        context["pairs"] = list(waiting[:PAGE_SIZE])
        for pair in context["pairs"]:
            _dress(pair, draft if draft is not None and draft.conflict_id == pair.pk else None)
        context["more"] = waiting[PAGE_SIZE : PAGE_SIZE + 1].exists()
    template = INBOX + "#inbox" if request.htmx else INBOX  # type: ignore[attr-defined]
    return render(request, template, context, status=status)


def _dress(pair: Conflict, draft: _Draft | None) -> None:
    """What a pair's card shows: both sides, and the merge form as the reviewer left it
    when the service refused it (else the candidate's text and no title)."""
    pair.sides = (("old", pair.old), ("new", pair.new))  # type: ignore[attr-defined]
    pair.draft = draft or _Draft(pair.pk, pair.new.content, "", "")  # type: ignore[attr-defined]


def _refused_merge(
    request: HttpRequest, namespace: str, draft: _Draft, status: int
) -> HttpResponse:
    """A refused merge: with htmx only its card comes back, in place (the page keeps its
    scroll), the refusal beside the form and in the flash; without, the inbox with it."""
    if not request.htmx:  # type: ignore[attr-defined]
        return _render(request, namespace, "", status=status, draft=draft)
    pair = next((p for p in conflicts.pending().filter(pk=draft.conflict_id)), None)
    if pair is None:  # decided meanwhile: the inbox as it is now
        return _render(request, namespace, "", status=status)
    _dress(pair, draft)
    context = {
        "pair": pair,
        "alone": True,
        "max_content": settings.MAX_MEMORY_CONTENT_CHARS,
        "max_title": settings.MAX_MEMORY_TITLE_CHARS,
    }
    response = render(request, INBOX + "#pair", context, status=status)
    response["HX-Retarget"] = f"#conflict-{pair.pk}"
    response["HX-Reswap"] = "outerHTML"
    return response


def _decide(request: HttpRequest) -> HttpResponse:
    # A pair's own buttons send "row" = "<decision>:<id>" (merge with that pair's
    # "content-<id>"); the bulk buttons send "decision" with the ticked "ids".
    row_decision, _, row_id = request.POST.get("row", "").partition(":")
    namespace, _error = _namespace(request.POST.get("namespace", ""))
    decided: list[int] = []
    try:
        if row_decision:
            decided = _decide_one(request, row_decision, row_id)
        else:
            decided = _decide_many(request)
    except ServiceError as exc:
        messages.error(request, str(exc))
        if row_decision == "merge" and row_id.isdigit() and not isinstance(exc, NotFound):
            draft = _Draft(
                int(row_id),
                request.POST.get(f"content-{row_id}", ""),
                request.POST.get(f"title-{row_id}", ""),
                str(exc),
            )
            return _refused_merge(request, namespace, draft, exc.status_code)
        if request.htmx:  # type: ignore[attr-defined]
            return _render(request, namespace, "", status=getattr(exc, "status_code", 400))
    if request.htmx:  # type: ignore[attr-defined]
        return _render(request, namespace, "", decided=decided)
    query = ([("namespace", namespace)] if namespace else []) + [("undo", i) for i in decided]
    target = reverse("memories:conflicts")
    return HttpResponseRedirect(f"{target}?{urlencode(query)}" if query else target)


@staff_member_required
@require_POST
def undo(request: HttpRequest, conflict_id: int) -> HttpResponse:
    """Undo a decision (``conflicts.conflict_undo``), from the inbox or a memory's page
    (``memory``: the page to show again)."""
    status = 200
    try:
        conflict = conflicts.conflict_get(conflict_id)
        conflicts.conflict_undo(conflict=conflict, actor=staff_actor(request), can_approve=True)
        messages.success(
            request, f"Conflict {conflict_id}: decision undone; it waits in the inbox again."
        )
    except ServiceError as exc:
        messages.error(request, str(exc))
        status = exc.status_code
    memory = request.POST.get("memory", "")
    if memory.isdigit():
        if request.htmx:  # type: ignore[attr-defined]
            return render_memory_page(request, int(memory), status)
        return HttpResponseRedirect(reverse("memories:memory", args=[int(memory)]))
    namespace, _error = _namespace(request.POST.get("namespace", ""))
    if request.htmx:  # type: ignore[attr-defined]
        return _render(request, namespace, "", status=status)
    target = reverse("memories:conflicts")
    return HttpResponseRedirect(
        f"{target}?{urlencode({'namespace': namespace})}" if namespace else target
    )


def _decide_one(request: HttpRequest, decision: str, raw_id: str) -> list[int]:
    if not raw_id.isdigit():
        raise _Bad("choose a conflict (its id is a number)")
    conflict = conflicts.conflict_get(int(raw_id))
    merge = decision == "merge"  # the text and title of the other pairs are not this decision's
    conflicts.conflict_resolve(
        conflict=conflict,
        decision=decision,
        actor=staff_actor(request),
        can_approve=True,
        content=request.POST.get(f"content-{raw_id}", "") if merge else "",
        title=request.POST.get(f"title-{raw_id}", "") if merge else "",
    )
    messages.success(request, f"Conflict {conflict.pk}: {_DONE.get(decision, decision)}.")
    return [conflict.pk]


def _decide_many(request: HttpRequest) -> list[int]:
    ids = request.POST.getlist("ids")
    if not ids:
        raise _Bad("tick at least one conflict, then choose what to do with them")
    if not all(i.isdigit() for i in ids):
        raise _Bad("conflict ids are numbers")
    decision = request.POST.get("decision", "")
    done, skipped = conflicts.conflicts_resolve(
        conflict_ids=[int(i) for i in ids],
        decision=decision,
        actor=staff_actor(request),
        can_approve=True,
    )
    if done:
        messages.success(request, f"{len(done)} conflicts: {_DONE.get(decision, decision)}.")
    for conflict_id, why in skipped.items():
        messages.warning(request, f"Conflict {conflict_id} left as it was: {why}.")
    return done


class _Bad(ServiceError):
    """A form that does not say what to decide (400)."""
