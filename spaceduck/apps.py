from __future__ import annotations

from django.apps import AppConfig


class SpaceduckConfig(AppConfig):
    name = "spaceduck"
    verbose_name = "Service"

    def ready(self) -> None:
        from spaceduck import tasks  # noqa: F401  (registers deliver_webhook for enqueue)
        from spaceduck.ops import checks  # noqa: F401  (registers the system checks)
