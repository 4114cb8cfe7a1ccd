"""Service-level huey tasks."""

from __future__ import annotations

import os

from django.conf import settings
from django.db import connection
from huey.contrib.djhuey import db_task

from spaceduck.core import webhooks
from spaceduck.core.queue import queued

# One cosine distance, in each database's vector extension.
_DISTANCE_SQL = {
    "sqlite": "SELECT vec_distance_cosine(vec_f32('[1, 0]'), vec_f32('[0, 1]'))",
    "postgresql": "SELECT '[1, 0]'::vector <=> '[0, 1]'::vector",
}


@db_task()
def vector_probe() -> dict[str, object]:
    """Prove the worker's own database connection has the vector extension (sqlite-vec or
    pgvector) and computes with it (used by the process tests)."""
    from spaceduck.ops.health import database_versions

    with connection.cursor() as cursor:
        distance = cursor.execute(_DISTANCE_SQL[connection.vendor]).fetchone()[0]
    return {
        "vendor": connection.vendor,
        "versions": database_versions(),
        "distance": distance,
        "pid": os.getpid(),
    }


@queued("deliver_webhook")
@db_task()
def deliver_webhook(event: str, body: str, delivery: str, attempt: int) -> None:
    """One attempt (spaceduck.core.webhooks.deliver); after a failure, the next one is
    scheduled with a doubled delay until ``SPACEDUCK_WEBHOOK_RETRIES`` are spent.

    Scheduled explicitly rather than with huey's ``retries``: each attempt is its own row
    with its number, and a failed answer is not an exception in the worker's log.
    Returns nothing: huey would keep a result in its queue file until someone read it.
    """
    record = webhooks.deliver(event, body, delivery, attempt)
    if not record.ok and attempt <= settings.WEBHOOK_RETRIES:
        deliver_webhook.schedule(
            (event, body, delivery, attempt + 1), delay=webhooks.backoff(attempt)
        )
