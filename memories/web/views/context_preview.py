"""What an agent would be given (``/context/``): the exact block ``POST /api/context`` builds
for a namespace, thread, project, task, query and budgets (the same ``build_context``), its
tokens per section, and each memory with its link and score. Read-only: recall and
``build_context`` write nothing (no ``last_seen_at`` touch, no compaction)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memories.api.context import ContextOut, context_out
from memories.models import Memory, Thread
from memories.recall.context import (
    HEADINGS,
    MAX_BUDGET,
    SECTIONS,
    ContextResult,
    build_context,
    render_line,
)
from memories.store.selectors import clean_namespace
from memories.store.token_estimate import estimate_tokens
from memories.web.forms import MAX_QUERY_CHARS, one_line
from spaceduck.core.errors import ServiceError
from spaceduck.core.limits import CountedForm

PAGE = "memories/context.html"


def _column(name: str) -> int:
    return int(Memory._meta.get_field(name).max_length)  # type: ignore[arg-type]


class ContextPreviewForm(CountedForm):
    namespace = forms.CharField(max_length=255, validators=[one_line])
    # thread, project and query are not stripped: the API gives build_context them as sent
    # (" garden " is no project "garden" there), and the preview must give the same block.
    thread = forms.CharField(
        required=False,
        max_length=Thread._meta.get_field("id").max_length,
        validators=[one_line],
        strip=False,
    )
    project = forms.CharField(
        required=False, max_length=_column("scope_id"), validators=[one_line], strip=False
    )
    task = forms.CharField(
        required=False, max_length=_column("source_task_id"), validators=[one_line]
    )
    # Spaces recall nothing in the API, where a stripped query ("") falls back to the newest
    # message.
    query = forms.CharField(required=False, max_length=MAX_QUERY_CHARS, strip=False)
    memory_budget = forms.IntegerField(required=False, min_value=0, max_value=MAX_BUDGET)
    history_budget = forms.IntegerField(required=False, min_value=0, max_value=MAX_BUDGET)

    def clean_namespace(self) -> str:
        try:
            return clean_namespace(self.cleaned_data["namespace"].strip())
        except ServiceError as exc:
            raise forms.ValidationError(str(exc)) from None


@staff_member_required
@require_GET
def context_preview(request: HttpRequest) -> HttpResponse:
    form = ContextPreviewForm(request.GET or None)
    context: dict[str, Any] = {"form": form}
    status = 200
    if request.GET and form.is_valid():
        data = form.cleaned_data
        try:
            result = build_context(
                namespace=data["namespace"],
                thread_id=data["thread"] or None,
                project_id=data["project"] or None,
                query=data["query"] or None,
                memory_budget=data["memory_budget"],
                history_budget=data["history_budget"],
                task_id=data["task"] or None,
            )
        except ServiceError as exc:
            form.add_error(None, str(exc))
            status = getattr(exc, "status_code", 400)
        else:
            context |= {
                "result": result,
                "sections": _sections(result),
                "answer": _api_answer(result),
            }
    elif request.GET:
        status = 400
    template = PAGE + "#preview" if request.htmx else PAGE  # type: ignore[attr-defined]
    return render(request, template, context, status=status)


def _api_answer(result: ContextResult) -> str:
    """The whole answer ``POST /api/context`` gives for this result, as the API writes it
    (the same function and schema; MCP's get_context answers the same). pydantic writes
    it: ``json.dumps`` with ``indent`` takes the pure-Python encoder, ~10 ms for an answer
    with a long history."""
    answer = ContextOut.model_validate(context_out(result, compacted=False))
    return answer.model_dump_json(indent=2)


def _sections(result: ContextResult) -> list[dict[str, Any]]:
    """Each section of the block with its memories and its estimated tokens."""
    shown = []
    for section in SECTIONS:
        items = [item for item in result.memories if item.section == section]
        if items:
            lines = [HEADINGS[section], *(render_line(item) for item in items)]
            shown.append(
                {"name": section, "items": items, "tokens": estimate_tokens("\n".join(lines))}
            )
    return shown
