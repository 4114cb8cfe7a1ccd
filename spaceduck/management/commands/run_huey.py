"""`manage.py run_huey`: huey's own consumer command (what huey's documentation tells users
to run), with spaceduck's heartbeat and crash recovery around it.

Without them a consumer ran tasks but never said it was alive (health reported no
worker), never renewed the leases of the extractions it ran (another worker's recovery
took them over after SPACEDUCK_EXTRACTION_LEASE_SECONDS) and never released what a dead
worker left behind. This command takes the place of huey's (the ``spaceduck`` app comes
before ``huey.contrib.djhuey`` in INSTALLED_APPS) and accepts all of its options;
`manage.py worker` is this command with the service's defaults.

At start and every SPACEDUCK_RECOVERY_EVERY_SECONDS it releases extractions whose
worker died (expired leases) and enqueues due extractions the queue lost. Every
SPACEDUCK_WORKER_HEARTBEAT_SECONDS a thread records that this worker is alive
(read by /api/health) and renews the leases of the extractions it is running.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import connection
from huey.contrib.djhuey.management.commands import run_huey

from memories.extraction.pipeline import warm
from memories.write.recovery import recover_extractions
from memories.write.runner import renew_leases
from spaceduck.core.worker import forget_old_workers, heartbeat_beat, heartbeat_stop, worker_id

logger = logging.getLogger("spaceduck.core.worker")


class Command(run_huey.Command):
    help = (
        "Run the task queue's consumer with spaceduck's heartbeat and crash recovery "
        "(threads or greenlets; `manage.py worker` is this with the service's defaults)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        configured: dict[str, Any] = getattr(settings, "HUEY", {}).get("consumer", {})
        kind = options.get("worker_type") or configured.get("worker_type")
        if kind == "process":
            # Leases are held by the process that claims an extraction (host:pid) and renewed
            # by this process's heartbeat: child processes' extractions would lapse mid-run.
            raise CommandError(
                "spaceduck's consumer runs its workers as threads (--worker-type thread, the "
                "default): the heartbeat renews the leases of extractions claimed by this "
                "process. For more processes, start more `manage.py worker` commands."
            )
        me = worker_id()
        try:
            warm()
        except KeyboardInterrupt:  # stopped (serve's SIGINT, a Ctrl-C) while loading models
            self.stderr.write("Stopped while loading the models; nothing was running.")
            gc.freeze()  # see below
            return
        heartbeat_beat(worker=me)
        recover_extractions()
        stop = threading.Event()
        beating = threading.Thread(target=_heartbeat, args=(me, stop), name="heartbeat")
        beating.daemon = True  # never keeps a dying process alive
        beating.start()
        try:
            super().handle(*args, **options)
        finally:
            stop.set()
            beating.join(timeout=5)
            heartbeat_stop(worker=me)
            # The process ends here: Python's exit need not collect the parser's and the
            # embedder's heap object by object (seconds under load; `serve` stops in 5 s).
            gc.freeze()


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
