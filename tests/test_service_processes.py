"""The real service in subprocesses: a huey consumer, `serve`, the start-up checks."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import time
from pathlib import Path

import pytest
from django.db import connection

from tests.processes import (
    children_of,
    free_port,
    http_get,
    is_running,
    manage,
    service_env,
    start_manage,
    wait_for_http,
    wait_until,
)

pytestmark = pytest.mark.slow

PROBE = (
    "import json; from spaceduck.tasks import vector_probe; "
    "print(json.dumps(vector_probe()(blocking=True, timeout=60)))"
)


@pytest.fixture
def migrated_env(tmp_path: Path) -> dict[str, str]:
    env = service_env(tmp_path)
    result = manage(env, "migrate", "--no-input")
    assert result.returncode == 0, result.stderr
    return env


def test_a_real_huey_consumer_runs_a_task_that_uses_the_vector_extension(
    migrated_env: dict[str, str],
) -> None:
    consumer = start_manage(migrated_env, "run_huey", "--workers", "1", "--worker-type", "thread")
    try:
        result = manage(migrated_env, "shell", "-c", PROBE, timeout=90)
        assert result.returncode == 0, result.stderr
        answer = json.loads(result.stdout.strip().splitlines()[-1])
        # sqlite-vec, or pgvector with huey on Redis in the PostgreSQL run (tests/processes)
        expected = {"sqlite": ("sqlite_vec", "v0.1.9"), "postgresql": ("pgvector", "0.8.5")}
        extension, version = expected[answer["vendor"]]
        assert answer["versions"][extension] == version
        assert answer["vendor"] == connection.vendor
        assert answer["distance"] == pytest.approx(1.0)
        assert answer["pid"] == consumer.pid  # it ran in the consumer, not inline
    finally:
        consumer.send_signal(signal.SIGINT)
        consumer.wait(timeout=30)


def test_serve_runs_web_and_worker_and_stops_both_on_sigterm(migrated_env: dict[str, str]) -> None:
    assert manage(migrated_env, "bootstrap").returncode == 0
    port = free_port()
    server = start_manage(migrated_env, "serve", f"127.0.0.1:{port}")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{base}/api/health", server)
        status, body = http_get(f"{base}/api/health")
        assert status == 200
        health = json.loads(body)
        assert health["database"] == "ok"
        # "starting" until the worker's first heartbeat, never "degraded" meanwhile.
        seen = []

        def beaten() -> bool:
            seen.append(json.loads(http_get(f"{base}/api/health")[1])["status"])
            return seen[-1] != "starting"

        wait_until(beaten, 90, "the worker's first heartbeat")
        assert seen[-1] == "ok", seen
        assert ("sqlite_vec" if connection.vendor == "sqlite" else "pgvector") in health
        assert http_get(f"{base}/admin/login/")[0] == 200
        assert http_get(f"{base}/api/docs")[0] == 200
        assert http_get(f"{base}/static/css/spaceduck.css")[0] == 200
        children = children_of(server.pid)
        assert len(children) == 2  # gunicorn's master and the worker
        gunicorn_workers = [pid for child in children for pid in children_of(child)]
        assert len(gunicorn_workers) >= 2  # SPACEDUCK_WEB_WORKERS processes serve requests
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    assert server.returncode == 0
    assert not any(is_running(pid) for pid in [*children, *gunicorn_workers])


STOP_WITHIN_S = 5.0


@pytest.mark.parametrize("how", ["SIGTERM to serve", "Ctrl-C in its terminal"])
def test_serve_stops_within_5_s_and_a_restart_on_the_same_port_works(
    migrated_env: dict[str, str], how: str
) -> None:
    """It took ~23 s after a Ctrl-C (SIGINT to every process of the terminal's group) and
    a restart meanwhile failed with "Address already in use"."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_manage(migrated_env, "serve", f"127.0.0.1:{port}", new_session=True)
    browser = None
    try:
        wait_for_http(f"{base}/api/health", server)
        # A kept-alive connection, as a browser leaves one open on the dashboard.
        browser = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        browser.request("GET", "/api/health")
        assert browser.getresponse().read()
        started = time.monotonic()
        if how == "SIGTERM to serve":
            server.send_signal(signal.SIGTERM)
        else:
            os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=60)
        took = time.monotonic() - started
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        if browser is not None:
            browser.close()
    output = server.stdout.read() if server.stdout else ""
    assert server.returncode == 0, output
    assert took < STOP_WITHIN_S, f"stopped in {took:.1f} s:\n{output}"

    again = start_manage(migrated_env, "serve", f"127.0.0.1:{port}", new_session=True)
    try:
        wait_for_http(f"{base}/api/health", again)  # fails if it exits: port still taken
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=60)
    output = again.stdout.read() if again.stdout else ""
    assert again.returncode == 0, output
    assert "Address already in use" not in output


def test_a_serve_killed_outright_takes_its_children_and_frees_the_port(
    migrated_env: dict[str, str],
) -> None:
    """Its children run in process groups of their own (a Ctrl-C reaches serve alone), so
    a SIGKILL of serve's group alone would leave them, gunicorn holding the port: they get
    SIGTERM from the kernel when serve dies."""
    port = free_port()
    server = start_manage(migrated_env, "serve", f"127.0.0.1:{port}", new_session=True)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/api/health", server)
        children = children_of(server.pid)
        grandchildren = [pid for child in children for pid in children_of(child)]
        assert len(children) == 2  # gunicorn's master and the worker
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    wait_until(
        lambda: not any(is_running(pid) for pid in [*children, *grandchildren]),
        30,
        "serve's children to stop",
    )
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds
        sock.bind(("127.0.0.1", port))  # OSError "Address already in use" if still held


def test_a_changed_embedding_dimension_stops_start_up_until_reindex(
    migrated_env: dict[str, str],
) -> None:
    assert manage(migrated_env, "bootstrap").returncode == 0  # demo memories with 384-d vectors
    changed = {**migrated_env, "SPACEDUCK_EMBEDDING_DIMENSIONS": "64"}
    refused = manage(changed, "serve", f"127.0.0.1:{free_port()}", timeout=60)
    assert refused.returncode != 0
    assert "python manage.py reindex" in refused.stderr
    assert "384d" in refused.stderr
    assert "64d" in refused.stderr
    worker = manage(changed, "run_huey")
    assert worker.returncode != 0
    assert "reindex" in worker.stderr

    reindexed = manage(changed, "reindex")
    assert reindexed.returncode == 0, reindexed.stderr
    assert "Reindexed 6 memories" in reindexed.stdout
    search = (
        "from memories.store import vector_index; "
        "from spaceduck.core.providers import get_embedder; "
        "from memories.models import Memory; "
        "hit = vector_index.knn('user:demo', get_embedder().embed(['deploy on a Friday'])[0], 1); "
        "print(Memory.objects.get(pk=hit[0][0]).content)"
    )
    found = manage(changed, "shell", "-c", search)
    assert found.returncode == 0, found.stderr
    assert "Friday" in found.stdout


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("SPACEDUCK_EMBEDDING_PROVIDER", "bert", "use one of: local, hash, openai"),
        ("SPACEDUCK_DEBUG", "maybe", "is not a boolean"),
        ("SPACEDUCK_WORKERS", "0", "must be an integer >= 1"),
        ("SPACEDUCK_DATABASE_TIMEOUT", "1", ">= 5.0"),
        ("SPACEDUCK_CHAT_TIMEOUT", "nan", "finite number"),
        ("SPACEDUCK_EMBEDDING_DIMENSIONS", "many", "is not an integer"),
        ("SPACEDUCK_CHAT_PROVIDER", "openai", "SPACEDUCK_CHAT_BASE_URL"),
    ],
)
def test_bad_settings_stop_start_up_with_a_clear_message(
    tmp_path: Path, name: str, value: str, expected: str
) -> None:
    result = manage(service_env(tmp_path, **{name: value}), "check")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "Traceback" not in result.stderr  # one clear line, not a stack trace
    assert name in result.stderr
    assert expected in result.stderr


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"SPACEDUCK_REDIS_URL": ""}, "SqliteHuey"),  # unset (the PostgreSQL run sets it)
        ({"SPACEDUCK_REDIS_URL": "redis://127.0.0.1:6399/0"}, "RedisHuey"),
    ],
)
def test_the_queue_is_sqlite_by_default_and_redis_when_configured(
    tmp_path: Path, overrides: dict[str, str], expected: str
) -> None:
    show = "from huey.contrib.djhuey import HUEY; print(type(HUEY).__name__, HUEY.storage.name)"
    result = manage(service_env(tmp_path, **overrides), "shell", "-c", show)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1].split()[0] == expected
    if expected == "SqliteHuey":
        assert (tmp_path / "spaceduck.huey.sqlite3").exists()  # next to the database


INGEST = (
    "import time, json; from memories.write.services import create_thread; "
    "from memories.write.ingest import message_ingest; "
    "from memories.models import Extraction, Memory; "
    "t = create_thread('user:alice'); "
    "r = message_ingest(t.id, 'user', 'I live in Lisbon and I prefer tea over coffee.'); "
    "deadline = time.time() + 60; "
    "status = lambda: Extraction.objects.get(pk=r.extraction.pk).status\n"
    "while status() != 'done' and time.time() < deadline:\n"
    "    time.sleep(0.2)\n"
    "status = status(); "
    "print(json.dumps({'status': status,"
    " 'memories': sorted(Memory.objects.values_list('content', flat=True))}))"
)


def test_the_worker_extracts_after_the_save_returns(migrated_env: dict[str, str]) -> None:
    consumer = start_manage(migrated_env, "run_huey", "--workers", "1", "--worker-type", "thread")
    try:
        result = manage(migrated_env, "shell", "-c", INGEST, timeout=90)
        assert result.returncode == 0, result.stderr
        answer = json.loads(result.stdout.strip().splitlines()[-1])
        assert answer["status"] == "done"
        assert "The user lives in Lisbon." in answer["memories"]
    finally:
        consumer.send_signal(signal.SIGINT)
        consumer.wait(timeout=30)


def _health_until_it_answers(base: str, server: object) -> tuple[int, dict[str, object]]:
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stdout.read()  # type: ignore[attr-defined]
        try:
            status, body = http_get(f"{base}/api/health", timeout=2)
            return status, json.loads(body)
        except OSError:
            time.sleep(0.2)
    raise AssertionError("the server never answered")


@pytest.mark.parametrize("migrated", ["nothing", "part"])
def test_health_is_503_naming_the_pending_migrations_until_migrate_runs(
    tmp_path: Path, migrated: str
) -> None:
    """A load balancer keeps a server with unapplied migrations out of rotation (503 with the
    reason); it was a 500 ("no such table") before."""
    env = service_env(tmp_path)
    if migrated == "part":  # e.g. a new release deployed before its migrations ran
        assert manage(env, "migrate", "spaceduck", "0001", "--no-input").returncode == 0
    port = free_port()
    server = start_manage(env, "serve", f"127.0.0.1:{port}", "--no-worker")
    base = f"http://127.0.0.1:{port}"
    try:
        status, health = _health_until_it_answers(base, server)
        assert status == 503
        assert health["status"] == "error"
        assert health["database"] == "migrations pending"
        [problem] = health["problems"]  # type: ignore[misc]
        expected = {"nothing": "spaceduck: 5 from 0001_initial", "part": "spaceduck: 4 from 0002"}
        assert expected[migrated] in problem
        assert "run `python manage.py migrate`" in problem
        assert manage(env, "migrate", "--no-input").returncode == 0
        status, health = _health_until_it_answers(base, server)
        assert status == 200
        assert health["database"] == "ok"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
