"""Service-level huey tasks."""

from __future__ import annotations

import os

from django.db import connection
from huey.contrib.djhuey import db_task


@db_task()
def sqlite_vec_probe() -> dict[str, object]:
    """Prove the worker's own database connection has sqlite-vec (used by health tests)."""
    with connection.cursor() as cursor:
        version = cursor.execute("SELECT vec_version()").fetchone()[0]
        distance = cursor.execute(
            "SELECT vec_distance_cosine(vec_f32('[1, 0]'), vec_f32('[0, 1]'))"
        ).fetchone()[0]
    return {"vec_version": version, "distance": distance, "pid": os.getpid()}
