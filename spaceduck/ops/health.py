"""What ``GET /api/health`` reports: the database, the embedder, the queue, the worker,
the extractions, the search indexes against the memories.

``status`` is ``ok``, ``starting`` (serving; `serve` has just started the worker,
whose first heartbeat is not due yet), ``degraded`` (serving, but something needs a
person: the reasons are in ``problems``) or ``error`` (503: no database, or migrations
pending).

``starting`` is a 200, as ``degraded`` is: the web server answers every request (the
database is there and migrated), and what needs the worker waits in the queue until it
beats. A balancer that routed nothing to it then would take each web host out of
rotation on every restart, though nothing it serves depends on the worker; one that
should wait for the worker can read ``status``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection

from memories.write.extraction_log import extraction_counts, extraction_stalls
from spaceduck.core.worker import queue_length, worker_state


def health_report() -> tuple[dict[str, Any], int]:
    """The report and its HTTP status: 200 (ok or degraded) or 503 (no database or
    migrations pending)."""
    from spaceduck.core.providers import get_embedder
    from spaceduck.ops.checks import embedding_fingerprint_problem

    body: dict[str, Any] = {"status": "ok"}
    try:
        body.update(database_versions())
        pending = pending_migrations()
    except Exception as exc:
        body.update(status="error", database=f"error: {exc.__class__.__name__}")
        return body, 503
    if pending:
        # Serving now would answer 500s on the missing tables: out of a balancer's rotation.
        body.update(
            status="error",
            database="migrations pending",
            problems=[
                f"{len(pending)} migration(s) not applied ({_by_app(pending)}): "
                "run `python manage.py migrate`"
            ],
        )
        return body, 503
    body["database"] = "ok"
    fingerprint = get_embedder().fingerprint
    body["embedding"] = {
        "provider": fingerprint.provider,
        "model": fingerprint.model,
        "dimensions": fingerprint.dimensions,
        "problem": embedding_fingerprint_problem(),
    }
    body["chat"] = {"provider": settings.SPACEDUCK_CHAT["provider"]}
    body["queue"] = {"pending": queue_length(), "immediate": settings.HUEY_IMMEDIATE}
    body["worker"], worker_problem = _worker()
    body["extractions"], extraction_problems = _extractions()
    body["indexes"] = _indexes()
    mcp_problem = None
    if settings.MCP_ADDRESS:
        body["mcp"], mcp_problem = mcp_endpoint(settings.MCP_ADDRESS)
    problems = [
        body["embedding"]["problem"],
        worker_problem,
        mcp_problem,
        *extraction_problems,
        body["indexes"]["problem"],
    ]
    body["problems"] = [problem for problem in problems if problem]
    if body["problems"]:
        body["status"] = "degraded"
    elif body["worker"].get("starting"):
        body["status"] = "starting"
    return body, 200


MCP_PROBE_TIMEOUT_S = 2.0


def mcp_endpoint(address: str) -> tuple[dict[str, Any], str | None]:
    """Whether the MCP endpoint at HOST:PORT answers HTTP at /mcp (any status: without a
    token it is a 401, which proves the server is up)."""
    import http.client

    host, _, port = address.rpartition(":")
    connection_ = http.client.HTTPConnection(
        host.strip("[]"), int(port), timeout=MCP_PROBE_TIMEOUT_S
    )
    try:
        connection_.request("GET", "/mcp", headers={"Host": host})
        status = connection_.getresponse().status
    except (OSError, http.client.HTTPException) as exc:
        return (
            {"address": address, "answering": False},
            f"the MCP endpoint at {address} is not answering ({exc.__class__.__name__})",
        )
    finally:
        connection_.close()
    return {"address": address, "answering": True, "status": status}, None


_VERSIONS_SQL = {
    "sqlite": {"sqlite": "SELECT sqlite_version()", "sqlite_vec": "SELECT vec_version()"},
    "postgresql": {
        "postgresql": "SELECT current_setting('server_version')",
        "pgvector": "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
    },
}


# Databases (by name) found fully migrated: migrations are not un-applied under a running
# server, so each process loads the migration graph (~50 ms) until it is up to date, then
# never again.
_MIGRATED: set[str] = set()


def pending_migrations() -> list[str]:
    """The migrations not applied to the database (``app.name``), in the order of the plan."""
    from django.db.migrations.executor import MigrationExecutor

    name = str(connection.settings_dict["NAME"])
    if name in _MIGRATED:
        return []
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    pending = [f"{migration.app_label}.{migration.name}" for migration, _ in plan]
    if not pending:
        _MIGRATED.add(name)
    return pending


def _by_app(pending: list[str]) -> str:
    """ "spaceduck: 2 from 0002_worker_heartbeat; ..." for each app with pending migrations."""
    apps: dict[str, list[str]] = {}
    for label in pending:
        app, name = label.split(".", 1)
        apps.setdefault(app, []).append(name)
    return "; ".join(f"{app}: {len(names)} from {names[0]}" for app, names in apps.items())


def database_versions() -> dict[str, str]:
    """The database's and its vector extension's versions (a query that proves it answers)."""
    versions = {}
    with connection.cursor() as cursor:
        for name, sql in _VERSIONS_SQL[connection.vendor].items():
            row = cursor.execute(sql).fetchone()
            # pgvector is created by the first migration: none yet on an unmigrated database.
            versions[name] = row[0] if row is not None else "not installed"
    return versions


def _indexes() -> dict[str, Any]:
    """Memories against their vector and keyword rows (counts only: ~10 ms at 100k)."""
    from memories.upkeep.integrity import index_report

    try:
        return index_report(exact=False)
    except Exception as exc:  # e.g. the vector table missing before `migrate`
        return {"problem": f"the search indexes cannot be counted ({exc.__class__.__name__})"}


def _worker() -> tuple[dict[str, Any], str | None]:
    state = worker_state()
    if state.immediate:
        return {"mode": "immediate (tasks run inside requests)"}, None
    worker = {
        "alive": state.alive,
        "last_heartbeat_seconds_ago": state.seconds_ago,
        "starting": state.starting,
    }
    return worker, state.problem


def _extractions() -> tuple[dict[str, Any], list[str]]:
    stalls, problems = extraction_stalls()
    return {**extraction_counts(), **stalls}, problems
