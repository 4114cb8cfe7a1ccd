"""Helpers for tests that run the real service in subprocesses (manage.py, huey, serve)."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any

from django.conf import settings

MANAGE = str(Path(settings.BASE_DIR) / "manage.py")


def service_env(data_dir: Path, **overrides: str) -> dict[str, str]:
    """The environment of a real deployment in ``data_dir``: production settings, offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPACEDUCK_")}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "spaceduck.settings",
            "SPACEDUCK_DATA_DIR": str(data_dir),
            "SPACEDUCK_EMBEDDING_PROVIDER": "hash",
            "SPACEDUCK_HUEY_IMMEDIATE": "0",
            "PYTHONUNBUFFERED": "1",
        }
    )
    if settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        # The suite's PostgreSQL run: a deployment of its own there, with huey on Redis
        # (what several hosts share), instead of the SQLite file and queue in data_dir.
        from tests.postgres import fresh_database_url
        from tests.redis_server import fresh_url

        env["SPACEDUCK_DATABASE_URL"] = fresh_database_url()
        env["SPACEDUCK_REDIS_URL"] = fresh_url()
    env.update(overrides)
    return env


def query(env: dict[str, str], sql: str) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` read from the deployment's database behind its back (SQLite's file in
    the data directory, or its PostgreSQL database); JSON columns come back as text."""
    url = env.get("SPACEDUCK_DATABASE_URL")
    if url:
        import psycopg
        from psycopg.types.json import set_json_loads

        with psycopg.connect(url) as conn:
            set_json_loads(lambda data: data if isinstance(data, str) else data.decode(), conn)
            return list(conn.execute(sql).fetchall())
    path = Path(env["SPACEDUCK_DATA_DIR"]) / "spaceduck.sqlite3"
    with closing(sqlite3.connect(path, timeout=30)) as db:
        return list(db.execute(sql).fetchall())


def manage(
    env: dict[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, MANAGE, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start_manage(
    env: dict[str, str], *args: str, new_session: bool = False
) -> subprocess.Popen[str]:
    """``manage.py ARGS`` in the background; ``new_session``: in a process group of its
    own, as a terminal runs a command (a Ctrl-C there is SIGINT to the whole group)."""
    return subprocess.Popen(
        [sys.executable, MANAGE, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=new_session,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_get(url: str, timeout: float = 5) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def wait_for_http(url: str, process: subprocess.Popen[str], deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stdout.read() if process.stdout else ""
            raise AssertionError(f"server exited with {process.returncode}:\n{output}")
        try:
            if http_get(url, timeout=1)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {deadline_s}s")


def children_of(pid: int) -> list[int]:
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        text = (task / "children").read_text().split()
        children.extend(int(child) for child in text)
    return children


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text()


def wait_until(check: Any, timeout: float, what: str) -> None:
    """Poll ``check()`` every 0.2 s until it is true, or fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")
