"""Threads: each namespace's threads by latest activity; one thread's messages, with the
compaction summaries marked and each message's extraction linked to its record.

Reads only; the queries are memories.web.thread_pages'.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET

from memories.store.positions import TextPosition
from memories.store.selectors import MAX_MESSAGE_ID_LENGTH, has_control_characters
from memories.web import thread_pages
from memories.web.forms import PagedFilterForm
from memories.web.views.rows import extraction_href, stamp
from spaceduck.core.errors import InvalidInput, NotFound

LIST = "memories/threads.html"
PAGE = "memories/thread.html"


def thread_url(thread_id: str) -> str | None:
    """The thread's page, or None for an id the URL cannot carry (one holding "/")."""
    if not thread_id:
        return None
    try:
        return reverse("memories:thread", args=[thread_id])
    except NoReverseMatch:
        return None


class ThreadFilterForm(PagedFilterForm):
    cursor_type = TextPosition


@staff_member_required
@require_GET
def thread_list(request: HttpRequest) -> HttpResponse:
    """Threads of one namespace (or all), the most recently active first, in pages."""
    form = ThreadFilterForm(request.GET, auto_id="%s")
    context: dict[str, Any] = {"form": form}
    status = 200
    if form.is_valid():
        namespace = form.cleaned_data["namespace"]
        page = thread_pages.thread_page(
            namespace=namespace,
            after=form.cleaned_data["after"],
            before=form.cleaned_data["before"],
        )
        for thread in page.threads:
            thread.url = thread_url(thread.pk)  # type: ignore[attr-defined]
        context |= {
            "page": page,
            "namespace": namespace,
            "total": thread_pages.thread_count(namespace=namespace),
        }
    else:
        status = 400
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, LIST + "#thread-list", context, status=status)
    context["namespaces"] = thread_pages.thread_namespaces()
    return render(request, LIST, context, status=status)


def _message_cursor(request: HttpRequest, name: str) -> str | None:
    raw = request.GET.get(name, "")
    if not raw:
        return None
    if len(raw) > MAX_MESSAGE_ID_LENGTH or has_control_characters(raw):
        raise InvalidInput(f"{name} must be a message id of this thread")
    return raw


@staff_member_required
@require_GET
def thread_detail(request: HttpRequest, thread_id: str) -> HttpResponse:
    """A thread's messages in reading order, the newest page first; ``before``/``after``
    (a message id of the thread) page to older or newer messages."""
    error = ""
    try:
        before, after = _message_cursor(request, "before"), _message_cursor(request, "after")
        if before and after:
            raise InvalidInput("give before or after, not both")
        page = thread_pages.thread_messages(thread_id=thread_id, before=before, after=after)
    except NotFound:
        raise Http404(f"thread {thread_id!r} not found") from None
    except InvalidInput as exc:
        try:
            page = thread_pages.thread_messages(thread_id=thread_id)
        except (NotFound, InvalidInput):
            raise Http404(f"thread {thread_id!r} not found") from None
        error = str(exc)
    href = extraction_href()
    for row in page.rows:
        row.created, row.created_iso = stamp(row.message.created_at)  # type: ignore[attr-defined]
        if row.extraction is not None:
            row.extraction_href = href(row.extraction.pk)  # type: ignore[attr-defined]
    context = {"page": page, "thread": page.thread, "error": error}
    status = 400 if error else 200
    template = PAGE + "#messages" if request.htmx else PAGE  # type: ignore[attr-defined]
    return render(request, template, context, status=status)
