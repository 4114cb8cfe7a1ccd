"""Vector search in one namespace: the in-process cache, the database's KNN and a bare numpy scan.

Each size runs in a child process on a throw-away database in a temporary
directory (migrated there, deleted afterwards), so the developer's database is
never opened. The child bulk-inserts random unit vectors: N into one namespace
plus ``--others`` spread over ``--other-namespaces`` more, then times the cold
load of the cache, ``vector_index.search``, ``vector_index.knn`` and a numpy
top-k over a matrix built beforehand (the floor any exact scan can reach here).
On PostgreSQL (``bench --postgres URL vectors``) it also builds pgvector's HNSW index
after the load and times ``vector_index.index_scan`` with its recall@k against the
exact answer.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from spaceduck.ops.benchmarks.scratch import Writer, run_child, setup_child_django

BENCH_NAMESPACE = "user:bench"
LOAD_ROUNDS = 3
INSERT_BATCH = 5_000
VOCABULARY = 5_000  # the synthetic texts' words: a few common, most rare
_INSERT_SQL = "INSERT INTO memories_vec(memory_id, namespace, embedding) VALUES (%s, %s, %s)"
_PUBLIC_LOAD_SQL = "SELECT memory_id, embedding FROM memories_vec WHERE namespace = %s"
_PG_PUBLIC_LOAD_SQL = (
    "SELECT memory_id, vector_send(embedding) FROM memories_vec WHERE namespace = %s"
)
_COPY_SQL = "COPY memories_vec (memory_id, namespace, embedding) FROM STDIN"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="10000,100000", help="vectors in the searched namespace")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per method")
    parser.add_argument("--k", type=int, default=30)
    parser.add_argument("--others", type=int, default=100_000, help="vectors in other namespaces")
    parser.add_argument("--other-namespaces", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--vectors",
        choices=("random", "texts"),
        default="random",
        help="random unit vectors (the scan's cost), or the hash embedder's vectors of "
        "synthetic sentences (structured like real ones: what an approximate index's "
        "recall depends on)",
    )


def run(options: dict[str, Any], stdout: Writer) -> None:
    sizes = [int(size) for size in str(options["sizes"]).split(",") if size.strip()]
    settings = [options["queries"], options["k"], options["others"], options["other_namespaces"]]
    for size in sizes:
        args = [str(value) for value in (size, *settings, options["seed"])]
        run_child("spaceduck.ops.benchmarks.vectors", [*args, options["vectors"]], stdout)


# --- The child: one size on its own database ------------------------------------


def _unit_rows(rng: np.random.Generator, count: int, dims: int) -> np.ndarray:
    rows = rng.standard_normal((count, dims), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def _insert(rows: np.ndarray, first_id: int, namespace_of: Callable[[int], str]) -> None:
    from django.db import connection, transaction

    if connection.vendor == "postgresql":
        _copy_rows(rows, first_id, namespace_of)
        return
    for start in range(0, len(rows), INSERT_BATCH):
        batch = rows[start : start + INSERT_BATCH]
        params = [
            (first_id + start + i, namespace_of(start + i), row.tobytes())
            for i, row in enumerate(batch)
        ]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(_INSERT_SQL, params)


def _copy_rows(rows: np.ndarray, first_id: int, namespace_of: Callable[[int], str]) -> None:
    """PostgreSQL: COPY the rows in (vectors as pgvector's text form)."""
    ids = range(first_id, first_id + len(rows))
    copy_vectors(zip(ids, (namespace_of(i) for i in range(len(rows))), rows, strict=True))


def copy_vectors(rows: Iterable[tuple[int, str, np.ndarray]]) -> None:
    """PostgreSQL: COPY (memory id, namespace, vector) rows into the vector table, in the
    caller's transaction (a bulk load: no version counters, caches reload)."""
    from django.db import connection

    with connection.cursor() as cursor, cursor.copy(_COPY_SQL) as copy:
        for memory_id, namespace, row in rows:
            copy.write_row((memory_id, namespace, "[" + ",".join(map(repr, row.tolist())) + "]"))


def build_hnsw_s() -> float:
    """PostgreSQL: (re)build the HNSW index over everything loaded; seconds it took."""
    from django.db import connection

    from memories.store.vector_index import HNSW_INDEX_SQL

    started = time.perf_counter()
    with connection.cursor() as cursor:
        # The whole graph in memory: 1M x 384-d takes ~2.1 GB; with 1 GB pgvector goes on
        # building on disk from ~490k vectors, ~7x slower (measured: 8k vectors a minute).
        cursor.execute("SET maintenance_work_mem = '3GB'")
        cursor.execute(HNSW_INDEX_SQL)
        cursor.execute("ANALYZE memories_vec")
    return time.perf_counter() - started


def drop_hnsw() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS memories_vec_hnsw")  # built after the load


def _timings_ms(*calls: Callable[[np.ndarray], object], queries: np.ndarray) -> list[np.ndarray]:
    """Milliseconds per query for each call, interleaved query by query after a warm-up.

    Interleaving exposes every call to the same machine conditions, so their
    ratio holds up on a noisy (shared, two-core) machine.
    """
    out: list[list[float]] = [[] for _ in calls]
    for call in calls:
        call(queries[0])
    for query in queries:
        for times, call in zip(out, calls, strict=True):
            start = time.perf_counter()
            call(query)
            times.append((time.perf_counter() - start) * 1000.0)
    return [np.array(times) for times in out]


def _after_a_write_ms(
    queries: np.ndarray, k: int, baseline: Callable[[np.ndarray], object]
) -> tuple[np.ndarray, np.ndarray]:
    """A search right after a new vector was stored (caught up from the change log).

    The numpy baseline is timed alongside, for the same machine conditions.
    """
    from memories.store import vector_index

    searched, alongside = [], []
    for offset, query in enumerate(queries):
        vector_index.upsert([(10**9 + offset, BENCH_NAMESPACE, query)])
        start = time.perf_counter()
        vector_index.search(BENCH_NAMESPACE, query, k)
        middle = time.perf_counter()
        baseline(query)
        searched.append((middle - start) * 1000.0)
        alongside.append((time.perf_counter() - middle) * 1000.0)
    return np.array(searched), np.array(alongside)


def _numpy_top_k(columns: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    """Exact top-k positions over a (dims, n) C-contiguous matrix of unit vectors.

    One vector per column, as the vector cache keeps them: ``query @ columns``
    is ~2x faster here than ``rows @ query`` over the same (n, dims) data.
    """
    scores = query @ columns
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return top[np.argsort(-scores[top])].tolist()


def _cold_load_ms(namespace: str, query: np.ndarray, k: int) -> float:
    """A search on an empty cache: reading the version, loading the namespace, the scan."""
    from memories.store import vector_index

    rounds = []
    for _ in range(LOAD_ROUNDS):
        vector_index.cache_clear()
        start = time.perf_counter()
        vector_index.search(namespace, query, k)
        rounds.append((time.perf_counter() - start) * 1000.0)
    return float(np.median(rounds))


def _public_load_ms(namespace: str) -> float:
    """The same rows through vec0's own SELECT (scans every namespace's vectors)."""
    from django.db import connection

    sql = _PG_PUBLIC_LOAD_SQL if connection.vendor == "postgresql" else _PUBLIC_LOAD_SQL
    start = time.perf_counter()
    with connection.cursor() as cursor:
        rows = cursor.execute(sql, [namespace]).fetchall()
    np.frombuffer(b"".join(bytes(row[1]) for row in rows), dtype=np.uint8)
    return (time.perf_counter() - start) * 1000.0


def _stats(values: np.ndarray) -> tuple[float, float]:
    return float(np.median(values)), float(np.percentile(values, 95))


def _line(name: str, values: np.ndarray) -> str:
    p50, p95 = _stats(values)
    return f"{name:<14}: p50 {p50:.2f} ms, p95 {p95:.2f} ms"


def embedded(texts: list[str]) -> np.ndarray:
    """The configured (hash) embedder's unit vectors of ``texts``, in batches."""
    from spaceduck.core.providers import get_embedder

    embedder = get_embedder()
    if not texts:
        return np.zeros((0, embedder.fingerprint.dimensions), dtype=np.float32)
    parts = [embedder.embed(texts[i : i + 5_000]) for i in range(0, len(texts), 5_000)]
    return np.ascontiguousarray(np.vstack(parts), dtype=np.float32)


def words_of(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` words from a Zipf-like vocabulary: a few common, most rare."""
    ranks = np.minimum(rng.zipf(1.3, size=count), VOCABULARY) - 1
    return [f"w{int(rank):04d}" for rank in ranks]


def texts_of(rng: np.random.Generator, count: int, low: int, high: int) -> list[str]:
    lengths = rng.integers(low, high + 1, size=count)
    words = iter(words_of(rng, int(lengths.sum())))
    return [" ".join(next(words) for _ in range(int(n))) for n in lengths]


def _text_rows(rng: np.random.Generator, count: int, low: int, high: int) -> np.ndarray:
    """The hash embedder's unit vectors of ``count`` Zipf-worded sentences (bench recall's)."""
    return embedded(texts_of(rng, count, low, high))


def _same_answer(
    hits: list[tuple[int, float]], columns: np.ndarray, query: np.ndarray, k: int
) -> bool:
    """``hits`` are the exact top k: numpy's ids, or the same cosines where scores tie."""
    expected = _numpy_top_k(columns, query, k)
    if [i - 1 for i, _ in hits] == expected:
        return True
    return bool(np.allclose([s for _, s in hits], (query @ columns)[expected], atol=1e-6))


def child_main(
    size: int, queries: int, k: int, others: int, spread: int, seed: int, *, texts: bool = False
) -> None:
    setup_child_django()
    from django.db import connection

    from memories.store import vector_index

    postgres = connection.vendor == "postgresql"
    dims = vector_index.table_dimensions() or 384
    rng = np.random.default_rng(seed)

    def rows(count: int, low: int = 6, high: int = 16) -> np.ndarray:
        return _text_rows(rng, count, low, high) if texts else _unit_rows(rng, count, dims)

    matrix = np.ascontiguousarray(rows(size))
    if postgres:
        drop_hnsw()
    started = time.perf_counter()
    _insert(matrix, 1, lambda _: BENCH_NAMESPACE)
    columns = np.ascontiguousarray(matrix.T)  # the baseline's layout, see _numpy_top_k
    _insert(rows(others), size + 1, lambda i: f"user:other-{i % spread:04d}")
    build_s = time.perf_counter() - started
    asked = rows(max(1, queries), 2, 5)

    print(
        f"vectors: {size} in {BENCH_NAMESPACE} + {others} over {spread} other namespaces, "
        f"{dims}d ({'hash-embedded sentences' if texts else 'random'}), k={k}, "
        f"{len(asked)} queries, on {connection.vendor}"
    )
    print(
        f"build: {build_s:.1f} s ({'COPY into pgvector' if postgres else 'executemany into vec0'})"
    )
    if postgres:
        print(f"HNSW index build: {build_hnsw_s():.1f} s (m=16, ef_construction=64)")
        _report_hnsw(asked, columns, k, lambda q: _numpy_top_k(columns, q, k))
    cold, public = _cold_load_ms(BENCH_NAMESPACE, asked[0], k), _public_load_ms(BENCH_NAMESPACE)
    print(f"cache load: {cold:.1f} ms (cold search), public SELECT alone: {public:.1f} ms")
    search, baseline = _timings_ms(
        lambda q: vector_index.search(BENCH_NAMESPACE, q, k),
        lambda q: _numpy_top_k(columns, q, k),
        queries=asked,
    )
    knn_calls = [] if postgres else [lambda q: vector_index.knn(BENCH_NAMESPACE, q, k)]
    knns = _timings_ms(*knn_calls, queries=asked)
    exact = all(
        _same_answer(vector_index.search(BENCH_NAMESPACE, q, k), columns, q, k) for q in asked
    )
    after_write, alongside = _after_a_write_ms(asked[:50], k, lambda q: _numpy_top_k(columns, q, k))
    timed = [("search", search), *(("vec0 knn", v) for v in knns), ("numpy baseline", baseline)]
    for name, values in timed:
        print(_line(name, values))
    print(
        f"{_line('search after a write', after_write)} (numpy alongside: p50 "
        f"{_stats(alongside)[0]:.2f} ms)"
    )
    (s50, s95), (b50, b95) = _stats(search), _stats(baseline)
    print(f"search/baseline: p50 {s50 / b50:.2f}x, p95 {s95 / b95:.2f}x (timed alternately)")
    print(f"exact: {'yes' if exact else 'NO'} (search == numpy top-{k} for every query)")


def _report_hnsw(
    asked: np.ndarray, columns: np.ndarray, k: int, baseline: Callable[[np.ndarray], object]
) -> None:
    """PostgreSQL's HNSW search against the exact answer: latency and recall@k."""
    from django.conf import settings

    from memories.store import vector_index

    index, alongside = _timings_ms(
        lambda q: vector_index.index_scan(BENCH_NAMESPACE, q, k), baseline, queries=asked
    )
    found = 0
    for query in asked:
        exact = set(_numpy_top_k(columns, query, k))
        found += len(exact & {i - 1 for i, _ in vector_index.index_scan(BENCH_NAMESPACE, query, k)})
    print(f"{_line('hnsw index_scan', index)} (ef_search {settings.VECTOR_INDEX_EF_SEARCH})")
    print(_line("numpy alongside", alongside))
    (i50, i95), (b50, b95) = _stats(index), _stats(alongside)
    print(f"hnsw/baseline: p50 {i50 / b50:.2f}x, p95 {i95 / b95:.2f}x (timed alternately)")
    print(f"hnsw recall@{k}: {found / (k * len(asked)):.3f} (share of the exact top {k} found)")


if __name__ == "__main__":
    size, queries, k, others, spread, seed = (int(arg) for arg in sys.argv[1:7])
    child_main(size, queries, k, others, spread, seed, texts=sys.argv[7:8] == ["texts"])
