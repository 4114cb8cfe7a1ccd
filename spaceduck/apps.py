from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps
from django.contrib.admin.checks import check_admin_app, check_dependencies
from django.core import checks


class SpaceduckConfig(AppConfig):
    # The app's config; this module holds the admin's too, so Django must be told.
    default = True
    name = "spaceduck"
    verbose_name = "Service"

    def ready(self) -> None:
        from spaceduck import tasks  # noqa: F401  (registers deliver_webhook for enqueue)
        from spaceduck.ops import checks  # noqa: F401  (registers the system checks)


class LazyAdminConfig(admin_apps.SimpleAdminConfig):
    """The admin, its ModelAdmins discovered when first needed instead of at start-up: the
    apps' admin modules import the write path and the extraction stages (~0.4 s of CPU)
    that most commands never touch. urls.py discovers them for requests, and the admin's
    own check discovers them before it looks at them. INSTALLED_APPS names it in full."""

    default = False

    def ready(self) -> None:
        checks.register(check_dependencies, checks.Tags.admin)
        checks.register(check_discovered_admin, checks.Tags.admin)


def check_discovered_admin(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The admin's check of every registered ModelAdmin, once they are registered."""
    from django.contrib import admin

    admin.autodiscover()
    return list(check_admin_app(app_configs, **kwargs))
