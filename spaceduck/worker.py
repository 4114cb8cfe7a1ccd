"""Background workers' identity and heartbeat (read by /api/health).

A worker is one huey consumer process, named ``<host>:<pid>``. While it runs, a
thread records a beat every SPACEDUCK_WORKER_HEARTBEAT_SECONDS; a worker whose last
beat is older than SPACEDUCK_WORKER_STALE_SECONDS is presumed dead.
"""

from __future__ import annotations

import os
import socket
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from spaceduck.models import WorkerHeartbeat


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def heartbeat_beat(*, worker: str) -> None:
    now = timezone.now()
    updated = WorkerHeartbeat.objects.filter(worker_id=worker).update(beat_at=now, stopped_at=None)
    if not updated:
        WorkerHeartbeat.objects.update_or_create(
            worker_id=worker, defaults={"started_at": now, "beat_at": now, "stopped_at": None}
        )


def heartbeat_stop(*, worker: str) -> None:
    """A clean stop: the worker says so, instead of leaving health to notice the silence."""
    WorkerHeartbeat.objects.filter(worker_id=worker).update(stopped_at=timezone.now())


def live_workers() -> list[WorkerHeartbeat]:
    since = timezone.now() - timedelta(seconds=settings.WORKER_STALE_SECONDS)
    return list(WorkerHeartbeat.objects.filter(beat_at__gte=since, stopped_at__isnull=True))


def last_heartbeat() -> WorkerHeartbeat | None:
    return WorkerHeartbeat.objects.order_by("-beat_at").first()


def forget_old_workers(*, older_than: timedelta = timedelta(days=1)) -> int:
    """Rows of workers gone for a day: nobody asks about them any more."""
    deleted, _ = WorkerHeartbeat.objects.filter(beat_at__lt=timezone.now() - older_than).delete()
    return deleted
