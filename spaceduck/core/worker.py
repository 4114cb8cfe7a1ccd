"""Background workers' identity and heartbeat (read by /api/health).

A worker is one huey consumer process, named ``<host>:<pid>``. While it runs, a
thread records a beat every SPACEDUCK_WORKER_HEARTBEAT_SECONDS; a worker whose last
beat is older than SPACEDUCK_WORKER_STALE_SECONDS is presumed dead.

Under `manage.py serve` the service is *starting* while no worker has beaten since serve
started it and that worker's first beat is not yet overdue: it loads its models before it
beats (seconds, more on a busy machine), and is given the same allowance of silence as a
running one (one heartbeat interval, then SPACEDUCK_WORKER_STALE_SECONDS).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

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


def queue_length() -> int | None:
    """Tasks waiting in the queue, or None when the queue cannot answer."""
    from huey.contrib.djhuey import HUEY

    try:
        return int(HUEY.pending_count())
    except Exception:  # a queue that cannot answer is reported, not fatal to health
        return None


@dataclass(frozen=True)
class WorkerState:
    """The background workers as their heartbeats tell it (health and the overview)."""

    immediate: bool  # no worker needed: tasks run inside requests
    alive: int = 0
    last_beat_at: datetime | None = None
    seconds_ago: float | None = None  # since the last beat, rounded to 0.1 s
    problem: str | None = None  # what a person should know, None when all is well
    starting: bool = False  # serve started it and its first beat is not overdue yet

    @property
    def running(self) -> bool:
        return self.immediate or self.alive > 0


def worker_state() -> WorkerState:
    if settings.HUEY_IMMEDIATE:
        return WorkerState(immediate=True)
    alive = live_workers()
    last = last_heartbeat()
    beat_at = None if last is None else last.beat_at
    ago = None if beat_at is None else round((timezone.now() - beat_at).total_seconds(), 1)
    problem = None
    starting = not alive and _first_beat_not_due(beat_at)
    if not alive and not starting:
        problem = (
            "no background worker has ever started (run `manage.py serve`)"
            if ago is None
            else f"no background worker has beaten for {ago:.0f} s: extractions are not running"
        )
    return WorkerState(
        immediate=False,
        alive=len(alive),
        last_beat_at=beat_at,
        seconds_ago=ago,
        problem=problem,
        starting=starting,
    )


def _first_beat_not_due(last_beat_at: datetime | None) -> bool:
    """Whether serve started the worker so recently that its silence says nothing yet: no
    beat since then (a row left by the previous run does not count), and its first beat
    not overdue (one heartbeat interval, plus the stale allowance a running worker has)."""
    if not settings.SERVE_STARTED_AT:
        return False  # not under serve: nobody says when the worker was started
    started = datetime.fromtimestamp(settings.SERVE_STARTED_AT, tz=UTC)
    if last_beat_at is not None and last_beat_at >= started:
        return False  # it beat, then fell silent: the usual rule
    due = timedelta(seconds=settings.WORKER_HEARTBEAT_SECONDS + settings.WORKER_STALE_SECONDS)
    return timezone.now() < started + due
