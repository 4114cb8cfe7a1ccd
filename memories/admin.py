from __future__ import annotations

from django.contrib import admin

from memories.models import (
    Extraction,
    Fact,
    MaintenanceRun,
    Memory,
    MemoryEvent,
    Message,
    Thread,
)


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "namespace",
        "kind",
        "title",
        "status",
        "importance",
        "confidence",
        "updated_at",
    )
    list_filter = ("kind", "status", "scope", "source_type")
    search_fields = ("namespace", "title", "content")
    raw_id_fields = ("superseded_by", "source_message", "source_thread")
    readonly_fields = ("content_hash", "created_at")


@admin.register(MemoryEvent)
class MemoryEventAdmin(admin.ModelAdmin):
    list_display = ("memory_id", "namespace", "event", "actor", "created_at")
    list_filter = ("event",)
    search_fields = ("memory_id", "namespace", "actor")


@admin.register(Fact)
class FactAdmin(admin.ModelAdmin):
    list_display = ("namespace", "key", "value", "expires_at", "updated_at")
    search_fields = ("namespace", "key")


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    fields = ("role", "content", "created_at")


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    list_display = ("id", "namespace", "title", "created_at")
    search_fields = ("id", "namespace", "title")
    inlines = (MessageInline,)


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ("id", "thread", "role", "created_at")
    list_filter = ("role",)
    raw_id_fields = ("thread",)


@admin.register(MaintenanceRun)
class MaintenanceRunAdmin(admin.ModelAdmin):
    list_display = ("processor", "started_at", "finished_at", "ok", "changes", "error")
    list_filter = ("processor", "ok")


@admin.register(Extraction)
class ExtractionAdmin(admin.ModelAdmin):
    list_display = ("id", "namespace", "status", "attempts", "task_id", "skill_id", "created_at")
    list_filter = ("status",)
    search_fields = ("namespace", "thread_id", "task_id", "skill_id")
    raw_id_fields = ("message",)
    readonly_fields = ("candidates", "errors", "provider", "duration_ms")
