"""Dashboard forms: validate what a person typed, say what is wrong beside the field.

They only check and convert input; the changes themselves are the services'
(memories.write.lifecycle, memories.write.ingest), the same ones the JSON API calls.
"""

from __future__ import annotations

import json
from datetime import date, datetime, time
from typing import Any, ClassVar

from django import forms
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from memories.models import MemoryKind, MemoryScope, MemoryStatus, ProcedureSubtype, SourceType
from memories.store.positions import Position
from memories.store.selectors import (
    MemoryFilter,
    clean_namespace,
    has_control_characters,
)
from memories.write.services import MAX_TTL_MS
from spaceduck.core.errors import InvalidInput
from spaceduck.core.limits import CountedForm, limit_memory_form

MAX_QUERY_CHARS = 1000


def _choices(choices: type[models.TextChoices], blank: str) -> list[tuple[str, str]]:
    return [("", blank), *((value, value.replace("_", " ")) for value in choices.values)]


def one_line(value: str) -> None:
    if has_control_characters(value):
        raise ValidationError("must be one line without control characters")


def _namespace(value: str) -> str:
    try:
        return clean_namespace(value)
    except InvalidInput as exc:
        raise ValidationError(str(exc)) from None


class PagedFilterForm(CountedForm):
    """A list page's query string: a namespace filter and where the page starts, as a keyset
    position of ``cursor_type`` (whose ``decode`` raises InvalidInput on a bad one)."""

    cursor_type: ClassVar[type[Position]] = Position

    namespace = forms.CharField(required=False, max_length=255)
    after = forms.CharField(required=False, max_length=100)
    before = forms.CharField(required=False, max_length=100)

    def clean_namespace(self) -> str:
        value: str = self.cleaned_data["namespace"].strip()
        return _namespace(value) if value else ""

    def _cursor(self, name: str) -> Any:
        raw: str = self.cleaned_data[name]
        if not raw:
            return None
        try:
            return self.cursor_type.decode(raw)
        except InvalidInput as exc:
            raise ValidationError(str(exc)) from None

    def clean_after(self) -> Any:
        return self._cursor("after")

    def filter_query(self) -> str:
        """The query string without where the page starts: the pager's links add it."""
        base = self.data.copy()
        for name in ("after", "before"):
            base.pop(name, None)
        return base.urlencode()

    def clean_before(self) -> Any:
        return self._cursor("before")


class DatedFilterForm(PagedFilterForm):
    """A paged list filtered by days: ``from`` and ``to``, both days included, in the
    server's zone (added in ``__init__``: ``from`` is a Python keyword)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("from", "to"):
            self.fields[name] = forms.DateField(
                required=False, widget=forms.DateInput(attrs={"type": "date"})
            )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        start, end = data.get("from"), data.get("to")
        if start and end and start > end:
            self.add_error("to", "must not be before 'from'")
        return data

    def days(self) -> tuple[datetime | None, datetime | None]:
        """The first and the last instant of the days asked for (None: not bounded)."""
        return _day_edge(self.cleaned_data["from"], time.min), _day_edge(
            self.cleaned_data["to"], time.max
        )


def _day_edge(day: date | None, at: time) -> datetime | None:
    if day is None:
        return None
    return timezone.make_aware(datetime.combine(day, at), timezone.get_current_timezone())


class MemoryFilterForm(PagedFilterForm):
    """The viewer's query string: filters, recall, and where the page starts."""

    kind = forms.ChoiceField(required=False, choices=_choices(MemoryKind, "any kind"))
    status = forms.ChoiceField(required=False, choices=_choices(MemoryStatus, "any status"))
    scope = forms.ChoiceField(required=False, choices=_choices(MemoryScope, "any scope"))
    source_type = forms.ChoiceField(
        required=False, choices=_choices(SourceType, "any source"), label="Source"
    )
    procedure_subtype = forms.ChoiceField(
        required=False, choices=_choices(ProcedureSubtype, "any subtype"), label="Subtype"
    )
    task_id = forms.CharField(required=False, max_length=255, validators=[one_line])
    skill_id = forms.CharField(required=False, max_length=255, validators=[one_line])
    q = forms.CharField(required=False, max_length=MAX_QUERY_CHARS)
    thread = forms.CharField(required=False, max_length=64, validators=[one_line])
    project = forms.CharField(required=False, max_length=255, validators=[one_line])
    after = forms.CharField(required=False, max_length=64)
    before = forms.CharField(required=False, max_length=64)

    CHOICES = ("kind", "status", "scope", "source_type", "procedure_subtype")

    def filters(self) -> MemoryFilter:
        data = self.cleaned_data
        return MemoryFilter(
            namespace=data["namespace"],
            kind=data["kind"],
            status=data["status"],
            scope=data["scope"],
            source_type=data["source_type"],
            task_id=data["task_id"],
            skill_id=data["skill_id"],
            procedure_subtype=data["procedure_subtype"],
        )


class TagsField(forms.CharField):
    """Tags typed as one comma-separated line."""

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value)
        return list(dict.fromkeys(tag.strip() for tag in text.split(",") if tag.strip()))

    def prepare_value(self, value: Any) -> Any:
        return ", ".join(value) if isinstance(value, list) else value


class MemoryEditForm(forms.Form):
    """What a person may change on a memory's page (memories.write.edits.memory_edit)."""

    # Lengths: spaceduck.core.limits (limit_memory_form), the API's and the services' own.
    title = forms.CharField(required=False)
    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}))
    summary = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    tags = TagsField(required=False)
    importance = forms.FloatField(min_value=0, max_value=1)
    confidence = forms.FloatField(min_value=0, max_value=1)
    scope = forms.ChoiceField(choices=MemoryScope.choices)
    scope_id = forms.CharField(required=False, validators=[one_line])

    FIELDS = (
        "title",
        "content",
        "summary",
        "tags",
        "importance",
        "confidence",
        "scope",
        "scope_id",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_memory_form(self)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        scope, scope_id = data.get("scope"), data.get("scope_id", "")
        if scope in (MemoryScope.THREAD, MemoryScope.PROJECT) and not scope_id:
            self.add_error("scope_id", f"a {scope} memory needs the id of its {scope}")
        if scope == MemoryScope.GLOBAL and scope_id:
            self.add_error("scope_id", "a global memory has no scope id")
        return data

    def changes(self, initial: dict[str, Any]) -> dict[str, Any]:
        """Only the fields whose value differs from the memory's."""
        return {
            name: self.cleaned_data[name]
            for name in self.FIELDS
            if self.cleaned_data[name] != initial.get(name)
        }


class FactEditForm(forms.Form):
    """A fact's value and TTL, as ``PUT /api/facts/{namespace}/{key}`` takes them
    (``memories.write.services.set_fact`` checks the rest: size, secrets)."""

    value = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        strip=False,
        help_text='Any JSON value: text in quotes ("tea"), a number, true, null, a list, '
        "an object.",
    )
    ttl_ms = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_TTL_MS,
        label="TTL (milliseconds)",
        help_text="Counted from this save. Empty: the fact never expires.",
    )

    def clean_value(self) -> Any:
        text = self.cleaned_data["value"]
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(
                f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                'text goes in double quotes, like "tea"'
            ) from None
