"""Service-level huey tasks."""

from __future__ import annotations

import os

from django.db import connection
from huey.contrib.djhuey import db_task

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
