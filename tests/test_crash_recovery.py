"""Extractions survive a worker that dies: a real consumer is SIGKILLed at exact points
(fail points), started again, and every message ends with exactly one done extraction
and the same memories as a run that never crashed."""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from pathlib import Path

import pytest

from tests.processes import (
    children_of,
    free_port,
    http_get,
    is_running,
    manage,
    query,
    service_env,
    start_manage,
    wait_for_http,
    wait_until,
)

pytestmark = pytest.mark.slow

# Fast leases and heartbeats, so recovery happens within seconds in the test.
FAST = {
    "SPACEDUCK_EXTRACTION_LEASE_SECONDS": "2",
    "SPACEDUCK_WORKER_HEARTBEAT_SECONDS": "0.3",
    "SPACEDUCK_RECOVERY_EVERY_SECONDS": "0.5",
    "SPACEDUCK_WORKER_STALE_SECONDS": "1",
}
NAMES = [
    "Ada",
    "Grace",
    "Linus",
    "Barbara",
    "Ken",
    "Margaret",
    "Dennis",
    "Frances",
    "Alan",
    "Edsger",
]
CITIES = ["Lisbon", "Oslo", "Turin", "Leeds", "Austin", "Kyoto", "Lagos", "Quito", "Perth", "Riga"]
DRINKS = ["green tea", "espresso", "oat milk", "cold brew", "rooibos"]


def messages() -> list[str]:
    """50 messages over 10 users: a name, a home, a habit, a reminder, then a move (the
    home slot gets a new value, so the first home is superseded)."""
    out = []
    for i in range(50):
        user = i // 5
        out.append(
            [
                f"My name is {NAMES[user]}.",
                f"I live in {CITIES[user]}.",
                f"I prefer {DRINKS[user % 5]} in the morning.",
                f"Remember that my project deadline is on day {user + 1} of the sprint.",
                f"I moved, I live in {CITIES[(user + 3) % 10]} now.",
            ][i % 5]
        )
    return out


INGEST = """
import json
from memories.write.ingest import message_ingest
from memories.write.services import create_thread
texts = json.loads({texts!r})
ids = []
for i, text in enumerate(texts):
    thread = create_thread("user:crash-%d" % (i // 5))
    ids.append(message_ingest(thread.pk, "user", text).message.pk)
print(json.dumps(ids))
"""


def ingest(env: dict[str, str]) -> list[str]:
    result = manage(env, "shell", "-c", INGEST.format(texts=json.dumps(messages())), timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def statuses(env: dict[str, str]) -> Counter[str]:
    return Counter(row[0] for row in query(env, "SELECT status FROM memories_extraction"))


def memories(env: dict[str, str]) -> Counter[tuple[str, str]]:
    rows = query(env, "SELECT namespace, content FROM memories_memory")
    return Counter((namespace, content) for namespace, content in rows)


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> Counter[tuple[str, str]]:
    """What the 50 messages teach when nothing crashes (extraction inline)."""
    env = service_env(tmp_path_factory.mktemp("control"), SPACEDUCK_HUEY_IMMEDIATE="1")
    assert manage(env, "migrate", "--no-input").returncode == 0
    ingest(env)
    assert statuses(env) == Counter({"done": 50})
    learnt = memories(env)
    assert sum(learnt.values()) >= 40
    return learnt


@pytest.mark.parametrize(
    "point",
    ["extraction.before_classify", "extraction.in_dedup", "extraction.before_finish"],
)
def test_every_message_is_extracted_once_after_the_worker_is_killed(
    tmp_path: Path, point: str, expected: Counter[tuple[str, str]]
) -> None:
    env = service_env(tmp_path, **FAST)
    assert manage(env, "migrate", "--no-input").returncode == 0
    message_ids = ingest(env)
    assert statuses(env) == Counter({"queued": 50})

    doomed = start_manage({**env, "SPACEDUCK_FAILPOINTS": f"{point}=kill@9"}, "worker")
    assert doomed.wait(timeout=120) == -signal.SIGKILL
    interrupted = statuses(env)
    assert interrupted["running"] >= 1  # killed mid-extraction, lease still held
    assert interrupted["done"] < 50

    worker = start_manage(env, "worker")
    try:
        wait_until(lambda: statuses(env) == Counter({"done": 50}), 120, "50 done extractions")
    finally:
        worker.send_signal(signal.SIGINT)
        worker.wait(timeout=30)
    per_message = Counter(
        row[0] for row in query(env, "SELECT message_id FROM memories_extraction")
    )
    errors = [json.loads(row[0]) for row in query(env, "SELECT errors FROM memories_extraction")]
    assert per_message == Counter({message_id: 1 for message_id in message_ids})
    assert any("lease expired" in e["error"] for err in errors for e in err)
    assert memories(env) == expected  # nothing duplicated, nothing missing


def test_huey_s_own_run_huey_command_has_the_heartbeat_and_recovers_a_killed_consumer(
    tmp_path: Path, expected: Counter[tuple[str, str]]
) -> None:
    """`manage.py run_huey`, as huey's documentation tells users to start a consumer, is
    the worker too: a killed one's extractions are recovered by the next run_huey, and a
    running one is alive in health. It used to run tasks without either."""
    env = service_env(tmp_path, **FAST)
    assert manage(env, "migrate", "--no-input").returncode == 0
    ingest(env)
    consumer = ("run_huey", "--workers", "2")
    doomed = start_manage({**env, "SPACEDUCK_FAILPOINTS": "extraction.in_dedup=kill@9"}, *consumer)
    assert doomed.wait(timeout=120) == -signal.SIGKILL
    assert statuses(env)["running"] >= 1
    beats = query(env, "SELECT worker_id FROM spaceduck_workerheartbeat")
    assert [row[0].endswith(f":{doomed.pid}") for row in beats] == [True]

    second = start_manage(env, *consumer)
    try:
        wait_until(lambda: statuses(env) == Counter({"done": 50}), 120, "50 done extractions")
        alive = query(
            env, "SELECT worker_id FROM spaceduck_workerheartbeat WHERE stopped_at IS NULL"
        )
        assert f":{second.pid}" in " ".join(row[0] for row in alive)
    finally:
        second.send_signal(signal.SIGINT)
        second.wait(timeout=30)
    errors = [json.loads(row[0]) for row in query(env, "SELECT errors FROM memories_extraction")]
    assert any("lease expired" in e["error"] for err in errors for e in err)
    assert memories(env) == expected
    beats = dict(query(env, "SELECT worker_id, stopped_at FROM spaceduck_workerheartbeat"))
    [stopped] = [at for worker, at in beats.items() if worker.endswith(f":{second.pid}")]
    assert stopped is not None  # a clean stop says so


def test_run_huey_refuses_process_workers_whose_leases_it_could_not_renew(tmp_path: Path) -> None:
    env = service_env(tmp_path)
    done = manage(env, "run_huey", "--worker-type", "process")
    assert done.returncode != 0
    assert "--worker-type thread" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_restarts_a_killed_worker_and_health_says_degraded_meanwhile(
    tmp_path: Path,
) -> None:
    env = service_env(tmp_path, **FAST)
    assert manage(env, "migrate", "--no-input").returncode == 0
    port = free_port()
    server = start_manage(env, "serve", f"127.0.0.1:{port}")
    health = f"http://127.0.0.1:{port}/api/health"

    def report() -> dict[str, object]:
        return json.loads(http_get(health)[1])

    try:
        wait_for_http(health, server)
        wait_until(lambda: report()["status"] == "ok", 60, "a worker's first heartbeat")
        worker = next(pid for pid in children_of(server.pid) if _is_worker(pid))
        # Pause the supervisor, so the window with no worker lasts until we resume it.
        server.send_signal(signal.SIGSTOP)
        try:
            os.kill(worker, signal.SIGKILL)
            wait_until(lambda: report()["status"] == "degraded", 30, "health to notice")
            body = report()
            assert any("no background worker has beaten" in p for p in body["problems"])  # type: ignore[union-attr]
            assert body["worker"]["alive"] == 0  # type: ignore[index]
        finally:
            server.send_signal(signal.SIGCONT)
        wait_until(lambda: report()["status"] == "ok", 60, "the restarted worker's heartbeat")
        replacement = [pid for pid in children_of(server.pid) if _is_worker(pid)]
        assert len(replacement) == 1
        assert replacement[0] != worker
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    assert server.returncode == 0
    assert not is_running(replacement[0])


def test_health_is_degraded_when_no_worker_ever_started(tmp_path: Path) -> None:
    env = service_env(tmp_path, **FAST)
    assert manage(env, "migrate", "--no-input").returncode == 0
    port = free_port()
    server = start_manage(env, "serve", f"127.0.0.1:{port}", "--no-worker")
    health = f"http://127.0.0.1:{port}/api/health"
    try:
        wait_for_http(health, server)
        body = json.loads(http_get(health)[1])
        assert body["status"] == "degraded"
        assert body["problems"] == ["no background worker has ever started (run `manage.py serve`)"]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


def _is_worker(pid: int) -> bool:
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return b"worker" in cmdline
