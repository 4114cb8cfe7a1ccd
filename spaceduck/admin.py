"""Admin of the service-wide tables, and what every app's admin shares.

The rule of this codebase holds in the admin too: it writes no row itself.
Every add, change and delete calls the service the JSON API calls; a
ModelAdmin that saves a row directly would be a second write path. Records
(histories, runs) are view-only. Stored text is never marked safe: columns
return plain strings, which Django escapes, and HTML is built with
``format_html``/``format_html_join``, which escape their arguments.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Model, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone

from spaceduck.core.limits import limit_form
from spaceduck.core.tokens import token_revoke
from spaceduck.models import (
    PERMISSIONS,
    ApiToken,
    RuntimeSetting,
    SettingChange,
    VectorIndexState,
)

# How many distinct namespaces a namespace filter lists (search finds the others).
NAMESPACE_FILTER_LIMIT = 100
# How many ids a message names when it reports on many rows.
IDS_SHOWN = 20


def staff_actor(request: HttpRequest) -> str:
    """Who a write from the admin is recorded as: ``staff:<username>``."""
    return f"staff:{request.user.get_username()}"


def split_list(text: str) -> list[str]:
    """Comma-separated input as a list: items stripped, empties and repeats dropped."""
    return list(dict.fromkeys(item.strip() for item in text.split(",") if item.strip()))


def some_ids(ids: list[Any]) -> str:
    """The first ids of a list for a message, with how many more there are."""
    shown = ", ".join(str(i) for i in ids[:IDS_SHOWN])
    return shown + (f" and {len(ids) - IDS_SHOWN} more" if len(ids) > IDS_SHOWN else "")


def change_url(obj: Model) -> str:
    opts = obj._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])


class ServiceForm(forms.ModelForm):
    """A form whose values go to a service, which validates and writes them.

    ModelForm's ``_post_clean`` copies the cleaned values onto the instance and
    runs the model's validation; here the instance is never saved, and the
    service's rules (not the columns') decide what is valid, so that step is
    skipped. ``clean`` calls the service's pure checks instead.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_form(self)  # code points, the live counter, the API's words for "too long"

    def _post_clean(self) -> None:
        pass


class NamespaceListFilter(admin.SimpleListFilter):
    """The distinct namespaces of the model (an indexed column), at most NAMESPACE_FILTER_LIMIT."""

    title = "namespace"
    parameter_name = "namespace"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        names = (
            model_admin.model._default_manager.order_by("namespace")
            .values_list("namespace", flat=True)
            .distinct()[:NAMESPACE_FILTER_LIMIT]
        )
        return [(name, name) for name in names]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset.filter(namespace=value) if value else queryset


class ReadOnlyAdmin(admin.ModelAdmin):
    """A record: staff may look, nobody adds, edits or deletes it here."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


_NOT_SAVED = "_spaceduck_not_saved"


def not_saved(
    obj: Model, message: str, *, level: int = messages.WARNING, redirect_to: str | None = None
) -> None:
    """Mark ``obj`` as left unwritten by the service that save_model called (see ServiceAdmin)."""
    setattr(obj, _NOT_SAVED, (level, message, redirect_to))


class ServiceAdmin(admin.ModelAdmin):
    """An admin whose ``save_model`` calls a service instead of saving the row.

    A service may store nothing (a duplicate, a refusal found after the form's
    checks, a provider failure); save_model then calls ``not_saved``. No
    LogEntry is written for it (an addition would have the object id "None"),
    and the response is its message and a redirect: to the given page, else to
    the object's change page, else to the list.
    """

    def log_addition(self, request: HttpRequest, obj: Model, message: Any) -> Any:
        if hasattr(obj, _NOT_SAVED):
            return None
        return super().log_addition(request, obj, message)

    def log_change(self, request: HttpRequest, obj: Model, message: Any) -> Any:
        if hasattr(obj, _NOT_SAVED):
            return None
        return super().log_change(request, obj, message)

    def response_add(
        self, request: HttpRequest, obj: Model, post_url_continue: str | None = None
    ) -> HttpResponse:
        if hasattr(obj, _NOT_SAVED):
            return self._not_saved_response(request, obj)
        return super().response_add(request, obj, post_url_continue)

    def response_change(self, request: HttpRequest, obj: Model) -> HttpResponse:
        if hasattr(obj, _NOT_SAVED):
            return self._not_saved_response(request, obj)
        return super().response_change(request, obj)

    def _not_saved_response(self, request: HttpRequest, obj: Model) -> HttpResponse:
        level, message, redirect_to = getattr(obj, _NOT_SAVED)
        self.message_user(request, message, level)
        if redirect_to is None and obj.pk is not None:
            redirect_to = change_url(obj)
        if redirect_to is None:
            opts = self.opts
            redirect_to = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        return HttpResponseRedirect(redirect_to)


# --- API tokens -----------------------------------------------------------------


class TokenStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("active", "active"), ("expired", "expired"), ("revoked", "revoked")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        # As ApiToken.state: a revoked token is "revoked" whether or not it has expired since.
        now = timezone.now()
        unexpired = Q(expires_at__isnull=True) | Q(expires_at__gt=now)
        if self.value() == "active":
            return queryset.filter(unexpired, revoked_at__isnull=True)
        if self.value() == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


class TokenPermissionFilter(admin.SimpleListFilter):
    """Tokens granted a permission by name ("admin" implies the others, but is listed apart)."""

    title = "permission"
    parameter_name = "permission"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [(permission, permission) for permission in PERMISSIONS]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value not in PERMISSIONS:
            return queryset
        # The column holds a JSON list of names; a quoted name matches one item exactly.
        return queryset.filter(permissions__icontains=f'"{value}"')


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """View and revoke. Tokens are created on the dashboard's Tokens page or by `manage.py
    token create` (the secret is shown once there); grants are normalised by
    spaceduck.core.tokens, so they are not edited here."""

    list_display = (
        "name",
        "prefix",
        "namespaces",
        "permissions",
        "state",
        "created_at",
        "created_by",
        "last_used_at",
        "expires_at",
        "revoked_at",
    )
    list_filter = (TokenStateFilter, TokenPermissionFilter)
    search_fields = ("name", "prefix")
    fields = (
        "name",
        "prefix",
        "namespaces",
        "permissions",
        "created_at",
        "created_by",
        "last_used_at",
        "expires_at",
        "revoked_at",
        "revoked_by",
    )
    readonly_fields = fields
    actions = ("revoke",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # revoke instead: the row stays, to say which token did what

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        opts = self.opts
        return request.user.has_perm(f"{opts.app_label}.change_{opts.model_name}")

    @admin.display(description="state")
    def state(self, obj: ApiToken) -> str:
        return obj.state

    @admin.action(description="Revoke selected tokens", permissions=["revoke"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        revoked: list[str] = []
        already: list[str] = []
        for token in queryset:
            if token.revoked_at is not None:
                already.append(token.name)
                continue
            token_revoke(token_id=token.pk, revoked_by=staff_actor(request))
            revoked.append(token.name)
        if revoked:
            self.message_user(request, f"Revoked: {some_ids(revoked)}.", messages.SUCCESS)
        if already:
            self.message_user(request, f"Revoked already: {some_ids(already)}.", messages.WARNING)


@admin.register(VectorIndexState)
class VectorIndexStateAdmin(ReadOnlyAdmin):
    """Changed only by migrations and `manage.py reindex`."""

    list_display = ("name", "provider", "model", "dimensions", "target_dimensions", "updated_at")


@admin.register(RuntimeSetting)
class RuntimeSettingAdmin(ReadOnlyAdmin):
    """Changed only on Settings > Memory (spaceduck.core.runtime.settings_update), which records
    each change; an edit here would skip that record."""

    list_display = ("key", "value", "updated_by", "updated_at")


@admin.register(SettingChange)
class SettingChangeAdmin(ReadOnlyAdmin):
    list_display = ("changed_at", "changed_by", "key", "old", "new", "reset")
    list_filter = ("key",)


# spaceduck's names and login page on the admin site, so that a reviewer sent to log in
# (the dashboard's pages use the admin's login URL) sees spaceduck, not "Django
# administration"; logging out lands on spaceduck's page too.
admin.site.site_header = "spaceduck administration"
admin.site.site_title = "spaceduck admin"
admin.site.index_title = "Tables"
admin.site.login_template = "registration/login.html"
admin.site.logout_template = "registration/logged_out.html"
