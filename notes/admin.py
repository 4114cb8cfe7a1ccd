from __future__ import annotations

from django.contrib import admin

from notes.models import Note, NoteSearchKind, NoteSupersession


@admin.register(Note)
class NoteAdmin(admin.ModelAdmin):
    list_display = ("uid", "namespace", "kind", "status", "author", "created_at")
    list_filter = ("status", "namespace_kind")
    search_fields = ("uid", "namespace", "body")
    # Notes are append-only: only the status gate may change after insert.
    readonly_fields = (
        "uid",
        "namespace",
        "namespace_kind",
        "kind",
        "body",
        "tags",
        "author",
        "provenance",
        "created_at",
        "status_by",
        "status_at",
    )


@admin.register(NoteSupersession)
class NoteSupersessionAdmin(admin.ModelAdmin):
    list_display = ("note", "target", "created_at")
    raw_id_fields = ("note", "target")


@admin.register(NoteSearchKind)
class NoteSearchKindAdmin(admin.ModelAdmin):
    list_display = ("kind", "enabled_at")
