from __future__ import annotations

from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"

    def ready(self) -> None:
        # Registers the tasks that lower layers enqueue by name (spaceduck.core.queue.enqueue).
        from memories import tasks  # noqa: F401
        from memories.store import keyword_index
        from spaceduck.core.db import scrub

        # A deleted memory's terms leave the keyword index before the WAL is checkpointed.
        scrub.register(keyword_index.purge_deleted)
