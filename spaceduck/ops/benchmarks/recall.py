"""Hybrid recall latency at 10k / 100k memories in one namespace, against a bare numpy scan.

``python manage.py bench recall [--sizes 10000,100000] [--others 100000] [--queries 200]``

Each size runs in a child process on a throw-away database (see scratch.py).
The child bulk-inserts N memories into one namespace plus ``--others`` spread
over ``--other-namespaces`` more: short texts drawn from a Zipf-distributed
vocabulary (so the keyword list has realistic, uneven matches) and random
384-d unit vectors. It then times ``recall()`` (both lists, fusion, row loading,
filters, explanations) with the query vectors computed beforehand
(``RecallQuery.vector``), so the embedder is not part of the timing, and,
interleaved query by query, an exact numpy top-k over the namespace's matrix
(one vector per column, the faster layout) built beforehand: the floor for
the vector list alone. Finally it prints the time to embed one query with
the local MiniLM embedder, which a real recall adds on top.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from spaceduck.ops.benchmarks.scratch import Writer, run_child, setup_child_django
from spaceduck.ops.benchmarks.vectors import (
    _numpy_top_k,
    _stats,
    _timings_ms,
    _unit_rows,
    build_hnsw_s,
    copy_vectors,
    drop_hnsw,
    embedded,
    texts_of,
)

BENCH_NAMESPACE = "user:bench"
INSERT_BATCH = 2_000
EMBED_ROUNDS = 20
_VEC_SQL = "INSERT INTO memories_vec(memory_id, namespace, embedding) VALUES (%s, %s, %s)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes", default="10000,100000", help="memories in the recalled namespace"
    )
    parser.add_argument("--queries", type=int, default=200, help="timed queries")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--others", type=int, default=100_000, help="memories in other namespaces")
    parser.add_argument("--other-namespaces", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-embed", action="store_true", help="skip timing the local embedder on one query"
    )
    parser.add_argument(
        "--vectors",
        choices=("random", "texts"),
        default="random",
        help="random unit vectors, or the hash embedder's vectors of the same synthetic texts "
        "(what an approximate index's agreement with the exact scan depends on)",
    )


def run(options: dict[str, Any], stdout: Writer) -> None:
    sizes = [int(size) for size in str(options["sizes"]).split(",") if size.strip()]
    rest = [options["queries"], options["top_k"], options["others"], options["other_namespaces"]]
    for size in sizes:
        args = [str(value) for value in (size, *rest, options["seed"])]
        run_child("spaceduck.ops.benchmarks.recall", [*args, options["vectors"]], stdout)
    if not options["no_embed"]:
        run_child("spaceduck.ops.benchmarks.recall", ["embed"], stdout)


# --- The child ------------------------------------------------------------------------


def _insert(texts: list[str], vectors: np.ndarray, namespace_of: Any) -> None:
    from django.db import connection, transaction

    from memories.models import Memory
    from memories.write.services import content_hash

    for start in range(0, len(texts), INSERT_BATCH):
        batch = texts[start : start + INSERT_BATCH]
        with transaction.atomic():
            rows = Memory.objects.bulk_create(
                Memory(
                    namespace=namespace_of(start + i),
                    kind="fact",
                    content=text,
                    content_hash=content_hash(text),
                )
                for i, text in enumerate(batch)
            )
            params = [
                (m.pk, m.namespace, v)
                for m, v in zip(rows, vectors[start : start + len(batch)], strict=True)
            ]
            if connection.vendor == "postgresql":
                copy_vectors(params)
                continue
            with connection.cursor() as cursor:
                cursor.executemany(_VEC_SQL, [(i, ns, v.tobytes()) for i, ns, v in params])


def child_main(
    size: int, queries: int, top_k: int, others: int, spread: int, seed: int, *, embed: bool = False
) -> None:
    setup_child_django()
    from django.conf import settings
    from django.db import connection

    from memories.recall.hybrid import RecallQuery, recall, vector_depth
    from memories.store import keyword_index, vector_index

    postgres = connection.vendor == "postgresql"
    dims = vector_index.table_dimensions() or 384
    rng = np.random.default_rng(seed)
    if embed:  # the texts' own (hash) vectors
        bench_texts = texts_of(rng, size, 6, 16)
        matrix = embedded(bench_texts)
    else:
        matrix = np.ascontiguousarray(_unit_rows(rng, size, dims))
        bench_texts = texts_of(rng, size, 6, 16)
    if postgres:
        drop_hnsw()  # built once after the load, as an operator would for a bulk import
    started = time.perf_counter()
    _insert(bench_texts, matrix, lambda _: BENCH_NAMESPACE)
    del bench_texts
    other_texts = texts_of(rng, others, 6, 16)
    other_rows = embedded(other_texts) if embed else _unit_rows(rng, others, dims)
    _insert(other_texts, other_rows, lambda i: f"user:other-{i % spread:04d}")
    build_s = time.perf_counter() - started
    # What the periodic maintenance task (and an import) leaves: merged keyword segments
    # (SQLite), every memory keyword-indexed (PostgreSQL); the HNSW index built.
    started = time.perf_counter()
    steps = keyword_index.merge_segments() + keyword_index.catch_up()
    merge_s = time.perf_counter() - started
    hnsw_s = build_hnsw_s() if postgres else 0.0
    if embed:
        texts = texts_of(rng, max(1, queries), 2, 5)
        asked = embedded(texts)
    else:
        asked = _unit_rows(rng, max(1, queries), dims)
    columns = np.ascontiguousarray(matrix.T)  # the baseline's layout, see _numpy_top_k
    del matrix
    if not embed:
        texts = texts_of(rng, len(asked), 2, 5)
    k = vector_depth(top_k)  # what recall asks of the vector list

    print(
        f"recall: {size} memories in {BENCH_NAMESPACE} + {others} over {spread} other "
        f"namespaces ({'hash-embedded texts' if embed else 'random vectors'}), "
        f"{dims}d, top_k={top_k} (vector list k={k}), {len(asked)} queries"
    )
    if postgres:
        print(f"build: {build_s:.1f} s (bulk_create + COPY into pgvector), on postgresql")
        print(f"keyword index catch-up: {merge_s:.1f} s, {steps} memories indexed")
        print(
            f"HNSW index build: {hnsw_s:.1f} s; vector search by HNSW from "
            f"{settings.VECTOR_INDEX_MIN_ROWS} memories a namespace"
        )
    else:
        print(f"build: {build_s:.1f} s (bulk_create + FTS trigger + vec0 executemany)")
        print(f"keyword index merge: {merge_s:.1f} s, {steps} steps (the periodic task's work)")
    vector_index.search(BENCH_NAMESPACE, asked[0], k)  # the cache's cold load, not timed
    hits: list[int] = []

    def hybrid(i: np.ndarray) -> None:
        query = RecallQuery(BENCH_NAMESPACE, texts[int(i)], top_k=top_k, vector=asked[int(i)])
        hits.append(len(recall(query)))

    # The calls get the query's index: the hybrid one needs its text as well as its vector.
    recalled, baseline = _timings_ms(
        hybrid, lambda i: _numpy_top_k(columns, asked[int(i)], k), queries=np.arange(len(asked))
    )
    (r50, r95), (b50, b95) = _stats(recalled), _stats(baseline)
    print(f"recall()       : p50 {r50:.2f} ms, p95 {r95:.2f} ms (query vector precomputed)")
    print(f"numpy baseline : p50 {b50:.2f} ms, p95 {b95:.2f} ms (exact top-{k}, vector only)")
    print(f"recall/numpy   : p50 {r50 / b50:.2f}x, p95 {r95 / b95:.2f}x (timed alternately)")
    print(f"hits per query : mean {np.mean(hits):.1f} (top_k {top_k})")
    first = 1  # the namespace's memories were inserted first: ids 1..size, matrix rows 0..
    found = sum(
        len(
            set(_numpy_top_k(columns, query, k))
            & {i - first for i, _ in vector_index.scan(BENCH_NAMESPACE, query, k).hits}
        )
        for query in asked
    )
    print(f"vector list    : {found / (k * len(asked)):.3f} of the exact top-{k} found")
    reached = sum(_reached(columns, query, k, first) for query in asked)
    print(
        f"vector list    : {reached / (k * len(asked)):.3f} of its hits score at least the "
        f"exact {k}-th cosine (ties at the k-th count as found)"
    )
    print(f"vector scan    : {_scan_path(postgres, size, k)}")


def _reached(columns: np.ndarray, query: np.ndarray, k: int, first: int) -> int:
    """How many of the vector list's hits score at least the exact k-th cosine: the
    agreement that does not count a tie broken the other way as a miss (texts' vectors
    tie often: sentences sharing the same words)."""
    from memories.store import vector_index

    exact = query @ columns
    kth = np.partition(exact, exact.size - k)[exact.size - k]
    hits = [i - first for i, _ in vector_index.scan(BENCH_NAMESPACE, query, k).hits]
    return min(k, int(np.sum(exact[hits] >= kth - 1e-6)))


def _scan_path(postgres: bool, size: int, k: int) -> str:
    """How the vector list was searched at this size (what the agreement above measures)."""
    from django.conf import settings

    from memories.store import vector_index

    if postgres and size >= settings.VECTOR_INDEX_MIN_ROWS:
        return f"pgvector HNSW (ef_search {settings.VECTOR_INDEX_EF_SEARCH})"
    if size >= vector_index.QUANTIZED_MIN_VECTORS:
        return (
            f"int8 codes first, the best {vector_index._shortlist(k, size)} scored exactly "
            "(the process's cached copy)"
        )
    return "exact float32 product (the process's cached copy)"


def embed_main() -> None:
    from spaceduck.core.providers.embeddings.local import LocalMiniLMEmbedder

    embedder = LocalMiniLMEmbedder()
    embedder.embed(["warm the model up"])
    times = []
    for i in range(EMBED_ROUNDS):
        start = time.perf_counter()
        embedder.embed([f"what did Caroline say about the adoption agency {i}?"])
        times.append((time.perf_counter() - start) * 1000.0)
    print(
        f"local embedder, one query: median {np.median(times):.2f} ms, "
        f"p95 {np.percentile(times, 95):.2f} ms ({EMBED_ROUNDS} rounds; add to recall() above)"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["embed"]:
        embed_main()
    else:
        size, queries, top_k, others, spread, seed = (int(arg) for arg in sys.argv[1:7])
        child_main(size, queries, top_k, others, spread, seed, embed=sys.argv[7:8] == ["texts"])
