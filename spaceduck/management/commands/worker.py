"""`manage.py worker`: the background worker (a huey consumer) with a heartbeat and
crash recovery.

At start and every SPACEDUCK_RECOVERY_EVERY_SECONDS it releases extractions whose
worker died (expired leases) and enqueues due extractions the queue lost. Every
SPACEDUCK_WORKER_HEARTBEAT_SECONDS a thread records that this worker is alive
(read by /api/health) and renews the leases of the extractions it is running.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection

from memories.extraction.pipeline import warm
from memories.extraction.recovery import recover_extractions
from memories.extraction.runner import renew_leases
from spaceduck.worker import forget_old_workers, heartbeat_beat, heartbeat_stop, worker_id

logger = logging.getLogger("spaceduck.worker")


class Command(BaseCommand):
    help = "Run the background worker: the task queue's consumer, its heartbeat and recovery."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workers", type=int, default=settings.HUEY_WORKERS)

    def handle(self, *args: Any, **options: Any) -> None:
        me = worker_id()
        warm()
        heartbeat_beat(worker=me)
        recover_extractions()
        stop = threading.Event()
        beating = threading.Thread(target=_heartbeat, args=(me, stop), name="heartbeat")
        beating.daemon = True  # never keeps a dying process alive
        beating.start()
        try:
            call_command(
                "run_huey", "--workers", str(options["workers"]), "--worker-type", "thread"
            )
        finally:
            stop.set()
            beating.join(timeout=5)
            heartbeat_stop(worker=me)


def _heartbeat(me: str, stop: threading.Event) -> None:
    next_recovery = time.monotonic() + settings.RECOVERY_EVERY_SECONDS
    try:
        while not stop.wait(settings.WORKER_HEARTBEAT_SECONDS):
            try:
                heartbeat_beat(worker=me)
                renew_leases(worker=me)
                if time.monotonic() >= next_recovery:
                    recover_extractions()
                    forget_old_workers()
                    next_recovery = time.monotonic() + settings.RECOVERY_EVERY_SECONDS
            except Exception:  # a locked or briefly missing database: beat again later
                logger.exception("worker heartbeat failed")
    finally:
        connection.close()
