from __future__ import annotations

from django.apps import AppConfig


class SpaceduckConfig(AppConfig):
    name = "spaceduck"
    verbose_name = "Service"

    def ready(self) -> None:
        from spaceduck.ops import checks  # noqa: F401  (registers the system checks)
