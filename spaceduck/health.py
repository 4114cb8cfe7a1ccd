"""What ``GET /api/health`` reports: the database, the embedder, the queue.

One function builds the report so the API route stays thin (and later checks,
such as the worker's heartbeat or the index counts, have one home).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection


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
    if body["embedding"]["problem"]:
        body["status"] = "degraded"
    return body, 200
