"""What ``GET /api/health`` reports: the database, the embedder, the queue, the worker,
the extractions, the search indexes against the memories.

``status`` is ``ok``, ``degraded`` (serving, but something needs a person: the
reasons are in ``problems``) or ``error`` (503: no database).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Count, Q
from django.utils import timezone


def _queue_length() -> int | None:
    from huey.contrib.djhuey import HUEY

    try:
        return int(HUEY.pending_count())
    except Exception:  # a queue that cannot answer is reported, not fatal to health
        return None


def health_report() -> tuple[dict[str, Any], int]:
    """The report and its HTTP status: 200 (ok or degraded) or 503 (no database)."""
    from spaceduck.checks import embedding_fingerprint_problem
    from spaceduck.providers import get_embedder

    body: dict[str, Any] = {"status": "ok"}
    try:
        with connection.cursor() as cursor:
            body["sqlite_vec"] = cursor.execute("SELECT vec_version()").fetchone()[0]
            body["sqlite"] = cursor.execute("SELECT sqlite_version()").fetchone()[0]
        body["database"] = "ok"
    except Exception as exc:
        body.update(status="error", database=f"error: {exc.__class__.__name__}")
        return body, 503
    fingerprint = get_embedder().fingerprint
    body["embedding"] = {
        "provider": fingerprint.provider,
        "model": fingerprint.model,
        "dimensions": fingerprint.dimensions,
        "problem": embedding_fingerprint_problem(),
    }
    body["chat"] = {"provider": settings.SPACEDUCK_CHAT["provider"]}
    body["queue"] = {"pending": _queue_length(), "immediate": settings.HUEY_IMMEDIATE}
    body["worker"], worker_problem = _worker()
    body["extractions"], extraction_problems = _extractions()
    body["indexes"] = _indexes()
    problems = [
        body["embedding"]["problem"],
        worker_problem,
        *extraction_problems,
        body["indexes"]["problem"],
    ]
    body["problems"] = [problem for problem in problems if problem]
    if body["problems"]:
        body["status"] = "degraded"
    return body, 200


def _indexes() -> dict[str, Any]:
    """Memories against their vector and keyword rows (counts only: ~10 ms at 100k)."""
    from memories.integrity import index_report

    try:
        return index_report(exact=False)
    except Exception as exc:  # e.g. the vector table missing before `migrate`
        return {"problem": f"the search indexes cannot be counted ({exc.__class__.__name__})"}


def _worker() -> tuple[dict[str, Any], str | None]:
    from spaceduck.worker import last_heartbeat, live_workers

    if settings.HUEY_IMMEDIATE:
        return {"mode": "immediate (tasks run inside requests)"}, None
    alive = live_workers()
    last = last_heartbeat()
    ago = None if last is None else round((timezone.now() - last.beat_at).total_seconds(), 1)
    report = {"alive": len(alive), "last_heartbeat_seconds_ago": ago}
    if alive:
        return report, None
    if last is None:
        return report, "no background worker has ever started (run `manage.py serve`)"
    return report, f"no background worker has beaten for {ago:.0f} s: extractions are not running"


def _extractions() -> tuple[dict[str, Any], list[str]]:
    from memories.models import Extraction

    now = timezone.now()
    due_before = now - timedelta(seconds=settings.EXTRACTION_STUCK_SECONDS)
    counts = dict(Extraction.objects.order_by().values_list("status").annotate(n=Count("id")))
    report: dict[str, Any] = {status: counts.get(status, 0) for status in Extraction.Status}
    report["expired_leases"] = Extraction.objects.filter(
        Q(lease_until__lt=now) | Q(lease_until__isnull=True), status="running"
    ).count()
    report["overdue"] = Extraction.objects.filter(
        Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lt=due_before),
        status="queued",
        created_at__lt=due_before,
    ).count()
    problems = []
    if report["expired_leases"]:
        problems.append(f"{report['expired_leases']} extraction(s) running with expired leases")
    if report["overdue"]:
        problems.append(
            f"{report['overdue']} extraction(s) queued for more than "
            f"{settings.EXTRACTION_STUCK_SECONDS} s"
        )
    return report, problems
