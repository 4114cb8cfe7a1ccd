"""Dashboard views: validate, call selectors/services, render (htmx fragments by partial).

Every action is a plain form POST that redirects (POST -> redirect -> GET) and, with
htmx, swaps only the part of the page it changed. Errors are shown where they happened
with a 4xx status, never a 500.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from memories.models import Memory, MemoryStatus
from memories.recall.hybrid import RecallHit, RecallQuery, recall
from memories.store import selectors, timeline
from memories.web import history
from memories.web.forms import MemoryEditForm, MemoryFilterForm
from memories.write import conflicts, edits, lifecycle, services
from spaceduck.core.errors import ServiceError
from spaceduck.core.pages import back_to, error_response, staff_actor

SEARCH_TOP_K = 20
VIEWER = "memories/dashboard.html"
PAGE = "memories/memory.html"
QUEUE = "memories/review.html"


# --- The viewer ----------------------------------------------------------------------


# The viewer's namespace, kept in the session: coming back to the viewer (the navigation's
# link, a memory's page and back) finds the namespace one was looking at and recalling from.
REMEMBERED_NAMESPACE = "viewer.namespace"


def remembered(request: HttpRequest) -> str:
    return str(request.session.get(REMEMBERED_NAMESPACE, ""))


def _viewer_query(request: HttpRequest) -> QueryDict:
    """The query string; the viewer opened without one (the navigation's link) is the
    remembered namespace. A query string is taken as it is (a shared link shows what it
    says), and ``namespace=`` (the Clear link) is every namespace."""
    query = request.GET.copy()
    if not query and remembered(request):
        query["namespace"] = remembered(request)
    return query


@staff_member_required
@require_GET
def dashboard(request: HttpRequest) -> HttpResponse:
    """The memory viewer: filtered pages of memories, or with ``q`` the recall agents get
    (``memories.recall.hybrid.recall``, the API's search). The recall box searches as one
    types (htmx, debounced); without JavaScript it is the same GET form."""
    query = _viewer_query(request)
    form = MemoryFilterForm(query, auto_id="%s")
    context: dict[str, Any] = {"form": form, "query": query.urlencode()}
    status = 200
    if not form.is_valid():
        status = 400
    else:
        # Chosen in this request, and valid (a refused one is not kept).
        chosen = form.cleaned_data["namespace"]
        if "namespace" in request.GET and remembered(request) != chosen:
            request.session[REMEMBERED_NAMESPACE] = chosen
        context |= _search(form) if form.cleaned_data["q"].strip() else _browse(form)
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, VIEWER + "#memory-list", context, status=status)
    context["namespaces"] = selectors.memory_namespaces()
    context["choice_fields"] = [form[name] for name in MemoryFilterForm.CHOICES]
    return render(request, VIEWER, context, status=status)


def _browse(form: MemoryFilterForm) -> dict[str, Any]:
    filters = form.filters()
    page = selectors.memory_page(
        filters=filters, after=form.cleaned_data["after"], before=form.cleaned_data["before"]
    )
    total, capped = selectors.memory_count(filters=filters)
    return {"page": page, "total": total, "capped": capped, "filter_query": form.filter_query()}


def _search(form: MemoryFilterForm) -> dict[str, Any]:
    data = form.cleaned_data
    if not data["namespace"]:
        return {"searching": True, "hits": [], "weak_hits": []}
    status = data["status"]
    query = RecallQuery(
        namespace=data["namespace"],
        text=data["q"],
        top_k=SEARCH_TOP_K,
        kinds=[data["kind"]] if data["kind"] else None,
        statuses=[status] if status else [MemoryStatus.ACTIVE],
        scopes=[data["scope"]] if data["scope"] else None,
        thread_id=data["thread"] or None,
        project_id=data["project"] or None,
        include_superseded=status == MemoryStatus.SUPERSEDED,
    )
    hits: list[RecallHit] = recall(query)
    return {
        "searching": True,
        "hits": [hit for hit in hits if not hit.weak],
        "weak_hits": [hit for hit in hits if hit.weak],
    }


@staff_member_required
@require_POST
def decide(request: HttpRequest, memory_id: int) -> HttpResponse:
    """Approve (``status=active``) or archive a memory from its row in the viewer; the same
    lifecycle service as ``PATCH /api/memories/{id}``. htmx gets the row back."""
    memory = selectors.memory_get(memory_id=memory_id)
    if memory is None:
        return error_response(request, f"memory {memory_id} not found", 404)
    try:
        memory = lifecycle.memory_set_status(
            memory=memory,
            status=request.POST.get("status", ""),
            actor=staff_actor(request),
            can_approve=True,  # staff are the people the approval gate waits for
        )
    except ServiceError as error:
        return error_response(request, str(error), error.status_code)
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, VIEWER + "#memory-row", {"memory": memory})
    messages.success(request, f"Memory {memory.pk} is {memory.status}.")
    return HttpResponseRedirect(back_to(request, reverse("memories:dashboard")))


# --- A memory's page -------------------------------------------------------------------


def _memory_or_404(memory_id: int) -> Memory:
    memory = (
        Memory.objects.select_related("source_message", "source_thread", "superseded_by")
        .filter(pk=memory_id)
        .first()
    )
    if memory is None:
        raise Http404(f"memory {memory_id} not found")
    return memory


# Values of the memory's own claim shown on its page (the claim's page shows more).
PAGE_TIMELINE = 12


def _page_context(memory: Memory, form: MemoryEditForm | None = None) -> dict[str, Any]:
    claim = timeline.claim_of(memory)
    events = list(selectors.memory_history(memory_id=memory.pk))
    return {
        "memory": memory,
        "provenance": selectors.memory_provenance(memory),
        "history": history.entries(memory, events),
        "restore_to_undo": lifecycle.restore_to_undo(memory),
        "decided_conflicts": conflicts.undoable(memory),
        "timeline": timeline.claim_timeline(claim, limit=PAGE_TIMELINE) if claim else None,
        "supersedes": list(memory.supersedes.all().order_by("-updated_at")),
        "form": form or MemoryEditForm(initial=_editable(memory)),
        "editing": form is not None,
        "active_confidence": settings.ACTIVE_CONFIDENCE,
        "open_conflict": conflicts.pending_of([memory.pk]).get(memory.pk),
    }


def _editable(memory: Memory) -> dict[str, Any]:
    return {name: getattr(memory, name) for name in MemoryEditForm.FIELDS}


def _render_page(
    request: HttpRequest, memory: Memory, form: MemoryEditForm | None = None, status: int = 200
) -> HttpResponse:
    template = PAGE + "#memory-page" if request.htmx else PAGE  # type: ignore[attr-defined]
    return render(request, template, _page_context(memory, form), status=status)


def render_memory_page(request: HttpRequest, memory_id: int, status: int = 200) -> HttpResponse:
    """A memory's page (its partial for htmx) after an action taken elsewhere (an undo of
    one of its conflicts); the viewer when the memory is gone."""
    memory = Memory.objects.filter(pk=memory_id).first()
    if memory is None:
        return error_response(request, f"memory {memory_id} not found", 404)
    return _render_page(request, _memory_or_404(memory_id), status=status)


@staff_member_required
@require_GET
def memory_detail(request: HttpRequest, memory_id: int) -> HttpResponse:
    """Everything about one memory: fields, provenance, history, supersession, actions."""
    memory = Memory.objects.filter(pk=memory_id).first()
    if memory is None:
        tombstone = selectors.memory_tombstone(memory_id=memory_id)
        context = {"memory_id": memory_id, "tombstone": tombstone}
        return render(request, "memories/gone.html", context, status=404)
    return _render_page(request, _memory_or_404(memory_id))


def _after_action(request: HttpRequest, memory: Memory, done: str) -> HttpResponse:
    if request.htmx:  # type: ignore[attr-defined]
        messages.success(request, done)
        return _render_page(request, _memory_or_404(memory.pk))
    messages.success(request, done)
    return HttpResponseRedirect(reverse("memories:memory", args=[memory.pk]))


@staff_member_required
@require_POST
def memory_edit(request: HttpRequest, memory_id: int) -> HttpResponse:
    """Edit through edits.memory_edit: re-hashed, re-embedded, re-indexed, in history."""
    memory = _memory_or_404(memory_id)
    form = MemoryEditForm(request.POST)
    if not form.is_valid():
        return _render_page(request, memory, form, status=400)
    changes = form.changes(_editable(memory))
    if not changes:
        return _after_action(request, memory, "Nothing changed.")
    try:
        edits.memory_edit(memory=memory, changes=changes, actor=staff_actor(request))
    except ServiceError as error:
        form.add_error(None, str(error))
        return _render_page(request, _memory_or_404(memory_id), form, status=error.status_code)
    return _after_action(request, memory, f"Saved: {', '.join(sorted(changes))}.")


def _act(
    request: HttpRequest, memory_id: int, action: Callable[[Memory, str], str]
) -> HttpResponse:
    """A button on a memory's page: ``action(memory, actor)`` calls the service and says
    what it did; a refusal is a message on the page, with the service's status."""
    memory = _memory_or_404(memory_id)
    try:
        done = action(memory, staff_actor(request))
    except ServiceError as error:
        messages.error(request, str(error))
        return _render_page(request, _memory_or_404(memory_id), status=error.status_code)
    return _after_action(request, memory, done)


@staff_member_required
@require_POST
def memory_status(request: HttpRequest, memory_id: int) -> HttpResponse:
    """Approve, archive or restore (``status`` = active or archived)."""

    def set_status(memory: Memory, actor: str) -> str:
        status = request.POST.get("status", "")
        lifecycle.memory_set_status(memory=memory, status=status, actor=actor, can_approve=True)
        return f"Memory {memory.pk} is {memory.status}."

    return _act(request, memory_id, set_status)


@staff_member_required
@require_POST
def memory_reverse(request: HttpRequest, memory_id: int) -> HttpResponse:
    """Overrule a supersession: this memory is live again, its superseder archived."""

    def reverse_it(memory: Memory, actor: str) -> str:
        lifecycle.memory_reverse_supersession(memory=memory, actor=actor)
        return "Supersession reversed: this memory is active again."

    return _act(request, memory_id, reverse_it)


@staff_member_required
@require_POST
def memory_restore_version(request: HttpRequest, memory_id: int) -> HttpResponse:
    """*Restore this version*: the fields an edit changed, as they were before it; a new
    edit through edits.memory_edit (the service PATCH /api/memories/{id} uses)."""

    def restore(memory: Memory, actor: str) -> str:
        raw = request.POST.get("event", "")
        if not raw.isdigit():
            raise _Bad("choose the history entry to restore (its number)")
        restored = lifecycle.memory_restore_version(memory=memory, event_id=int(raw), actor=actor)
        return f"Restored: {', '.join(restored)}."

    return _act(request, memory_id, restore)


@staff_member_required
@require_POST
def memory_undo_restore(request: HttpRequest, memory_id: int) -> HttpResponse:
    """Undo a restore: back to the archive, or superseded again by the same memory."""

    def undo(memory: Memory, actor: str) -> str:
        undone = lifecycle.memory_undo_restore(memory=memory, actor=actor)  # its own copy
        return f"Restore undone: memory {undone.pk} is {undone.status}."

    return _act(request, memory_id, undo)


class _Bad(ServiceError):
    """A form that does not say what to do (400)."""


@staff_member_required
@require_http_methods(["GET", "POST"])
def memory_delete(request: HttpRequest, memory_id: int) -> HttpResponse:
    """GET asks for confirmation; POST deletes (history keeps a tombstone)."""
    memory = _memory_or_404(memory_id)
    if request.method == "GET":
        template = "memories/delete.html"
        if request.htmx:  # type: ignore[attr-defined]
            template += "#confirm"
        return render(request, template, {"memory": memory})
    services.memory_delete(
        memory=memory, actor=staff_actor(request), reason="deleted in the dashboard"
    )
    messages.success(request, f"Memory {memory_id} deleted; its history keeps a tombstone.")
    target = reverse("memories:dashboard")
    if request.htmx:  # type: ignore[attr-defined]
        return HttpResponseClientRedirect(target)
    return HttpResponseRedirect(target)


# --- The candidate queue -----------------------------------------------------------------


@staff_member_required
@require_http_methods(["GET", "POST"])
def review(request: HttpRequest) -> HttpResponse:
    """Candidates waiting for a person; approve or reject them one by one or in bulk."""
    if request.method == "POST":
        return _review_decide(request)
    form = MemoryFilterForm(request.GET, auto_id="%s")
    status = 200 if form.is_valid() else 400
    context = _queue_context(form) if status == 200 else {"form": form}
    context |= _undo_offer(request.GET.get("undo", ""))
    template = QUEUE + "#queue" if request.htmx else QUEUE  # type: ignore[attr-defined]
    return render(request, template, context, status=status)


# --- Undo of a bulk decision: the previous statuses travel signed in the page ------------
UNDO_SALT = "spaceduck.review.undo"
UNDO_SECONDS = 3600  # offered for as long as the page shows it, up to an hour


def _undo_token(decision: str, statuses: dict[int, tuple[str, str]]) -> str:
    payload = {"d": decision, "s": {str(k): list(v) for k, v in statuses.items()}}
    return signing.dumps(payload, salt=UNDO_SALT)


def _undo_payload(token: str) -> tuple[str, dict[int, tuple[str, str]]] | None:
    try:
        payload = signing.loads(token, salt=UNDO_SALT, max_age=UNDO_SECONDS)
    except signing.BadSignature:
        return None
    statuses = {int(k): (str(v[0]), str(v[1])) for k, v in payload["s"].items()}
    return str(payload["d"]), statuses


def _undo_offer(token: str) -> dict[str, Any]:
    """The Undo form's context when ``token`` is a valid, fresh undo token."""
    found = _undo_payload(token) if token else None
    if found is None:
        return {}
    decision, statuses = found
    done = {"approve": "approved", "reject": "rejected"}.get(decision, decision)
    return {"undo": token, "undo_what": f"{len(statuses)} {done}"}


def _review_undo(request: HttpRequest) -> HttpResponse:
    found = _undo_payload(request.POST.get("undo", ""))
    if found is None:
        return error_response(request, "this undo has expired or is not valid", 400)
    decision, statuses = found
    outcome = lifecycle.memories_undo(statuses=statuses, actor=staff_actor(request), what=decision)
    if outcome.changed:
        messages.success(request, f"Undone: {len(outcome.changed)} back as they were.")
    for memory_id, why in outcome.skipped.items():
        messages.warning(request, f"Memory {memory_id} left as it is: it {why}.")
    if request.htmx:  # type: ignore[attr-defined]
        form = MemoryFilterForm({"namespace": request.POST.get("namespace", "")})
        context = _queue_context(form) if form.is_valid() else {"form": form}
        return render(request, QUEUE + "#queue", context)
    return HttpResponseRedirect(back_to(request, reverse("memories:review")))


def _queue_context(form: MemoryFilterForm) -> dict[str, Any]:
    filters = selectors.MemoryFilter(
        namespace=form.cleaned_data["namespace"], status=MemoryStatus.CANDIDATE
    )
    page = selectors.memory_page(
        filters=filters,
        after=form.cleaned_data["after"],
        before=form.cleaned_data["before"],
        related=("source_message",),
        # Newest learnt first: approving, rejecting and undoing do not move an item, so an
        # undone one comes back in its place (the last change first put it at the top).
        order="created_at",
    )
    verdicts = selectors.candidate_verdicts(page.memories)
    waiting = conflicts.pending_of(m.pk for m in page.memories)
    for memory in page.memories:
        memory.verdict = verdicts.get(memory.pk)  # type: ignore[attr-defined]
        memory.conflict = waiting.get(memory.pk)  # type: ignore[attr-defined]
    return {
        "form": form,
        "page": page,
        "active_confidence": settings.ACTIVE_CONFIDENCE,
        "namespace": form.cleaned_data["namespace"],
    }


def _review_decide(request: HttpRequest) -> HttpResponse:
    if "undo" in request.POST:
        return _review_undo(request)
    # A row's own button sends "row" = "<decision>:<id>"; the bulk buttons send
    # "decision" with the ticked "ids".
    row_decision, _, row_id = request.POST.get("row", "").partition(":")
    decision = row_decision or request.POST.get("decision", "")
    ids = [row_id] if row_decision else request.POST.getlist("ids")
    if decision not in ("approve", "reject"):
        return error_response(request, "decision must be approve or reject", 400)
    if not ids or not all(i.isdigit() for i in ids):
        return error_response(
            request, "choose at least one memory (ids must be memory numbers)", 400
        )
    outcome = lifecycle.memories_decide(
        memory_ids=[int(i) for i in ids],
        decision=decision,
        actor=staff_actor(request),
        can_approve=True,
    )
    verb = "approved" if decision == "approve" else "rejected"
    if outcome.changed:
        messages.success(request, f"{len(outcome.changed)} {verb}.")
    for memory_id, why in outcome.skipped.items():
        messages.warning(request, f"Memory {memory_id} left as it was: it {why}.")
    undo = _undo_token(decision, outcome.statuses) if outcome.changed else ""
    if request.htmx:  # type: ignore[attr-defined]
        form = MemoryFilterForm({"namespace": request.POST.get("namespace", "")})
        context = _queue_context(form) if form.is_valid() else {"form": form}
        return render(request, QUEUE + "#queue", context | _undo_offer(undo))
    target = back_to(request, reverse("memories:review"))
    if undo:
        target += ("&" if "?" in target else "?") + urlencode({"undo": undo})
    return HttpResponseRedirect(target)
