"""Dashboard forms for notes: check what a person typed, say what is wrong beside it.

The checks are the services' and selectors' own (the ones the JSON API runs), so a
filter the API refuses is refused here with the same message.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from notes import selectors, services
from spaceduck.core.errors import InvalidInput
from spaceduck.core.limits import CountedForm
from spaceduck.core.namespaces import NAMESPACE_KINDS

MAX_QUERY_CHARS = 1000
# (value, label) of the status select; "accepted" is the read contract's default.
STATUS_CHOICES: tuple[tuple[str, str], ...] = (
    ("accepted", "accepted"),
    ("pending", "pending"),
    ("rejected", "rejected"),
    (selectors.ANY_STATUS, "any status"),
)
_TRUE = frozenset({"1", "true", "on", "yes"})
_FALSE = frozenset({"", "0", "false", "off", "no"})


def _service_check(check: Any, value: object) -> Any:
    try:
        return check(value)
    except InvalidInput as exc:
        raise ValidationError(str(exc)) from None


class NoteFilterForm(CountedForm):
    """The notes browser's query string: the store's filters, an optional search, a page."""

    q = forms.CharField(required=False, max_length=MAX_QUERY_CHARS, strip=False)
    namespace = forms.CharField(required=False, max_length=255)
    namespace_kind = forms.ChoiceField(
        required=False,
        choices=[("", "any kind"), *((kind, kind) for kind in NAMESPACE_KINDS)],
        label="Namespace kind",
    )
    kind = forms.CharField(required=False, strip=False, label="Note kind")
    status = forms.CharField(required=False)
    include_superseded = forms.CharField(required=False, label="Include superseded")
    page = forms.IntegerField(required=False, min_value=1)

    def clean_namespace(self) -> str | None:
        value: str = self.cleaned_data["namespace"]
        return _service_check(services.check_namespace, value) if value else None

    def clean_namespace_kind(self) -> str | None:
        return self.cleaned_data["namespace_kind"] or None

    def clean_kind(self) -> str | None:
        value: str = self.cleaned_data["kind"]
        if not value:
            return None
        return _service_check(
            lambda text: services.check_text(
                text, field="kind", max_length=services.MAX_KIND_LENGTH
            ),
            value,
        )

    def clean_status(self) -> list[str] | str:
        """The statuses to show, parsed as the API parses them: a list, or "any"."""
        value: str = self.cleaned_data["status"]
        # An empty value is the default (accepted), as when the parameter is absent.
        parts = selectors.split_status_param(value or None)
        statuses = _service_check(selectors.parse_status_filter, parts)
        return selectors.ANY_STATUS if statuses is None else statuses

    def clean_include_superseded(self) -> bool:
        value = self.cleaned_data["include_superseded"].strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise ValidationError("must be on or off (1/0, true/false)")

    def clean_q(self) -> str:
        return _service_check(selectors.check_text_query, self.cleaned_data["q"])

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        namespace, namespace_kind = data.get("namespace"), data.get("namespace_kind")
        if namespace and namespace_kind and namespace.partition(":")[0] != namespace_kind:
            self.add_error(
                "namespace", f"namespace {namespace!r} is not of kind {namespace_kind!r}"
            )
        return data

    @property
    def searching(self) -> bool:
        return bool(self.cleaned_data.get("q", "").strip())

    def search_kind(self) -> str | None:
        """The namespace kind a search runs in (None: every enabled kind)."""
        namespace = self.cleaned_data["namespace"]
        if namespace:
            return str(namespace.partition(":")[0])
        return self.cleaned_data["namespace_kind"]

    def include_superseded_checked(self) -> bool:
        return str(self.data.get("include_superseded", "")).strip().lower() in _TRUE

    def status_value(self) -> str:
        """The status select's current value, as typed (default: accepted)."""
        return str(self.data.get("status") or "accepted")
