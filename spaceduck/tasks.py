"""Service-level huey tasks."""

from __future__ import annotations

import os

from django.db import connection
from huey.contrib.djhuey import db_task

# The vector extension's version and one cosine distance, in each database's SQL.
_PROBE_SQL = {
    "sqlite": (
        "SELECT vec_version()",
        "SELECT vec_distance_cosine(vec_f32('[1, 0]'), vec_f32('[0, 1]'))",
    ),
    "postgresql": (
        "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
        "SELECT '[1, 0]'::vector <=> '[0, 1]'::vector",
    ),
}


@db_task()
def vector_probe() -> dict[str, object]:
    """Prove the worker's own database connection has the vector extension (sqlite-vec or
    pgvector) and computes with it (used by the process tests)."""
    version_sql, distance_sql = _PROBE_SQL[connection.vendor]
    with connection.cursor() as cursor:
        version = cursor.execute(version_sql).fetchone()[0]
        distance = cursor.execute(distance_sql).fetchone()[0]
    return {
        "vendor": connection.vendor,
        "version": version,
        "distance": distance,
        "pid": os.getpid(),
    }
