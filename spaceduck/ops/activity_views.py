"""``/activity/``: who did what, when (spaceduck.ops.activity), filtered and paged, and its
exports (CSV, JSON Lines) with the same filters. Staff only, as every dashboard page.

Bad filters are a 400 with the form's errors on the page, and a 400 message for an export
(a file of errors would be mistaken for the log).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from django import forms
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from memories.web.forms import DatedFilterForm, one_line
from memories.web.views.rows import stamp
from spaceduck.core.pages import error_response
from spaceduck.ops.activity import (
    KINDS,
    ActivityFilter,
    ActivityPosition,
    Entry,
    activity_page,
    activity_rows,
)

PAGE = "activity/activity.html"
FIELDS = ("at", "kind", "action", "actor", "namespace", "summary", "url")
# A spreadsheet runs a cell that starts with one of these as a formula.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class ActivityFilterForm(DatedFilterForm):
    """The query string: actor, namespace, kind, days and the page's start."""

    cursor_type = ActivityPosition  # type: ignore[assignment]

    actor = forms.CharField(required=False, max_length=255, validators=[one_line])
    kind = forms.ChoiceField(required=False, choices=[("", "any kind"), *((k, k) for k in KINDS)])

    def filters(self) -> ActivityFilter:
        data = self.cleaned_data
        start, end = self.days()
        return ActivityFilter(
            actor=data["actor"].strip(),
            namespace=data["namespace"],
            kind=data["kind"],
            start=start,
            end=end,
        )


@staff_member_required
@require_GET
def activity(request: HttpRequest) -> HttpResponse:
    """Every change, newest first, in pages; the filters stay in the address bar."""
    form = ActivityFilterForm(request.GET, auto_id="%s")
    context: dict[str, Any] = {"form": form, "kinds": KINDS}
    status = 200
    if form.is_valid():
        page = activity_page(
            filters=form.filters(),
            after=form.cleaned_data["after"],
            before=form.cleaned_data["before"],
        )
        context |= {
            "page": page,
            "rows": [_row(entry) for entry in page.entries],
            "filter_query": form.filter_query(),
        }
    else:
        status = 400
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, PAGE + "#activity-list", context, status=status)
    return render(request, PAGE, context, status=status)


def _row(entry: Entry) -> dict[str, Any]:
    shown, iso = stamp(entry.at)
    return {"entry": entry, "when": shown, "when_iso": iso}


@staff_member_required
@require_GET
def activity_export(request: HttpRequest, fmt: str) -> HttpResponse | StreamingHttpResponse:
    """The whole filtered log (not one page) as ``csv`` or ``jsonl``, streamed as it is read."""
    form = ActivityFilterForm(request.GET, auto_id="%s")
    if not form.is_valid():
        problems = "; ".join(
            f"{name}: {' '.join(str(error) for error in errors)}"
            for name, errors in form.errors.items()
        )
        return error_response(request, f"These filters cannot be used: {problems}", 400)
    rows = activity_rows(form.filters())
    if fmt == "csv":
        body, content_type = _csv(rows), "text/csv; charset=utf-8"
    else:
        body, content_type = _jsonl(rows), "application/x-ndjson"
    response = StreamingHttpResponse(body, content_type=content_type)
    name = f"spaceduck-activity-{timezone.now():%Y%m%d-%H%M%S}.{fmt}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["Cache-Control"] = "no-store"
    return response


def _jsonl(rows: Iterator[Entry]) -> Iterator[bytes]:
    for entry in rows:
        yield (json.dumps(entry.as_dict(), ensure_ascii=False) + "\n").encode("utf-8")


def _csv(rows: Iterator[Entry]) -> Iterator[bytes]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(FIELDS)
    for entry in rows:
        writer.writerow([_cell(value) for value in entry.as_dict().values()])
        yield buffer.getvalue().encode("utf-8")
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue().encode("utf-8")  # the header of an empty log


def _cell(value: str) -> str:
    """A value a spreadsheet shows as text, never runs (a fact key of ``=HYPERLINK(...)``)."""
    return "'" + value if value.startswith(_FORMULA_STARTS) else value
