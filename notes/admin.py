"""Admin of notes: append-only here too; every write goes through notes.services.

A note is added with ``save_note_outcome`` (namespace and body required, the
approval gate applied), and afterwards only its status changes, through
``set_note_status``, which records who changed it and when. Notes are never
deleted; supersession edges are written only with the note that carries them.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings as django_settings
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html_join
from django.utils.text import Truncator

from notes import services
from notes.models import Note, NoteSearchKind, NoteStatus, NoteSupersession
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
from spaceduck.core.limits import limit_field_bytes
from spaceduck.core.namespaces import NAMESPACE_KINDS

PREVIEW_CHARS = 120
# The add form's fields, in the order a service message names them first.
NOTE_ADD_FIELDS = ("namespace", "body", "kind", "tags", "status", "supersedes")


class NoteAddForm(ServiceForm):
    """What POST /api/notes takes; ``clean`` runs save_note_outcome's checks without writing."""

    namespace = forms.CharField(max_length=255, help_text='For example "user:alice".')
    body = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), strip=False)
    kind = forms.CharField(required=False, max_length=services.MAX_KIND_LENGTH)
    tags = forms.CharField(required=False, help_text="Comma-separated.")
    status = forms.ChoiceField(
        choices=[("", "accepted (default)"), *NoteStatus.choices], required=False
    )
    supersedes = forms.CharField(
        required=False,
        help_text="Comma-separated ids of notes of the same namespace that this note replaces.",
    )

    class Meta:
        model = Note
        fields = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Hints of the service's limits (read now: they are settings): a counter under the
        # body in UTF-8 bytes, as check_body counts; the lists' limits per item in the hints.
        limit_field_bytes(self.fields["body"], limit=django_settings.MAX_NOTE_BODY_BYTES)
        self.fields["tags"].help_text = (
            f"Comma-separated: at most {services.MAX_TAGS} tags, "
            f"each at most {services.MAX_TAG_LENGTH} characters."
        )

    def clean_body(self) -> str:
        try:  # the service's check, so the refusal shows beside the body
            return services.check_body(self.cleaned_data["body"])
        except ServiceError as exc:
            raise ValidationError(str(exc)) from None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        targets = split_list(data["supersedes"])
        fields = {
            "namespace": data["namespace"],
            "body": data["body"],
            "kind": data["kind"],
            "tags": split_list(data["tags"]),
            "status": services.gated_status(
                requested=data["status"] or None,
                supersedes=bool(targets),
                can_approve=True,  # staff are the people the approval gate waits for
            ),
            "supersedes": targets,
        }
        try:
            services.note_write_check(**fields)
        except ServiceError as exc:
            message = str(exc)
            field = next(
                (name for name in NOTE_ADD_FIELDS if message.startswith((name, f"invalid {name}"))),
                None,
            )
            self.add_error(field, ValidationError(message))
            return data
        self.note_fields = fields
        return data


class NoteStatusForm(forms.ModelForm):
    class Meta:
        model = Note
        fields = ("status",)


@admin.register(Note)
class NoteAdmin(ServiceAdmin):
    list_display = (
        "note_id",
        "body_preview",
        "namespace",
        "kind",
        "status",
        "author",
        "created_at",
    )
    list_display_links = ("note_id", "body_preview")
    list_filter = ("status", "namespace_kind", NamespaceListFilter)
    search_fields = ("uid", "namespace", "kind", "body", "author")
    show_full_result_count = False
    actions = ("accept", "reject")

    def get_form(
        self, request: HttpRequest, obj: Note | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        kwargs["form"] = NoteAddForm if obj is None else NoteStatusForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fieldsets(self, request: HttpRequest, obj: Note | None = None) -> Any:
        if obj is None:
            return [
                (
                    None,
                    {
                        "fields": NOTE_ADD_FIELDS,
                        "description": "Notes are append-only: after saving, only the status "
                        "changes.",
                    },
                )
            ]
        return [
            (
                None,
                {
                    "fields": (
                        "note_id",
                        "namespace",
                        "kind",
                        "body",
                        "tags",
                        "author",
                        "provenance",
                        "created_at",
                    )
                },
            ),
            ("Status", {"fields": ("status", "status_by", "status_at")}),
            ("Supersession", {"fields": ("supersedes_notes", "superseded_by_notes")}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Note | None = None) -> Any:
        if obj is None:
            return ()
        return (
            "note_id",
            "namespace",
            "kind",
            "body",
            "tags",
            "author",
            "provenance",
            "created_at",
            "status_by",
            "status_at",
            "supersedes_notes",
            "superseded_by_notes",
        )

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # append-only: knowledge is replaced by supersession, never deleted

    def save_model(
        self, request: HttpRequest, obj: Note, form: forms.ModelForm, change: bool
    ) -> None:
        try:
            if change:
                stored = Note.objects.filter(pk=obj.pk).values_list("status", flat=True).first()
                if form.cleaned_data["status"] != stored:
                    services.set_status_of(
                        obj, form.cleaned_data["status"], by=staff_actor(request)
                    )
            else:
                saved = services.save_note_outcome(
                    **form.note_fields,  # type: ignore[attr-defined]
                    author=staff_actor(request),
                )
                obj.pk = saved.note.pk
        except ServiceError as exc:
            not_saved(obj, f"The note was not saved: {exc}", level=messages.ERROR)
            if not change:
                return
        obj.refresh_from_db()

    @admin.action(description="Accept selected notes")
    def accept(self, request: HttpRequest, queryset: QuerySet[Note]) -> None:
        self._set_status(request, queryset, NoteStatus.ACCEPTED)

    @admin.action(description="Reject selected notes")
    def reject(self, request: HttpRequest, queryset: QuerySet[Note]) -> None:
        self._set_status(request, queryset, NoteStatus.REJECTED)

    def _set_status(self, request: HttpRequest, queryset: QuerySet[Note], status: str) -> None:
        changed: list[str] = []
        unchanged: list[str] = []
        for note in list(queryset.only("pk", "uid", "status")):
            if note.status == status:
                unchanged.append(note.client_id)
                continue
            services.set_status_of(note, status, by=staff_actor(request))
            changed.append(note.client_id)
        if changed:
            self.message_user(request, f"Now {status}: {some_ids(changed)}.", messages.SUCCESS)
        if unchanged:
            self.message_user(
                request, f"Already {status}: {some_ids(unchanged)}.", messages.WARNING
            )

    @admin.display(description="id", ordering="uid")
    def note_id(self, obj: Note) -> str:
        return obj.client_id  # the id its client chose, not the stored key

    @admin.display(description="body")
    def body_preview(self, obj: Note) -> str:
        return Truncator(obj.body).chars(PREVIEW_CHARS)

    @admin.display(description="supersedes")
    def supersedes_notes(self, obj: Note) -> str:
        edges = obj.supersedes_edges.select_related("target").order_by("id")
        return _note_links(edge.target for edge in edges)

    @admin.display(description="superseded by")
    def superseded_by_notes(self, obj: Note) -> str:
        edges = obj.superseded_by_edges.select_related("note").order_by("id")
        return _note_links(edge.note for edge in edges)


def _note_links(notes: Any) -> str:
    return (
        format_html_join(
            ", ",
            '<a href="{}">{}</a> ({})',
            ((change_url(n), n.client_id, n.status) for n in notes),
        )
        or "-"
    )


@admin.register(NoteSupersession)
class NoteSupersessionAdmin(ReadOnlyAdmin):
    """Edges are written once, with the note that carries them."""

    list_display = ("note", "target", "created_at")
    list_select_related = ("note", "target")
    search_fields = ("note__uid", "target__uid")


class NoteSearchKindForm(ServiceForm):
    kind = forms.ChoiceField(choices=[(kind, kind) for kind in NAMESPACE_KINDS])

    class Meta:
        model = NoteSearchKind
        fields = ()


@admin.register(NoteSearchKind)
class NoteSearchKindAdmin(ServiceAdmin):
    """Adding a kind is enable_note_search (indexes its notes); search is never switched off."""

    form = NoteSearchKindForm
    list_display = ("kind", "enabled_at")
    fields = ("kind",)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_fields(self, request: HttpRequest, obj: NoteSearchKind | None = None) -> Any:
        return ("kind",) if obj is None else ("kind", "enabled_at")

    def save_model(
        self, request: HttpRequest, obj: NoteSearchKind, form: forms.ModelForm, change: bool
    ) -> None:
        try:
            result = services.enable_note_search(form.cleaned_data["kind"])
        except InvalidInput as exc:
            not_saved(obj, f"Search was not enabled: {exc}", level=messages.ERROR)
            return
        obj.pk = result.kind
        obj.refresh_from_db()
        if not result.newly_enabled:
            not_saved(obj, f"Note search was on already for {result.kind} namespaces.")
            return
        self.message_user(
            request, f"Indexed {result.backfilled} existing {result.kind} notes.", messages.INFO
        )
