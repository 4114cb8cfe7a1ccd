"""Admin of memories, facts, threads and their records; every write goes through services.

- Memory: add is POST /api/memories's path (``memory_write``: gate, guard,
  injection firewall, dedup, hash, embedding, history); change is
  ``memory_edit`` plus the status transitions; delete is ``memory_delete``,
  which leaves a tombstone in the history. Actions approve, reject, archive and
  restore call ``memories_decide``.
- Fact: add and change are ``set_fact`` (the TTL counts from the save), delete
  is ``delete_fact``.
- Thread: view, and delete with its messages (``delete_thread``). Messages are
  written by agents through the API: view, and delete (``delete_messages``).
- Conflict (the conflict inbox): decided on its page or with the replace / keep both
  actions, through ``memories.write.conflicts`` as the dashboard and the API do.
- History, extractions and maintenance runs are records: view only.
"""

from __future__ import annotations

import json
from itertools import groupby
from typing import Any

from django import forms
from django.conf import settings as django_settings
from django.contrib import admin, messages
from django.contrib.admin.options import csrf_protect_m
from django.contrib.admin.widgets import AdminSplitDateTime
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.forms.fields import InvalidJSONInput
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.text import Truncator

from memories.extraction.types import (
    CONFIDENCE,
    IMPORTANCE,
    SLOTS,
    Verdict,
    candidate_from_api,
    score,
)
from memories.models import (
    Conflict,
    Deletion,
    Extraction,
    Fact,
    MaintenanceRun,
    Memory,
    MemoryEvent,
    MemoryKind,
    MemoryScope,
    Message,
    ProcedureSubtype,
    ReembedJob,
    Thread,
)
from memories.store import selectors
from memories.write import conflicts, edits, lifecycle, services
from memories.write.ingest import memory_write, memory_write_check
from spaceduck.admin import (
    NamespaceListFilter,
    ReadOnlyAdmin,
    ServiceAdmin,
    ServiceForm,
    change_url,
    not_saved,
    some_ids,
    split_list,
    staff_actor,
)
from spaceduck.core.errors import InvalidInput, ServiceError
from spaceduck.core.limits import (
    check_size,
    json_size,
    limit_field,
    limit_field_bytes,
    limit_memory_form,
)
from spaceduck.core.providers import ProviderError

PREVIEW_CHARS = 120
HISTORY_SHOWN = 20
MESSAGES_SHOWN = 20
# Ids per call when an action or a bulk delete works through a selection: well
# under SQLite's limit on bound parameters, whatever "select all" chose.
CHUNK = 500
BLANK_CHOICE = [("", "---------")]


def _preview(text: str, chars: int = PREVIEW_CHARS) -> str:
    # A plain string: the admin escapes it.
    return Truncator(text).chars(chars)


def _json_preview(value: Any, chars: int = 80) -> str:
    return _preview(json.dumps(value, ensure_ascii=False), chars)


def _chunks(ids: list[Any]) -> list[list[Any]]:
    return [ids[start : start + CHUNK] for start in range(0, len(ids), CHUNK)]


def _verdict_text(verdict: Verdict) -> str:
    return f"{verdict.decision}: {verdict.reason}" if verdict.reason else verdict.decision


# --- Memories -------------------------------------------------------------------------


def _score_input(raw: str) -> float | str:
    """A number when the text is one, else the text (a bucket name)."""
    try:
        return float(raw)
    except ValueError:
        return raw.strip()


class MemoryAddForm(ServiceForm):
    """The fields of POST /api/memories. ``clean`` runs the write path's checks that need
    no database (gate, guard, injection firewall), so a refusal shows beside the input."""

    namespace = forms.CharField(max_length=255, help_text='For example "user:alice".')
    kind = forms.ChoiceField(choices=MemoryKind.choices)
    content = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="One sentence, e.g. “The user lives in Lisbon.”",
    )
    title = forms.CharField(required=False)
    summary = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    tags = forms.CharField(required=False)
    importance = forms.CharField(
        initial="standard", help_text=f"0..1, or one of: {', '.join(IMPORTANCE)}."
    )
    confidence = forms.CharField(
        initial="stated",
        help_text=f"0..1, or one of: {', '.join(CONFIDENCE)}. "
        "A low confidence waits as a candidate until someone approves it.",
    )
    procedure_subtype = forms.ChoiceField(
        choices=BLANK_CHOICE + ProcedureSubtype.choices,
        required=False,
        help_text="Required for a procedure.",
    )
    slot = forms.ChoiceField(
        choices=BLANK_CHOICE + [(slot, slot) for slot in SLOTS],
        required=False,
        help_text="Identity slot: a new value supersedes the memory holding the old one.",
    )
    scope = forms.ChoiceField(choices=MemoryScope.choices, initial=MemoryScope.GLOBAL)
    scope_id = forms.CharField(required=False)
    occurred_at = forms.SplitDateTimeField(required=False, widget=AdminSplitDateTime)
    valid_from = forms.SplitDateTimeField(
        required=False, widget=AdminSplitDateTime, help_text="When what it says starts to hold."
    )
    valid_until = forms.SplitDateTimeField(
        required=False,
        widget=AdminSplitDateTime,
        help_text="When what it says stops holding: from then on it is left out of recall "
        "and the context block.",
    )

    class Meta:
        model = Memory
        fields = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_memory_form(self)  # the API's lengths and words, a counter on each input

    def clean_namespace(self) -> str:
        try:
            return selectors.clean_namespace(self.cleaned_data["namespace"])
        except InvalidInput as exc:
            raise ValidationError(str(exc)) from None

    def clean_tags(self) -> list[str]:
        return split_list(self.cleaned_data["tags"])

    def clean_importance(self) -> float:
        return self._score("importance", IMPORTANCE)

    def clean_confidence(self) -> float:
        return self._score("confidence", CONFIDENCE)

    def _score(self, name: str, buckets: dict[str, float]) -> float:
        try:
            return score(_score_input(self.cleaned_data[name]), buckets, name)
        except InvalidInput as exc:
            raise ValidationError(str(exc)) from None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        # The dict POST /api/memories hands to candidate_from_api.
        self.payload = {
            name: data[name]
            for name in (
                "namespace",
                "kind",
                "content",
                "title",
                "summary",
                "tags",
                "importance",
                "confidence",
                "procedure_subtype",
                "slot",
                "scope",
                "scope_id",
                "occurred_at",
                "valid_from",
                "valid_until",
            )
        }
        try:
            refused = memory_write_check(candidate_from_api(self.payload))
        except InvalidInput as exc:  # memory is switched off, or the validity ends too soon
            raise ValidationError(str(exc)) from None
        if refused is not None:
            raise ValidationError(f"Not stored: {_verdict_text(refused)}.", code="refused")
        return data


class MemoryChangeForm(forms.ModelForm):
    """The fields ``memory_edit`` may change, and the status (checked like a transition)."""

    tags = forms.CharField(required=False, help_text="Comma-separated.")
    importance = forms.FloatField(min_value=0, max_value=1)
    confidence = forms.FloatField(min_value=0, max_value=1)

    class Meta:
        model = Memory
        fields = (*edits.EDITABLE, "status")
        widgets = {
            "content": forms.Textarea(attrs={"rows": 4}),
            "summary": forms.Textarea(attrs={"rows": 2}),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stored_status = self.instance.status
        self.initial["tags"] = ", ".join(str(tag) for tag in self.instance.tags or [])
        limit_memory_form(self)  # the API's lengths and words, a counter on each input

    def clean_tags(self) -> list[str]:
        return split_list(self.cleaned_data["tags"])

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        status = data.get("status")
        if status:
            error = lifecycle.status_change_error(self.stored_status, status)
            if error is not None:
                self.add_error("status", error)
        return data


class OriginFilter(admin.SimpleListFilter):
    """Where a memory came from: written by a task, by a skill, or neither."""

    title = "written by"
    parameter_name = "origin"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("task", "a task"), ("skill", "a skill"), ("other", "no task or skill")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "task":
            return queryset.exclude(source_task_id="")
        if self.value() == "skill":
            return queryset.exclude(source_skill_id="")
        if self.value() == "other":
            return queryset.filter(source_task_id="", source_skill_id="")
        return queryset


MEMORY_ADD_FIELDS = (
    "namespace",
    "kind",
    "content",
    "title",
    "summary",
    "tags",
    ("importance", "confidence"),
    "procedure_subtype",
    "slot",
    ("scope", "scope_id"),
    "occurred_at",
    ("valid_from", "valid_until"),
)
MEMORY_EDIT_FIELDS = (
    "status",
    "kind",
    "content",
    "claim_parts",
    "title",
    "summary",
    "tags",
    ("importance", "confidence"),
    "procedure_subtype",
    ("scope", "scope_id"),
    ("occurred_at", "expires_at"),
    ("valid_from", "valid_until"),
)
MEMORY_READONLY_FIELDS = (
    "namespace",
    "slot",
    "context",
    "content_hash",
    "superseded_by",
    "source_type",
    "source_message",
    "source_thread",
    "source_task_id",
    "source_skill_id",
    "created_at",
    "updated_at",
    "last_seen_at",
)


@admin.register(Memory)
class MemoryAdmin(ServiceAdmin):
    list_display = (
        "id",
        "content_preview",
        "namespace",
        "kind",
        "status",
        "scope",
        "source_task_id",
        "source_skill_id",
        "confidence",
        "updated_at",
    )
    list_display_links = ("id", "content_preview")
    list_filter = (
        NamespaceListFilter,
        "kind",
        "status",
        "scope",
        "source_type",
        "procedure_subtype",
        OriginFilter,
    )
    search_fields = ("content", "title", "namespace", "source_task_id", "source_skill_id")
    show_full_result_count = False  # one COUNT(*) less per page at 100k memories
    actions = ("approve", "reject", "archive", "restore")

    # -- forms

    def get_form(
        self, request: HttpRequest, obj: Memory | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        kwargs["form"] = MemoryAddForm if obj is None else MemoryChangeForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fieldsets(self, request: HttpRequest, obj: Memory | None = None) -> Any:
        if obj is None:
            return [
                (
                    None,
                    {
                        "fields": MEMORY_ADD_FIELDS,
                        "description": "Stored like POST /api/memories: checked by the gate, "
                        "the guard and the injection firewall, then deduplicated against the "
                        "namespace's memories. A duplicate is not stored twice.",
                    },
                )
            ]
        return [
            (None, {"fields": MEMORY_EDIT_FIELDS}),
            ("Where it came from", {"fields": MEMORY_READONLY_FIELDS}),
            ("History", {"fields": ("history",)}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Memory | None = None) -> Any:
        return () if obj is None else (*MEMORY_READONLY_FIELDS, "claim_parts", "history")

    @csrf_protect_m
    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        # Django runs a POST here in one transaction. Our transactions are IMMEDIATE,
        # so that would hold SQLite's write lock while the embedder (and the dedup
        # arbiter) run, stalling every other writer; the services open their own
        # transactions around their writes, after embedding.
        return self._changeform_view(request, object_id, form_url, extra_context)

    # -- writes

    def save_model(
        self, request: HttpRequest, obj: Memory, form: forms.ModelForm, change: bool
    ) -> None:
        if change:
            self._edit(request, obj, form)
        else:
            self._write(request, obj, form)

    def _write(self, request: HttpRequest, obj: Memory, form: MemoryAddForm) -> None:
        payload = form.payload
        try:
            verdict = memory_write(
                candidate_from_api(payload),
                namespace=payload["namespace"],
                actor=staff_actor(request),
                scope=payload["scope"],
                scope_id=payload["scope_id"],
            )
        except (ServiceError, ProviderError) as exc:
            not_saved(obj, f"The memory was not stored: {exc}", level=messages.ERROR)
            return
        if verdict.decision != "stored":
            matched = Memory.objects.filter(pk=verdict.matched_memory_id).first()
            text = f"The memory was not stored ({_verdict_text(verdict)})."
            if matched is not None:
                text += f" Memory {matched.pk} already holds it; it was marked as seen again."
            not_saved(obj, text, redirect_to=change_url(matched) if matched else None)
            return
        obj.pk = verdict.memory_id
        obj.refresh_from_db()
        text = f"Stored ({verdict.reason}) with status {obj.status}."
        superseded = verdict.extra.get("superseded")
        if superseded:
            text += f" It supersedes memory {some_ids(list(superseded))}."  # type: ignore[arg-type]
        self.message_user(request, text, messages.INFO)

    def _edit(self, request: HttpRequest, obj: Memory, form: MemoryChangeForm) -> None:
        # The form has copied its values onto ``obj`` already: the service gets the stored row.
        memory = Memory.objects.filter(pk=obj.pk).first()
        if memory is None:
            not_saved(obj, f"Memory {obj.pk} was deleted meanwhile.", level=messages.ERROR)
            return
        data = form.cleaned_data
        # Fields the person changed (the form's view) whose value differs from the row's.
        changes = {
            name: data[name]
            for name in edits.EDITABLE
            if name in form.changed_data and data[name] != getattr(memory, name)
        }
        status = data.get("status", memory.status)
        actor = staff_actor(request)
        edited = False
        try:
            if changes:
                memory = edits.memory_edit(memory=memory, changes=changes, actor=actor)
                edited = True
            if status != memory.status:
                memory = lifecycle.memory_set_status(
                    memory=memory,
                    status=status,
                    actor=actor,
                    can_approve=True,  # staff are the people the approval gate waits for
                )
        except (ServiceError, ProviderError) as exc:
            done = "The fields were saved, the status was not" if edited else "Nothing was saved"
            not_saved(obj, f"{done}: {exc}", level=messages.ERROR)
        obj.refresh_from_db()

    def delete_model(self, request: HttpRequest, obj: Memory) -> None:
        services.memory_delete(memory=obj, actor=staff_actor(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        # One by one: each deletion leaves its own tombstone in the history.
        actor = staff_actor(request)
        for chunk in _chunks(list(queryset.values_list("pk", flat=True))):
            for memory in Memory.objects.filter(pk__in=chunk):
                services.memory_delete(memory=memory, actor=actor)

    # -- actions

    @admin.action(description="Approve selected candidates (make them active)")
    def approve(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        self._decide(request, queryset, "approve")

    @admin.action(description="Reject selected candidates (archive them)")
    def reject(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        self._decide(request, queryset, "reject")

    @admin.action(description="Archive selected memories")
    def archive(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        self._decide(request, queryset, "archive")

    @admin.action(description="Restore selected archived or superseded memories")
    def restore(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        self._decide(request, queryset, "restore")

    def _decide(self, request: HttpRequest, queryset: QuerySet[Memory], decision: str) -> None:
        changed: list[int] = []
        skipped: dict[int, str] = {}
        for chunk in _chunks(sorted(queryset.values_list("pk", flat=True))):
            outcome = lifecycle.memories_decide(
                memory_ids=chunk, decision=decision, actor=staff_actor(request), can_approve=True
            )
            changed += outcome.changed
            skipped.update(outcome.skipped)
        if changed:
            self.message_user(
                request, f"{decision.capitalize()}: memory {some_ids(changed)}.", messages.SUCCESS
            )
        if skipped:
            reasons = [f"{memory_id} {why}" for memory_id, why in skipped.items()]
            self.message_user(request, f"Left as they were: {some_ids(reasons)}.", messages.WARNING)

    # -- columns

    @admin.display(description="content", ordering="content")
    def content_preview(self, obj: Memory) -> str:
        return _preview(obj.content)

    @admin.display(description="claim")
    def claim_parts(self, obj: Memory) -> str:
        """What it claims, read from its content (not edited: an edit reads it again)."""
        if not obj.claim_attribute:
            return "— (none read)"
        return format_html(
            "holder <code>{}</code> · predicate <code>{}</code> · value “{}” · polarity {} "
            "· mood {}",
            obj.claim_subject,
            obj.claim_attribute,
            obj.claim_value,
            obj.claim_polarity,
            obj.claim_mood or "— (read before moods were recorded)",
        )

    @admin.display(description="history")
    def history(self, obj: Memory) -> str:
        events = MemoryEvent.objects.filter(memory_id=obj.pk).order_by("-created_at", "-id")
        rows = format_html_join(
            "",
            "<li>{} {} by {}{}</li>",
            (
                (
                    timezone.localtime(event.created_at).strftime("%Y-%m-%d %H:%M:%S"),
                    event.event,
                    event.actor or "-",
                    f": {event.reason}" if event.reason else "",
                )
                for event in events[:HISTORY_SHOWN]
            ),
        )
        url = reverse("admin:memories_memoryevent_changelist")
        return format_html(
            '<ul>{}</ul><a href="{}?{}">All events of this memory</a>',
            rows,
            url,
            urlencode({"memory_id": obj.pk}),
        )


@admin.register(MemoryEvent)
class MemoryEventAdmin(ReadOnlyAdmin):
    """A memory's history, deletions included: never edited."""

    list_display = ("memory_id", "namespace", "event", "actor", "reason_preview", "created_at")
    list_filter = ("event",)
    search_fields = ("=memory_id", "namespace", "actor")
    show_full_result_count = False

    @admin.display(description="reason")
    def reason_preview(self, obj: MemoryEvent) -> str:
        return _preview(obj.reason, 80)


@admin.register(Deletion)
class DeletionAdmin(ReadOnlyAdmin):
    """Tombstones of deleted messages, threads and facts (who, when, why; no content)."""

    list_display = ("kind", "object_id", "namespace", "deleted_by", "reason", "deleted_at")
    list_filter = ("kind",)
    search_fields = ("=object_id", "namespace", "deleted_by")
    show_full_result_count = False


# --- Facts ----------------------------------------------------------------------------


class FactValueField(forms.JSONField):
    """Any JSON value, null included (JSONField treats null as "no value", i.e. missing)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, **kwargs)

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise ValidationError("Enter a JSON value (null is one).", code="required")
        return super().to_python(value)


class FactForm(ServiceForm):
    """set_fact's arguments; namespace and key only when adding (they name the fact)."""

    namespace = forms.CharField(max_length=255, help_text='For example "user:alice".')
    key = forms.CharField(max_length=selectors.MAX_FACT_KEY_LENGTH)
    value = FactValueField(help_text='Any JSON: 42, "text", [1, 2], {"a": 1} or null.')
    ttl_ms = forms.IntegerField(
        required=False,
        min_value=0,
        label="TTL (ms)",
        help_text="Counted from this save. Empty: the fact never expires.",
    )
    provenance = forms.JSONField(required=False, help_text="A JSON object, or empty.")

    class Meta:
        model = Fact
        fields = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is None:
            self.initial["value"] = InvalidJSONInput("")  # an empty box, not "null"
        # A hint of set_fact's limit (a character is at least one byte; clean_value counts).
        if "value" in self.fields:
            limit_field_bytes(self.fields["value"], limit=django_settings.MAX_FACT_VALUE_BYTES)
        if "key" in self.fields:  # named as clean_fact_key (set_fact, the API) names it
            limit_field(self.fields["key"], name="fact key", limit=selectors.MAX_FACT_KEY_LENGTH)

    def clean_namespace(self) -> str:
        try:
            return selectors.clean_namespace(self.cleaned_data["namespace"])
        except InvalidInput as exc:
            raise ValidationError(str(exc)) from None

    def clean_key(self) -> str:
        try:
            return selectors.clean_fact_key(self.cleaned_data["key"])
        except InvalidInput as exc:
            raise ValidationError(str(exc)) from None

    def clean_value(self) -> Any:
        value = self.cleaned_data["value"]
        try:  # set_fact's size check, before anything is written
            check_size(
                json_size(value),
                limit=django_settings.MAX_FACT_VALUE_BYTES,
                field="fact value (as compact JSON)",
                setting="SPACEDUCK_MAX_FACT_VALUE_BYTES",
            )
        except ServiceError as exc:
            raise ValidationError(str(exc)) from None
        return value

    def clean_provenance(self) -> dict[str, Any] | None:
        provenance = self.cleaned_data["provenance"]
        if provenance is not None and not isinstance(provenance, dict):
            raise ValidationError("Provenance must be a JSON object, or empty.")
        return provenance


class FactExpiryFilter(admin.SimpleListFilter):
    title = "expiry"
    parameter_name = "expiry"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [
            ("live", "live (readable)"),
            ("expired", "expired (hidden from reads)"),
            ("ttl", "has a TTL"),
            ("none", "no TTL"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        now = timezone.now()
        match self.value():
            case "live":
                return queryset.exclude(expires_at__lte=now)
            case "expired":
                return queryset.filter(expires_at__lte=now)
            case "ttl":
                return queryset.filter(ttl_ms__isnull=False)
            case "none":
                return queryset.filter(ttl_ms__isnull=True)
        return queryset


@admin.register(Fact)
class FactAdmin(ServiceAdmin):
    form = FactForm
    list_display = ("namespace", "key", "value_preview", "ttl_ms", "expires_at", "updated_at")
    list_filter = (NamespaceListFilter, FactExpiryFilter)
    search_fields = ("namespace", "key")

    def get_fields(self, request: HttpRequest, obj: Fact | None = None) -> Any:
        if obj is None:
            return ("namespace", "key", "value", "ttl_ms", "provenance")
        return (
            "namespace",
            "key",
            "value",
            "ttl_ms",
            "provenance",
            "expires_at",
            "created_at",
            "updated_at",
        )

    def get_readonly_fields(self, request: HttpRequest, obj: Fact | None = None) -> Any:
        if obj is None:
            return ()
        return ("namespace", "key", "expires_at", "created_at", "updated_at")

    def save_model(self, request: HttpRequest, obj: Fact, form: FactForm, change: bool) -> None:
        data = form.cleaned_data
        namespace, key = (obj.namespace, obj.key) if change else (data["namespace"], data["key"])
        existed = not change and Fact.objects.filter(namespace=namespace, key=key).exists()
        try:
            fact = services.set_fact(
                namespace,
                key,
                data["value"],
                ttl_ms=data["ttl_ms"],
                provenance=data["provenance"],
                actor=staff_actor(request),
            )
        except ServiceError as exc:
            not_saved(obj, f"The fact was not saved: {exc}", level=messages.ERROR)
            return
        obj.pk = fact.pk
        obj.refresh_from_db()
        if existed:
            self.message_user(
                request,
                f"{namespace} already had a fact {key!r}: this save replaced it (as PUT does).",
                messages.WARNING,
            )

    def delete_model(self, request: HttpRequest, obj: Fact) -> None:
        services.delete_fact(obj.namespace, obj.key, actor=staff_actor(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Fact]) -> None:
        actor = staff_actor(request)
        for namespace, key in list(queryset.values_list("namespace", "key")):
            services.delete_fact(namespace, key, actor=actor)

    @admin.display(description="value")
    def value_preview(self, obj: Fact) -> str:
        return _json_preview(obj.value)


# --- Threads and messages -------------------------------------------------------------


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    """View; delete goes through delete_thread (the messages go with it). Threads are created
    and written by agents through the API."""

    list_display = ("id", "namespace", "title", "created_at", "updated_at")
    list_filter = (NamespaceListFilter,)
    date_hierarchy = "created_at"
    search_fields = ("=id", "namespace", "title")
    show_full_result_count = False
    fields = ("id", "namespace", "title", "created_at", "updated_at", "recent_messages")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: Thread) -> None:
        services.delete_thread(obj.pk, actor=staff_actor(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Thread]) -> None:
        actor = staff_actor(request)
        for thread_id in list(queryset.values_list("pk", flat=True)):
            services.delete_thread(thread_id, actor=actor)

    @admin.display(description="messages")
    def recent_messages(self, obj: Thread) -> str:
        # A link and the newest few, not an inline: a thread may hold thousands of messages.
        count = obj.messages.count()
        newest = list(obj.messages.order_by("-created_at", "-id")[:MESSAGES_SHOWN])
        rows = format_html_join(
            "",
            "<li>{}: {}</li>",
            ((message.role, _json_preview(message.content)) for message in newest[::-1]),
        )
        url = reverse("admin:memories_message_changelist")
        return format_html(
            '<a href="{}?{}">All {} messages</a><ol>{}</ol>',
            url,
            urlencode({"thread__id__exact": obj.pk}),
            count,
            rows,
        )


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    """View; written by agents through the API. Delete goes through delete_messages."""

    list_display = ("id", "thread_id", "role", "content_preview", "created_at")
    list_filter = ("role",)
    search_fields = ("=id", "=thread__id")
    show_full_result_count = False
    fields = ("id", "thread", "role", "content", "provenance", "created_at", "updated_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: Message) -> None:
        services.delete_messages(obj.thread_id, [obj.pk], actor=staff_actor(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Message]) -> None:
        actor = staff_actor(request)
        rows = sorted(queryset.values_list("thread_id", "pk"))
        for thread_id, group in groupby(rows, key=lambda row: row[0]):
            ids = [message_id for _, message_id in group]
            services.delete_messages(thread_id, ids, actor=actor)

    @admin.display(description="content")
    def content_preview(self, obj: Message) -> str:
        content = obj.content
        return _preview(content) if isinstance(content, str) else _json_preview(content)


# --- Records ----------------------------------------------------------------------------


@admin.register(MaintenanceRun)
class MaintenanceRunAdmin(ReadOnlyAdmin):
    list_display = ("processor", "started_at", "finished_at", "ok", "changes", "error")
    list_filter = ("processor", "ok")
    date_hierarchy = "started_at"


@admin.register(Extraction)
class ExtractionAdmin(ReadOnlyAdmin):
    list_display = ("id", "namespace", "status", "attempts", "task_id", "skill_id", "created_at")
    list_filter = ("status", NamespaceListFilter)
    search_fields = ("namespace", "thread_id", "task_id", "skill_id")
    show_full_result_count = False


@admin.register(ReembedJob)
class ReembedJobAdmin(ReadOnlyAdmin):
    """Started and followed on Settings > Memory (memories.upkeep.reembed); a record here."""

    list_display = ("created_at", "provider", "model", "dimensions", "status", "done", "total")
    list_filter = ("status",)


# --- The conflict inbox ------------------------------------------------------------------


class ConflictForm(forms.ModelForm):
    """A conflict's change page decides it (``conflict_resolve``); nothing else is edited."""

    decision = forms.ChoiceField(
        choices=BLANK_CHOICE + [(d, d.replace("_", " ")) for d in conflicts.DECISIONS],
        required=False,
        help_text="replace: the new memory supersedes the old one; keep both: both active; "
        "merge: the new memory takes the text below and supersedes the old one.",
    )
    content = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        help_text="For merge only: the text of the one memory.",
    )
    title = forms.CharField(
        required=False,
        help_text="For merge only: the title of the one memory. Empty: one made from the text.",
    )

    class Meta:
        model = Conflict
        fields: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_memory_form(self)  # the API's lengths and words, a counter on each input

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        decision, content = data.get("decision", ""), data.get("content", "").strip()
        if decision == "merge" and not content:
            self.add_error("content", "merge needs the text of the memory that replaces both")
        elif content and decision != "merge":
            self.add_error("content", "the text is for merge (edit into one) only")
        if data.get("title", "").strip() and decision != "merge":
            self.add_error("title", "the title is for merge (edit into one) only")
        return data


@admin.register(Conflict)
class ConflictAdmin(ServiceAdmin):
    """The conflict inbox: decide one on its page, or many with the actions."""

    form = ConflictForm
    list_display = ("id", "namespace", "old_memory", "new_memory", "status", "resolution")
    list_filter = ("status", "resolution", NamespaceListFilter)
    search_fields = ("reason", "old__content", "new__content")
    list_select_related = ("old", "new")
    readonly_fields = (
        "namespace",
        "old_memory",
        "new_memory",
        "reason",
        "status",
        "resolution",
        "resolved_by",
        "resolved_at",
        "created_at",
    )
    fields = (*readonly_fields, "decision", "content", "title")
    actions = ("replace", "keep_both")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # opened by the engine only

    def save_model(self, request: HttpRequest, obj: Conflict, form: Any, change: bool) -> None:
        decision = form.cleaned_data.get("decision", "")
        if not decision:
            not_saved(obj, "Nothing decided: choose a decision.", level=messages.WARNING)
            return
        try:
            conflicts.conflict_resolve(
                conflict=obj,
                decision=decision,
                actor=staff_actor(request),
                can_approve=True,
                content=form.cleaned_data.get("content", ""),
                title=form.cleaned_data.get("title", ""),
            )
        except ServiceError as exc:
            not_saved(obj, f"Conflict {obj.pk} was not decided: {exc}", level=messages.ERROR)

    @admin.action(description="Replace: the new memory supersedes the old one")
    def replace(self, request: HttpRequest, queryset: QuerySet[Conflict]) -> None:
        self._resolve(request, queryset, "replace")

    @admin.action(description="Keep both memories active")
    def keep_both(self, request: HttpRequest, queryset: QuerySet[Conflict]) -> None:
        self._resolve(request, queryset, "keep_both")

    def _resolve(self, request: HttpRequest, queryset: QuerySet[Conflict], decision: str) -> None:
        done: list[int] = []
        skipped: dict[int, str] = {}
        for chunk in _chunks(sorted(queryset.values_list("pk", flat=True))):
            decided, left = conflicts.conflicts_resolve(
                conflict_ids=chunk, decision=decision, actor=staff_actor(request), can_approve=True
            )
            done += decided
            skipped.update(left)
        if done:
            label = decision.replace("_", " ")
            self.message_user(request, f"{label}: conflict {some_ids(done)}.", messages.SUCCESS)
        if skipped:
            reasons = [f"{conflict_id} ({why})" for conflict_id, why in skipped.items()]
            self.message_user(request, f"Left as they were: {some_ids(reasons)}.", messages.WARNING)

    @admin.display(description="held now")
    def old_memory(self, obj: Conflict) -> str:
        return _memory_link(obj.old)

    @admin.display(description="new, waiting")
    def new_memory(self, obj: Conflict) -> str:
        return _memory_link(obj.new)


def _memory_link(memory: Memory) -> str:
    return format_html(
        '<a href="{}">#{}</a> {} <span class="quiet">({})</span>',
        change_url(memory),
        memory.pk,
        _preview(memory.content),
        memory.status,
    )
