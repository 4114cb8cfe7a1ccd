"""Load on the production server: mixed traffic from many HTTP clients.

``python manage.py bench load [--clients 8,32] [--seconds 60] [--memories 10000]``

Runs in a child process on a throw-away database (see scratch.py): seeds
``--memories`` memories (hash embedder) over one namespace per client slot,
starts ``manage.py serve`` (gunicorn + the supervised worker, as in production)
and, for each client count, runs that many client processes for ``--seconds``.
Each client keeps one HTTP connection and picks, by weight: a message
(``POST /api/threads/{id}/messages``, which queues an extraction), a search
(``GET /api/memories/search``), a context build (``POST /api/context``), a
fact write (``PUT /api/facts/{ns}/{key}``) or a note write (``POST /api/notes``).

Prints per operation: count, throughput, p50/p95/p99 latency, errors; the writes
the server acknowledged but the database does not hold (lost writes); the
resident memory (RSS) of the web server (gunicorn's processes) and of the
worker at start and end; the extraction backlog. Targets at 8 clients: no
errors, no lost writes, search and context p95 <= 150 ms, writes p95 <= 100 ms,
RSS growth <= 10 %.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from spaceduck.core.private_files import open_private_log
from spaceduck.ops.benchmarks.scratch import Writer, run_child, setup_child_django

OPERATIONS = {"message": 25, "search": 30, "context": 20, "fact": 15, "note": 10}
READS = ("search", "context")
READ_P95_MS = 150.0
WRITE_P95_MS = 100.0
RSS_GROWTH = 0.10
WORDS = [f"w{i:04d}" for i in range(400)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--clients", default="8,32", help="client processes per round")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each round")
    parser.add_argument("--memories", type=int, default=10_000, help="memories seeded first")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--web-workers", type=int, help="gunicorn processes (default: setting)")
    parser.add_argument("--web-threads", type=int, help="threads per process (default: setting)")
    parser.add_argument("--workers", type=int, help="huey worker threads (default: setting)")


def run(options: dict[str, Any], stdout: Writer) -> None:
    clients = [int(c) for c in str(options["clients"]).split(",") if c.strip()]
    if not clients or min(clients) < 1:
        from django.core.management import CommandError

        raise CommandError("--clients takes positive numbers, e.g. 8,32")
    config = {
        "clients": clients,
        "seconds": options["seconds"],
        "memories": options["memories"],
        "seed": options["seed"],
    }
    server = {
        f"SPACEDUCK_WEB_{name.upper()}": str(options[f"web_{name}"])
        for name in ("workers", "threads")
        if options.get(f"web_{name}")
    }
    if options.get("workers"):
        server["SPACEDUCK_WORKERS"] = str(options["workers"])
    run_child("spaceduck.ops.benchmarks.load", [json.dumps(config)], stdout, **server)


# --- The child: seed, serve, load --------------------------------------------------


def _namespaces(count: int) -> list[str]:
    return [f"user:load-{i}" for i in range(count)]


def _seed(memories: int, namespaces: list[str], seed: int) -> None:
    from spaceduck.core.providers import get_embedder
    from spaceduck.ops.benchmarks.recall import _insert
    from spaceduck.ops.benchmarks.vectors import texts_of

    rng = np.random.default_rng(seed)
    texts = texts_of(rng, memories, 6, 16)
    vectors = get_embedder().embed(texts) if texts else np.zeros((0, 384), dtype=np.float32)
    _insert(texts, vectors, lambda i: namespaces[i % len(namespaces)])
    from memories.store import keyword_index

    keyword_index.catch_up()  # PostgreSQL: the periodic task's work after a bulk load


def _setup(namespaces: list[str]) -> tuple[str, dict[str, str]]:
    """An admin token for every user namespace, and one thread per namespace."""
    from memories.write.services import create_thread
    from notes.services import enable_note_search
    from spaceduck.core.tokens import token_create

    token = token_create(name="load", namespaces=["user:*"], permissions=["admin"])
    enable_note_search("user")
    threads = {ns: create_thread(ns, "load").pk for ns in namespaces}
    return token.secret, threads


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _health(base: str) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(f"{base}/api/health", timeout=5) as response:
            return json.loads(response.read())
    except OSError:
        return {}


def _start_server(port: int) -> subprocess.Popen[bytes]:
    from django.conf import settings

    log = open_private_log(Path(settings.DATA_DIR) / "serve.log")  # lives with the server
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", f"127.0.0.1:{port}"],
        cwd=settings.BASE_DIR,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if server.poll() is not None:
            tail = (Path(settings.DATA_DIR) / "serve.log").read_text(errors="replace")[-3000:]
            raise SystemExit(f"serve exited with {server.returncode}:\n{tail}")
        if _health(base).get("worker", {}).get("alive"):
            return server
        time.sleep(0.3)
    raise SystemExit("the server or its worker did not start within 90 s")


def _tree(pid: int) -> list[int]:
    found = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*"):
        for child in (task / "children").read_text().split():
            found += _tree(int(child))
    return found


def _rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        total += next(int(line.split()[1]) for line in status.splitlines() if "VmRSS" in line)
    return total / 1024


def _cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds the processes have used so far."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return ticks / os.sysconf("SC_CLK_TCK")


def _processes(server: subprocess.Popen[bytes]) -> dict[str, list[int]]:
    """The web server's processes (gunicorn master + workers) and the worker's."""
    found: dict[str, list[int]] = {"web": [], "worker": []}
    for child in _tree(server.pid)[1:]:
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        if b"gunicorn" in cmdline:
            found["web"].append(child)
        elif b"worker" in cmdline:
            found["worker"].append(child)
    return found


def _memory(server: subprocess.Popen[bytes]) -> dict[str, float]:
    """RSS (MB) and CPU seconds used so far, of the web server and of the worker."""
    processes = _processes(server)
    return {
        **{name: _rss_mb(pids) for name, pids in processes.items()},
        **{f"{name}_cpu": _cpu_s(pids) for name, pids in processes.items()},
    }


# --- A client ------------------------------------------------------------------------


class Client:
    def __init__(self, port: int, secret: str, number: int, namespace: str, thread: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
        self.number, self.namespace, self.thread = number, namespace, thread
        # The standard library's generator: the clients share the cores with the
        # server, and numpy's choice() costs ~50 us a call where this costs ~1.
        self.rng = random.Random(1000 + number)
        self.count = 0
        self.written: dict[str, list[str]] = defaultdict(list)

    def request(self, method: str, path: str, body: Any = None) -> int:
        payload = None if body is None else json.dumps(body)
        try:
            self.conn.request(method, path, body=payload, headers=self.headers)
            response = self.conn.getresponse()
            response.read()
            return response.status
        except (OSError, http.client.HTTPException):
            self.conn.close()  # reconnect on the next request
            return 0

    def words(self, n: int) -> str:
        return " ".join(self.rng.choices(WORDS, k=n))

    def do(self, operation: str) -> bool:
        self.count += 1
        key = f"c{self.number}-{self.count}"
        if operation == "message":
            status = self.request(
                "POST",
                f"/api/threads/{self.thread}/messages",
                {"role": "user", "content": f"I like {self.words(3)}.", "id": key},
            )
            return self._wrote("message", key, status)
        if operation == "search":
            query = self.words(2).replace(" ", "+")
            path = f"/api/memories/search?namespace={self.namespace}&q={query}&topK=10"
            return self.request("GET", path) == 200
        if operation == "context":
            body = {"namespace": self.namespace, "thread_id": self.thread, "query": self.words(3)}
            return self.request("POST", "/api/context", body) == 200
        if operation == "fact":
            path = f"/api/facts/{self.namespace}/{key}"
            status = self.request("PUT", path, {"value": {"n": self.count}})
            return self._wrote("fact", key, status)
        status = self.request(
            "POST", "/api/notes", {"namespace": self.namespace, "body": self.words(8), "id": key}
        )
        return self._wrote("note", key, status)

    def _wrote(self, what: str, key: str, status: int) -> bool:
        if status in (200, 201):
            self.written[what].append(key)
            return True
        return False


def _client_main(args: tuple[int, str, int, str, str, float]) -> dict[str, Any]:
    port, secret, number, namespace, thread, seconds = args
    client = Client(port, secret, number, namespace, thread)
    names = list(OPERATIONS)
    weights = list(OPERATIONS.values())
    times: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        operation = client.rng.choices(names, weights)[0]
        started = time.perf_counter()
        ok = client.do(operation)
        times[operation].append((time.perf_counter() - started) * 1000)
        if not ok:
            errors[operation] += 1
    return {"times": dict(times), "errors": dict(errors), "written": dict(client.written)}


# --- A round --------------------------------------------------------------------------


def _round(
    clients: int, seconds: float, port: int, secret: str, threads: dict[str, str]
) -> tuple[dict[str, list[float]], dict[str, int], dict[str, list[str]], float]:
    namespaces = list(threads)
    jobs = [
        (
            port,
            secret,
            n,
            namespaces[n % len(namespaces)],
            threads[namespaces[n % len(namespaces)]],
            seconds,
        )
        for n in range(clients)
    ]
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        results = pool.map(_client_main, jobs)
    elapsed = time.perf_counter() - started
    times: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    written: dict[str, list[str]] = defaultdict(list)
    for result in results:
        for op, values in result["times"].items():
            times[op] += values
        for op, count in result["errors"].items():
            errors[op] += count
        for what, keys in result["written"].items():
            written[what] += keys
    return times, errors, written, elapsed


def _lost(written: dict[str, list[str]]) -> dict[str, int]:
    """Acknowledged writes that the database does not hold."""
    from memories.models import Fact, Message
    from notes.models import Note

    found = {
        "message": set(
            Message.objects.filter(pk__in=written.get("message", [])).values_list("pk", flat=True)
        ),
        "fact": set(
            Fact.objects.filter(key__in=written.get("fact", [])).values_list("key", flat=True)
        ),
        "note": set(
            Note.objects.filter(uid__in=written.get("note", [])).values_list("uid", flat=True)
        ),
    }
    return {what: len(set(keys) - found[what]) for what, keys in written.items()}


def _report(
    clients: int,
    seconds: float,
    result: tuple[dict[str, list[float]], dict[str, int], dict[str, list[str]], float],
    before: dict[str, float],
    after: dict[str, float],
) -> None:
    from memories.models import Extraction

    times, errors, written, elapsed = result
    total = sum(len(v) for v in times.values())
    print(f"\n{clients} clients, {seconds:.0f} s: {total} requests, {total / elapsed:.0f}/s")
    columns = ("count", "per s", "p50 ms", "p95 ms", "p99 ms")
    print(f"  {'operation':<10}" + "".join(f"{c:>9}" for c in columns) + f"{'errors':>8}")
    verdicts = []
    for op in OPERATIONS:
        values = np.array(times.get(op, [0.0]))
        p50, p95, p99 = np.percentile(values, [50, 95, 99])
        print(
            f"  {op:<10}{len(times.get(op, [])):>9}{len(times.get(op, [])) / elapsed:>9.1f}"
            f"{p50:>9.1f}{p95:>9.1f}{p99:>9.1f}{errors.get(op, 0):>8}"
        )
        limit = READ_P95_MS if op in READS else WRITE_P95_MS
        verdicts.append(f"{op} p95 {p95:.0f} ms {'<=' if p95 <= limit else '>'} {limit:.0f}")
    lost = _lost(written)
    print(f"  lost writes: {lost} (acknowledged, then missing from the database)")
    growth = {k: (after[k] - before[k]) / before[k] if before[k] else 0.0 for k in before}
    cpu = {k: after[f"{k}_cpu"] - before[f"{k}_cpu"] for k in ("web", "worker")}
    print(
        f"  CPU per request: web {cpu['web'] * 1000 / max(total, 1):.1f} ms, worker "
        f"{cpu['worker'] * 1000 / max(total, 1):.1f} ms ({os.cpu_count()} cores shared "
        "with the clients)"
    )
    print(
        "  RSS MB: web {:.0f} -> {:.0f} ({:+.1%}), worker {:.0f} -> {:.0f} ({:+.1%})".format(
            before["web"],
            after["web"],
            growth["web"],
            before["worker"],
            after["worker"],
            growth["worker"],
        )
    )
    counts = {str(s): Extraction.objects.filter(status=s).count() for s in Extraction.Status}
    print(f"  extractions: {counts} (the worker catches up after the round)")
    failed = sum(errors.values()), sum(lost.values())
    print(f"  targets: {'; '.join(verdicts)}; errors {failed[0]}; lost {failed[1]}")


def child_main(config: dict[str, Any]) -> None:
    setup_child_django()
    from django.db import connections

    namespaces = _namespaces(max(config["clients"]))
    started = time.perf_counter()
    _seed(config["memories"], namespaces, config["seed"])
    secret, threads = _setup(namespaces)
    from django.conf import settings

    print(
        f"load: {config['memories']} memories over {len(namespaces)} namespaces seeded in "
        f"{time.perf_counter() - started:.1f} s; server: manage.py serve (gunicorn "
        f"{settings.WEB_WORKERS}x{settings.WEB_THREADS} + worker)"
    )
    connections.close_all()
    port = _free_port()
    server = _start_server(port)
    try:
        for clients in config["clients"]:
            # Warm up first (imports, the vector cache of every namespace, connections),
            # so the RSS figures show growth under load, not start-up.
            _round(clients, min(5.0, config["seconds"] / 6), port, secret, threads)
            before = _memory(server)
            result = _round(clients, config["seconds"], port, secret, threads)
            time.sleep(1)  # let in-flight requests land before counting
            _report(clients, config["seconds"], result, before, _memory(server))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spaceduck.settings")
    child_main(json.loads(sys.argv[1]))
