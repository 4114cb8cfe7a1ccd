from __future__ import annotations

from django.contrib import admin

from spaceduck.models import ApiToken, VectorIndexState


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "namespaces", "permissions", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "key_hash", "created_at", "last_used_at")
    search_fields = ("name", "prefix")

    def has_add_permission(self, request: object) -> bool:
        return False  # the secret is shown once: create tokens with `manage.py token create`


@admin.register(VectorIndexState)
class VectorIndexStateAdmin(admin.ModelAdmin):
    list_display = ("name", "provider", "model", "dimensions", "target_dimensions", "updated_at")

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False  # changed only by migrations and `manage.py reindex`
