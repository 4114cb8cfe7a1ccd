"""`manage.py worker`: the background worker, `manage.py run_huey` (huey's consumer with
spaceduck's heartbeat and crash recovery, see run_huey.py) with the service's defaults:
SPACEDUCK_WORKERS threads."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Run the background worker: the task queue's consumer, its heartbeat and recovery."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workers", type=int, default=settings.HUEY_WORKERS)

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("run_huey", "--workers", str(options["workers"]), "--worker-type", "thread")
