"""The extraction log: every extraction, filtered and paged; one record's decisions; retry.

The filters, pages and the retry are memories.write.extraction_log's, the same ones the JSON
API calls (GET /api/extractions, POST /api/extractions/{id}/retry). Bad filters are a
400 with the form's errors; retrying a record that is not failed is a 409 saying why.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memories.models import Extraction
from memories.store.positions import Position
from memories.web.forms import DatedFilterForm, one_line
from memories.web.thread_pages import display_content
from memories.web.views.rows import extraction_href, preview, stamp
from memories.web.views.threads import thread_url
from memories.write import extraction_log
from memories.write.extraction_log import ExtractionFilter
from spaceduck.core.errors import NotFound, ServiceError
from spaceduck.core.pages import staff_actor

LIST = "memories/extractions.html"
PAGE = "memories/extraction.html"


class ExtractionFilterForm(DatedFilterForm):
    """The log's query string: filters, days (of creation), and where the page starts."""

    cursor_type = Position

    status = forms.ChoiceField(
        required=False,
        choices=[("", "any status"), *((s, s) for s in extraction_log.STATUSES)],
    )
    thread = forms.CharField(required=False, max_length=64, validators=[one_line])
    task_id = forms.CharField(required=False, max_length=255, validators=[one_line])
    failed = forms.BooleanField(required=False, label="Failed attempts only")
    after = forms.CharField(required=False, max_length=64)
    before = forms.CharField(required=False, max_length=64)

    def filters(self) -> ExtractionFilter:
        data = self.cleaned_data
        created_from, created_to = self.days()
        return ExtractionFilter(
            namespace=data["namespace"],
            statuses=(data["status"],) if data["status"] else (),
            thread_id=data["thread"],
            task_id=data["task_id"],
            failed=data["failed"],
            created_from=created_from,
            created_to=created_to,
        )


@staff_member_required
@require_GET
def extraction_list(request: HttpRequest) -> HttpResponse:
    """Every extraction, newest first, in pages; filters stay in the address bar."""
    form = ExtractionFilterForm(request.GET, auto_id="%s")
    context: dict[str, Any] = {"form": form}
    status = 200
    if form.is_valid():
        filters = form.filters()
        page = extraction_log.extraction_page(
            filters=filters, after=form.cleaned_data["after"], before=form.cleaned_data["before"]
        )
        href = extraction_href()
        for record in page.extractions:
            record.thread_url = thread_url(record.thread_id)  # type: ignore[attr-defined]
            record.href = href(record.pk)  # type: ignore[attr-defined]
            record.created, record.created_iso = stamp(record.created_at)  # type: ignore[attr-defined]
            if record.message is not None:
                record.preview = preview(record.message.content)  # type: ignore[attr-defined]
        total, capped = extraction_log.extraction_count(filters=filters)
        context |= {
            "page": page,
            "total": total,
            "capped": capped,
            "filter_query": form.filter_query(),
        }
    else:
        status = 400
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, LIST + "#extraction-list", context, status=status)
    context["statuses"] = extraction_log.STATUSES
    return render(request, LIST, context, status=status)


def _record_or_404(extraction_id: int) -> Extraction:
    record = extraction_log.extraction_get(extraction_id=extraction_id)
    if record is None:
        raise Http404(f"extraction {extraction_id} not found")
    return record


def _page_context(record: Extraction) -> dict[str, Any]:
    message = record.message
    return {
        "record": record,
        "message": message,
        "message_text": None if message is None else display_content(message.content)[0],
        "thread_url": thread_url(record.thread_id),
        "outcomes": extraction_log.extraction_outcomes(record),
    }


@staff_member_required
@require_GET
def extraction_detail(request: HttpRequest, extraction_id: int) -> HttpResponse:
    """One record: its message, provider, timings, attempts and errors, and every candidate
    with its decision, reason and the memories it created or matched."""
    record = _record_or_404(extraction_id)
    template = PAGE + "#extraction-page" if request.htmx else PAGE  # type: ignore[attr-defined]
    return render(request, template, _page_context(record))


@staff_member_required
@require_POST
def extraction_retry(request: HttpRequest, extraction_id: int) -> HttpResponse:
    """Queue a failed extraction again (memories.write.extraction_log.extraction_retry).

    A plain form is redirected back to the record's page with a message; htmx gets the
    status part (and the candidates, which the run may have filled) swapped in place.
    """
    try:
        record = extraction_log.extraction_retry(
            extraction_id=extraction_id, actor=staff_actor(request)
        )
    except NotFound as error:
        raise Http404(str(error)) from None
    except ServiceError as error:
        messages.error(request, str(error))
        return _render_status(request, _record_or_404(extraction_id), error.status_code)
    if record.status == Extraction.Status.QUEUED:
        messages.success(request, f"Extraction {record.pk} is queued again; the worker runs it.")
    else:
        messages.success(request, f"Extraction {record.pk} was retried: it is {record.status}.")
    if request.htmx:  # type: ignore[attr-defined]
        return _render_status(request, record, 200)
    return HttpResponseRedirect(reverse("memories:extraction", args=[record.pk]))


def _render_status(request: HttpRequest, record: Extraction, status: int) -> HttpResponse:
    if request.htmx:  # type: ignore[attr-defined]
        context = {**_page_context(record), "swap": True}
        return render(request, PAGE + "#extraction-status", context, status=status)
    return render(request, PAGE, _page_context(record), status=status)
