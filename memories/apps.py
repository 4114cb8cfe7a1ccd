from __future__ import annotations

from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"

    def ready(self) -> None:
        # Registers the tasks that lower layers enqueue by name (spaceduck.core.queue.enqueue).
        from memories import tasks  # noqa: F401
