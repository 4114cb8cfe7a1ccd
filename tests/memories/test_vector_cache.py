"""vector_index.search: the exact in-process cache in front of vec0, and how it stays current.

Most tests are transactional (``transaction=True``): a namespace is cached only
from committed reads, so inside the per-test transaction of ordinary tests the
cache would never fill and the paths that matter here would go untested.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from functools import partial
from io import StringIO
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db import connection, transaction

from memories.models import Memory
from memories.store import vector_index
from memories.write.services import memory_create
from spaceduck.core.db.backend.base import Database, load_sqlite_vec
from spaceduck.core.providers import get_embedder, reset_providers
from tests.processes import service_env

DIMS = 384
ALICE, BOB = "user:alice", "user:bob"
transactional = pytest.mark.django_db(transaction=True)
T = TypeVar("T")


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    vector_index.cache_clear()
    yield
    vector_index.cache_clear()


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The namespaces loaded from vec0, in order (a cache hit or an applied write adds none)."""
    seen: list[str] = []
    real = vector_index._load

    def counting(cursor: Any, namespace: str, version: tuple[int, int]) -> Any:
        seen.append(namespace)
        return real(cursor, namespace, version)

    monkeypatch.setattr(vector_index, "_load", counting)
    return seen


def unit_vectors(rng: np.random.Generator, count: int, dims: int = DIMS) -> np.ndarray:
    vectors = rng.standard_normal((count, dims)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def fill(namespace: str, vectors: np.ndarray) -> dict[int, np.ndarray]:
    """Memory rows (the delete trigger needs them) with the given vectors, by memory id."""
    rows = Memory.objects.bulk_create(
        Memory(namespace=namespace, kind="fact", content=f"m{i}", content_hash=str(i))
        for i in range(len(vectors))
    )
    stored = {memory.pk: vector for memory, vector in zip(rows, vectors, strict=True)}
    vector_index.upsert((memory_id, namespace, v) for memory_id, v in stored.items())
    return stored


def brute_force(stored: dict[int, np.ndarray], query: np.ndarray, k: int) -> list[int]:
    ids = list(stored)
    scores = np.stack([stored[i] for i in ids]) @ (query / np.linalg.norm(query))
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:k]]


def hit_ids(namespace: str, query: np.ndarray, k: int, **kwargs: Any) -> list[int]:
    return [memory_id for memory_id, _ in vector_index.search(namespace, query, k, **kwargs)]


def in_thread(work: Callable[[], T]) -> T:
    """Run ``work`` on another thread, hence on its own database connection."""
    result: list[T] = []

    def target() -> None:
        try:
            result.append(work())
        finally:
            connection.close()

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=60)
    return result[0]


# --- Exactness -----------------------------------------------------------------


@transactional
def test_search_is_exact_brute_force_with_cosine_scores() -> None:
    rng = np.random.default_rng(7)
    stored = fill(ALICE, unit_vectors(rng, 600))
    for query in unit_vectors(rng, 10):
        hits = vector_index.search(ALICE, query, 30)
        assert [memory_id for memory_id, _ in hits] == brute_force(stored, query, 30)
        for memory_id, score in hits:
            assert score == pytest.approx(float(stored[memory_id] @ query), abs=1e-5)


@transactional
def test_search_agrees_with_the_vec0_knn() -> None:
    rng = np.random.default_rng(8)
    fill(ALICE, unit_vectors(rng, 300))
    query = rng.standard_normal(DIMS).astype(np.float32)  # not normalised: cosine all the same
    fast, slow = vector_index.search(ALICE, query, 20), vector_index.knn(ALICE, query, 20)
    assert [i for i, _ in fast] == [i for i, _ in slow]
    assert [s for _, s in fast] == pytest.approx([s for _, s in slow], abs=1e-5)


@pytest.mark.django_db
def test_inside_a_transaction_search_is_exact_without_caching() -> None:
    rng = np.random.default_rng(9)
    stored = fill(ALICE, unit_vectors(rng, 50))
    query = unit_vectors(rng, 1)[0]
    assert hit_ids(ALICE, query, 5) == brute_force(stored, query, 5)
    assert vector_index.cache_info()["namespaces"] == 0  # uncommitted rows are never shared


@transactional
def test_namespaces_are_isolated() -> None:
    rng = np.random.default_rng(10)
    alice, bob = fill(ALICE, unit_vectors(rng, 40)), fill(BOB, unit_vectors(rng, 40))
    query = next(iter(bob.values()))  # Bob's exact vector: Alice must not see it
    assert set(hit_ids(ALICE, query, 100)) == set(alice)
    assert hit_ids(BOB, query, 1) == [next(iter(bob))]


@transactional
def test_candidate_ids_restrict_the_search() -> None:
    rng = np.random.default_rng(11)
    stored = fill(ALICE, unit_vectors(rng, 200))
    fill(BOB, unit_vectors(rng, 20))
    query = unit_vectors(rng, 1)[0]
    few = set(list(stored)[::50])  # a handful: rows are gathered
    many = set(list(stored)[::2])  # most of them: the full product is filtered
    assert hit_ids(ALICE, query, 10, candidate_ids=few) == brute_force(
        {i: stored[i] for i in few}, query, 10
    )
    assert hit_ids(ALICE, query, 10, candidate_ids=many) == brute_force(
        {i: stored[i] for i in many}, query, 10
    )
    bob_only = set(Memory.objects.filter(namespace=BOB).values_list("pk", flat=True))
    assert hit_ids(ALICE, query, 10, candidate_ids=bob_only | {10**9}) == []
    assert hit_ids(ALICE, query, 10, candidate_ids=[]) == []


@transactional
def test_candidate_ids_after_replaced_and_deleted_vectors() -> None:
    """A replaced vector moves to the end of the cached copy (its id out of order, the old
    column dead): a lookup by id finds the new column only, and never a deleted one."""
    rng = np.random.default_rng(16)
    stored = fill(ALICE, unit_vectors(rng, 60))
    query = unit_vectors(rng, 1)[0]
    assert len(hit_ids(ALICE, query, 5)) == 5  # cached now: the changes below are caught up
    ids = list(stored)
    replaced = {i: v for i, v in zip(ids[:3], unit_vectors(rng, 3), strict=True)}
    vector_index.upsert((i, ALICE, v) for i, v in replaced.items())
    vector_index.delete(ids[3:5])
    current = {i: v for i, v in (stored | replaced).items() if i not in ids[3:5]}
    wanted = set(ids[:10]) | {10**9}
    found = dict(vector_index.search(ALICE, query, 100, candidate_ids=wanted))
    assert set(found) == set(ids[:3]) | set(ids[5:10])
    for memory_id, cosine in found.items():
        vector = current[memory_id]
        expected = float(vector @ query / np.linalg.norm(vector) / np.linalg.norm(query))
        assert cosine == pytest.approx(expected, abs=1e-5)


@transactional
def test_a_scan_keeps_every_cosine_for_the_second_stage() -> None:
    """scan(): search's hits, and any memory's cosine read back from the same scores."""
    rng = np.random.default_rng(17)
    stored = fill(ALICE, unit_vectors(rng, 80))
    bob = fill(BOB, unit_vectors(rng, 5))
    query = unit_vectors(rng, 1)[0]
    found = vector_index.scan(ALICE, query, 10)
    assert found.hits == vector_index.search(ALICE, query, 10)
    wanted = set(list(stored)[::7]) | set(bob) | {10**9}
    cosines = found.cosines(wanted)
    assert set(cosines) == set(list(stored)[::7])  # another namespace's or unknown: none
    for memory_id, cosine in cosines.items():
        vector = stored[memory_id]
        expected = float(vector @ query / np.linalg.norm(vector) / np.linalg.norm(query))
        assert cosine == pytest.approx(expected, abs=1e-5)
    assert vector_index.scan("user:nobody", query, 10).cosines(wanted) == {}


@transactional
def test_k_larger_than_the_namespace_returns_everything_best_first() -> None:
    rng = np.random.default_rng(12)
    stored = fill(ALICE, unit_vectors(rng, 7))
    query = unit_vectors(rng, 1)[0]
    assert hit_ids(ALICE, query, 1000) == brute_force(stored, query, 7)
    assert vector_index.search(ALICE, query, 0) == []


@transactional
def test_an_empty_or_unknown_namespace_returns_nothing() -> None:
    query = unit_vectors(np.random.default_rng(13), 1)[0]
    assert vector_index.search("user:nobody", query, 10) == []
    assert vector_index.search("user:nobody", query, 10) == []  # cached empty
    fill(ALICE, unit_vectors(np.random.default_rng(14), 3))
    vector_index.delete(list(Memory.objects.values_list("pk", flat=True)))
    assert vector_index.search(ALICE, query, 10) == []


@transactional
def test_a_first_write_to_a_cached_empty_namespace_is_caught_up(loads: list[str]) -> None:
    cello = get_embedder().embed(["the cello"])[0]
    assert vector_index.search(ALICE, cello, 10) == []
    memory = memory_create(namespace=ALICE, kind="fact", content="the cello", actor="t")
    assert hit_ids(ALICE, cello, 10) == [memory.pk]
    assert loads == [ALICE]


@transactional
def test_a_query_of_the_wrong_dimension_is_an_error() -> None:
    fill(ALICE, unit_vectors(np.random.default_rng(15), 3))
    with pytest.raises(ValueError, match="dimensions"):
        vector_index.search(ALICE, np.ones(DIMS + 1, dtype=np.float32), 3)


# --- This process's writes -------------------------------------------------------


@transactional
def test_own_writes_are_caught_up_without_a_reload(loads: list[str]) -> None:
    rng = np.random.default_rng(20)
    stored = fill(ALICE, unit_vectors(rng, 100))
    query = unit_vectors(rng, 1)[0]
    assert hit_ids(ALICE, query, 5) == brute_force(stored, query, 5)
    assert loads == [ALICE]

    memory = memory_create(namespace=ALICE, kind="fact", content="the cello", actor="t")
    cello = get_embedder().embed(["the cello"])[0]
    assert hit_ids(ALICE, cello, 1) == [memory.pk]
    replaced = next(iter(stored))  # a new vector for an existing memory
    vector_index.upsert([(replaced, ALICE, cello)])
    assert set(hit_ids(ALICE, cello, 2)) == {memory.pk, replaced}
    vector_index.delete([memory.pk])
    assert hit_ids(ALICE, cello, 1) == [replaced]
    assert loads == [ALICE]  # all three were patched in from the change log


@transactional
def test_many_own_deletes_compact_the_copy_and_stay_exact(loads: list[str]) -> None:
    rng = np.random.default_rng(21)
    stored = fill(ALICE, unit_vectors(rng, 400))
    query = unit_vectors(rng, 1)[0]
    vector_index.search(ALICE, query, 1)
    doomed = list(stored)[::2]
    for chunk in range(0, len(doomed), 25):
        vector_index.delete(doomed[chunk : chunk + 25])
    kept = {i: v for i, v in stored.items() if i not in set(doomed)}
    assert hit_ids(ALICE, query, 300) == brute_force(kept, query, 300)
    added = fill(ALICE, unit_vectors(rng, 300))  # grows past the spare capacity
    assert hit_ids(ALICE, query, 30) == brute_force({**kept, **added}, query, 30)
    assert loads == [ALICE]


@transactional
def test_moving_a_vector_to_another_namespace_updates_both() -> None:
    rng = np.random.default_rng(22)
    alice = fill(ALICE, unit_vectors(rng, 10))
    fill(BOB, unit_vectors(rng, 10))
    moved = next(iter(alice))
    query = alice[moved]
    assert hit_ids(ALICE, query, 1) == [moved]
    assert moved not in hit_ids(BOB, query, 100)
    vector_index.upsert([(moved, BOB, query)])
    assert moved not in hit_ids(ALICE, query, 100)
    assert hit_ids(BOB, query, 1) == [moved]


@transactional
def test_deleting_memory_rows_removes_them_from_search(loads: list[str]) -> None:
    rng = np.random.default_rng(23)
    stored = fill(ALICE, unit_vectors(rng, 30))
    ids = list(stored)
    query = stored[ids[0]]
    assert hit_ids(ALICE, query, 1) == [ids[0]]

    Memory.objects.get(pk=ids[0]).delete()  # one row, through the ORM
    assert ids[0] not in hit_ids(ALICE, query, 100)
    Memory.objects.filter(pk__in=ids[1:11]).delete()  # a queryset
    assert set(hit_ids(ALICE, query, 100)) == set(ids[11:])
    assert loads == [ALICE]  # the trigger logged each deletion: caught up, not reloaded


@transactional
def test_own_uncommitted_writes_are_seen_and_a_rollback_leaves_no_trace() -> None:
    rng = np.random.default_rng(24)
    fill(ALICE, unit_vectors(rng, 20))
    cello = get_embedder().embed(["the cello"])[0]
    before = hit_ids(ALICE, cello, 1)

    with transaction.atomic():
        memory = memory_create(namespace=ALICE, kind="fact", content="the cello", actor="t")
        assert hit_ids(ALICE, cello, 1) == [memory.pk]
        transaction.set_rollback(True)
    assert hit_ids(ALICE, cello, 1) == before

    # Another connection now reaches the version number (and the memory id) the
    # rolled-back write had used; the cache must show that write, not the other.
    other = in_thread(
        lambda: memory_create(namespace=ALICE, kind="fact", content="the violin", actor="t").pk
    )
    violin = get_embedder().embed(["the violin"])[0]
    [(best, score)] = vector_index.search(ALICE, violin, 1)
    assert (best, score) == (other, pytest.approx(1.0, abs=1e-5))


@transactional
def test_an_uncommitted_catch_up_leaves_the_shared_copy_untouched() -> None:
    rng = np.random.default_rng(25)
    fill(ALICE, unit_vectors(rng, 20))
    cello = get_embedder().embed(["the cello"])[0]
    hit_ids(ALICE, cello, 1)
    (shared,) = vector_index._CACHE.values()
    spare = (shared.ids[shared.size :].tobytes(), shared.matrix[shared.size :].tobytes())

    with transaction.atomic():
        memory = memory_create(namespace=ALICE, kind="fact", content="the cello", actor="t")
        assert hit_ids(ALICE, cello, 1) == [memory.pk]  # a private, patched copy
        transaction.set_rollback(True)
    assert (shared.ids[shared.size :].tobytes(), shared.matrix[shared.size :].tobytes()) == spare
    assert vector_index._CACHE[vector_index._key(ALICE)] is shared


# --- Writes by others ------------------------------------------------------------


@transactional
def test_a_write_on_another_connection_is_picked_up(loads: list[str]) -> None:
    rng = np.random.default_rng(30)
    fill(ALICE, unit_vectors(rng, 50))
    cello = get_embedder().embed(["the cello"])[0]
    hit_ids(ALICE, cello, 1)
    created = in_thread(
        lambda: memory_create(namespace=ALICE, kind="fact", content="the cello", actor="t").pk
    )
    assert hit_ids(ALICE, cello, 1) == [created]
    in_thread(lambda: Memory.objects.filter(pk=created).delete())
    assert created not in hit_ids(ALICE, cello, 100)
    assert loads == [ALICE]


@transactional
def test_concurrent_searches_and_writes_end_exact() -> None:
    rng = np.random.default_rng(33)
    stored = fill(ALICE, unit_vectors(rng, 200))
    added = unit_vectors(rng, 40)
    query = unit_vectors(rng, 1)[0]
    errors: list[BaseException] = []

    def searcher() -> None:
        try:
            for _ in range(40):
                assert len(hit_ids(ALICE, query, 10)) == 10
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=searcher) for _ in range(3)]
    for thread in threads:
        thread.start()
    for vector in added:
        stored.update(in_thread(partial(fill, ALICE, vector[None, :])))
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert hit_ids(ALICE, query, 50) == brute_force(stored, query, 50)


def foreign_write(memory_id: int, namespace: str, vector: np.ndarray, *, log: bool) -> None:
    """Another process's vector_index.upsert, on a connection this process knows nothing of.

    ``log=False`` leaves the change out of the log, as when it has been pruned.
    """
    raw = Database.connect(str(connection.settings_dict["NAME"]), isolation_level=None)
    try:
        load_sqlite_vec(raw)
        raw.execute("BEGIN IMMEDIATE")
        raw.execute("DELETE FROM memories_vec WHERE memory_id = ?", [memory_id])
        raw.execute(
            "INSERT INTO memories_vec(memory_id, namespace, embedding) VALUES (?, ?, ?)",
            [memory_id, namespace, vector_index.as_blob(vector)],
        )
        (version,) = raw.execute(
            "INSERT INTO memories_vector_version(namespace, version) VALUES (?, 1) "
            "ON CONFLICT(namespace) DO UPDATE SET version = version + 1 RETURNING version",
            [namespace],
        ).fetchone()
        if log:
            raw.execute(
                "INSERT INTO memories_vector_change(namespace, version, memory_id) "
                "VALUES (?, ?, ?)",
                [namespace, version, memory_id],
            )
        raw.execute("COMMIT")
    finally:
        raw.close()


@transactional
@pytest.mark.sqlite_only  # opens the database as a SQLite file
def test_a_foreign_write_is_caught_up_from_the_log(loads: list[str]) -> None:
    rng = np.random.default_rng(32)
    stored = fill(ALICE, unit_vectors(rng, 20))
    query = unit_vectors(rng, 1)[0]
    hit_ids(ALICE, query, 1)
    changed = list(stored)[:2]
    foreign_write(changed[0], ALICE, query, log=True)
    vector_index.upsert([(changed[1], ALICE, -query)])
    assert hit_ids(ALICE, query, 1) == [changed[0]]
    assert hit_ids(ALICE, -query, 1) == [changed[1]]
    assert loads == [ALICE]


@transactional
@pytest.mark.sqlite_only  # opens the database as a SQLite file
def test_a_change_missing_from_the_log_forces_a_reload(loads: list[str]) -> None:
    rng = np.random.default_rng(34)
    stored = fill(ALICE, unit_vectors(rng, 20))
    query = unit_vectors(rng, 1)[0]
    hit_ids(ALICE, query, 1)
    changed = list(stored)[:2]
    foreign_write(changed[0], ALICE, query, log=False)  # e.g. pruned
    vector_index.upsert([(changed[1], ALICE, -query)])  # logged: the gap still shows
    assert hit_ids(ALICE, query, 1) == [changed[0]]
    assert hit_ids(ALICE, -query, 1) == [changed[1]]
    assert loads == [ALICE, ALICE]


@transactional
def test_a_long_gap_reloads_and_the_log_is_pruned(
    monkeypatch: pytest.MonkeyPatch, loads: list[str]
) -> None:
    monkeypatch.setattr(vector_index, "MAX_CATCH_UP", 2)
    monkeypatch.setattr(vector_index, "LOG_VERSIONS", 3)
    rng = np.random.default_rng(35)
    stored = fill(ALICE, unit_vectors(rng, 10))
    query = unit_vectors(rng, 1)[0]
    hit_ids(ALICE, query, 1)
    for memory_id, vector in zip(stored, unit_vectors(rng, 3), strict=False):
        vector_index.upsert([(memory_id, ALICE, vector)])
        stored[memory_id] = vector
    assert hit_ids(ALICE, query, 10) == brute_force(stored, query, 10)
    assert loads == [ALICE, ALICE]  # three versions behind: more than MAX_CATCH_UP
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(DISTINCT version) FROM memories_vector_change WHERE namespace = %s",
            [ALICE],
        )
        assert cursor.fetchone()[0] == 3


WRITER_SCRIPT = """
import sys
import django
django.setup()
from memories.models import Memory
from memories.write.services import memory_create
if sys.argv[1] == "create":
    print(memory_create(namespace="user:alice", kind="fact", content="the cello", actor="t").pk)
else:
    Memory.objects.filter(pk=int(sys.argv[2])).delete()
"""


def other_process(tmp_path: Path, *args: str) -> str:
    env = service_env(tmp_path, SPACEDUCK_DATABASE_PATH=str(connection.settings_dict["NAME"]))
    result = subprocess.run(
        [sys.executable, "-c", WRITER_SCRIPT, *args],
        env=env,
        cwd=django_settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.slow
@transactional
@pytest.mark.sqlite_only  # opens the database as a SQLite file
def test_a_write_by_another_process_is_picked_up(tmp_path: Path, loads: list[str]) -> None:
    rng = np.random.default_rng(31)
    fill(ALICE, unit_vectors(rng, 50))
    cello = get_embedder().embed(["the cello"])[0]
    hit_ids(ALICE, cello, 1)
    assert hit_ids(ALICE, cello, 1) != []
    assert loads == [ALICE]

    created = int(other_process(tmp_path, "create"))
    assert hit_ids(ALICE, cello, 1) == [created]
    other_process(tmp_path, "delete", str(created))
    assert created not in hit_ids(ALICE, cello, 100)
    assert loads == [ALICE]  # both foreign writes were caught up from the change log


# --- Reindex, loading, memory bound ----------------------------------------------


@transactional
def test_reindex_to_another_dimension_invalidates_the_cache(settings) -> None:  # type: ignore[no-untyped-def]
    texts = ["Alice plays the cello.", "Alice works at CERN.", "Alice is allergic to peanuts."]
    ids = [memory_create(namespace=ALICE, kind="fact", content=t, actor="t").pk for t in texts]
    assert hit_ids(ALICE, get_embedder().embed(["cello"])[0], 1) == [ids[0]]
    original = settings.SPACEDUCK_EMBEDDINGS
    try:
        settings.SPACEDUCK_EMBEDDINGS = {**original, "dimensions": 64}
        reset_providers()
        call_command("reindex", "--no-progress", stdout=StringIO())
        assert hit_ids(ALICE, get_embedder().embed(["CERN"])[0], 1) == [ids[1]]
    finally:  # the table outlives this test's flush: put back the suite's 384-d table
        settings.SPACEDUCK_EMBEDDINGS = original
        reset_providers()
        call_command("reindex", "--no-progress", stdout=StringIO())
    assert vector_index.table_dimensions() == DIMS


@transactional
@pytest.mark.sqlite_only
def test_the_shadow_table_reader_matches_the_public_select() -> None:
    rng = np.random.default_rng(40)
    alice = fill(ALICE, unit_vectors(rng, 301))
    fill(BOB, unit_vectors(rng, 57))
    vector_index.delete(list(alice)[::3])  # holes in the chunks' validity bitmaps
    vector_index.upsert([([*alice][1], ALICE, unit_vectors(rng, 1)[0])])  # a replaced row
    dims = vector_index.table_dimensions()
    assert dims == DIMS
    with connection.cursor() as cursor:
        assert vector_index._shadow_readable(cursor)
        for namespace in (ALICE, BOB, "user:nobody"):
            shadow = vector_index._read_shadow(cursor, namespace, dims)
            assert shadow is not None
            public = vector_index._read_public(cursor, namespace)
            assert as_dict(shadow) == as_dict(public)


def as_dict(parts: list[tuple[np.ndarray, np.ndarray]]) -> dict[int, bytes]:
    return {int(i): row.tobytes() for ids, rows in parts for i, row in zip(ids, rows, strict=True)}


@transactional
def test_the_cache_evicts_the_least_recently_searched_namespaces(
    monkeypatch: pytest.MonkeyPatch, loads: list[str]
) -> None:
    rng = np.random.default_rng(41)
    namespaces = [f"user:n{i}" for i in range(4)]
    for namespace in namespaces:
        fill(namespace, unit_vectors(rng, 10))
    # Each copy holds 10 rows plus 256 spare: room for three.
    monkeypatch.setattr(vector_index, "MAX_CACHED_VECTORS", 3 * 266)
    query = unit_vectors(rng, 1)[0]
    for namespace in [*namespaces[:3], namespaces[0], namespaces[3]]:
        vector_index.search(namespace, query, 1)
    assert vector_index.cache_info() == {"namespaces": 3, "vectors": 3 * 266}
    vector_index.search(namespaces[0], query, 1)  # recently used: kept
    vector_index.search(namespaces[1], query, 1)  # least recently used: was evicted
    assert loads == [*namespaces[:3], namespaces[3], namespaces[1]]


# --- The benchmark -----------------------------------------------------------------

NUMBER = r"\d+(\.\d+)?"


@pytest.mark.slow
def test_bench_vectors_prints_load_search_knn_and_baseline_timings() -> None:
    out = StringIO()
    call_command(
        "bench", "vectors", "--sizes", "300", "--queries", "5", "--others", "400", stdout=out
    )
    text = out.getvalue()
    assert re.search(rf"cache load: {NUMBER} ms", text), text
    for name in ("search", "vec0 knn", "numpy baseline"):
        assert re.search(rf"{name}\s*: p50 {NUMBER} ms, p95 {NUMBER} ms", text), text
    assert re.search(rf"search/baseline: p50 {NUMBER}x, p95 {NUMBER}x", text), text
    assert "exact: yes" in text


@transactional
def test_writes_committed_during_a_load_are_applied_and_the_copy_kept(
    monkeypatch: pytest.MonkeyPatch, loads: list[str]
) -> None:
    """Another process writing while a large namespace loads must not make every
    search load it again: the load is brought up to date from the log and cached."""
    rng = np.random.default_rng(41)
    stored = fill(ALICE, unit_vectors(rng, 40))
    query = unit_vectors(rng, 1)[0]
    counting = vector_index._load
    written: list[int] = []

    def load_while_others_write(cursor: Any, namespace: str, version: tuple[int, int]) -> Any:
        snapshot = counting(cursor, namespace, version)
        if not written:  # a new memory and a changed one commit on another connection
            created = in_thread(
                lambda: memory_create(namespace=ALICE, kind="fact", content="x", actor="t").pk
            )
            in_thread(lambda: vector_index.upsert([(created, ALICE, query)]))
            in_thread(lambda: vector_index.upsert([(next(iter(stored)), ALICE, -query)]))
            written.append(created)
        return snapshot

    monkeypatch.setattr(vector_index, "_load", load_while_others_write)
    assert hit_ids(ALICE, query, 1) == written  # the write made during the load
    assert hit_ids(ALICE, -query, 1) == [next(iter(stored))]
    assert hit_ids(ALICE, query, 1) == written
    assert loads == [ALICE]  # loaded once, then served from the cache


@transactional
def test_the_answer_does_not_depend_on_where_the_copy_holds_each_vector() -> None:
    """An import, a reload or a copy caught up from the log holds the same vectors in
    another order; the hits and their cosines must not change (BLAS rounds a column by its
    place, and ties used to go to whichever column came first)."""
    rng = np.random.default_rng(21)
    base = unit_vectors(rng, 40)
    vectors = np.concatenate([base[rng.integers(0, 40, 2000)], unit_vectors(rng, 1000)])
    stored = fill(ALICE, vectors)  # 2,000 of them duplicates of 40: ties everywhere
    query = base[0] + 0.3 * unit_vectors(rng, 1)[0]
    ids = list(stored)

    def answer() -> tuple[list[tuple[int, float]], dict[int, float]]:
        found = vector_index.scan(ALICE, query, 30)
        return found.hits, found.cosines(ids)

    loaded = answer()
    # The same vectors written again in a shuffled order: the cached copy catches up by
    # appending them (other places), and a reload reads the table in its new order.
    moved = [ids[i] for i in rng.permutation(len(ids))[:1500]]
    vector_index.upsert((memory_id, ALICE, stored[memory_id]) for memory_id in moved)
    caught_up = answer()
    vector_index.cache_clear()
    reloaded = answer()
    assert caught_up == loaded
    assert reloaded == loaded
    hits = loaded[0]
    tied = [(a, b) for a, b in itertools.pairwise(hits) if a[1] == b[1]]
    assert tied, "the data must hold ties at the top for this test to mean anything"
    assert all(a[0] > b[0] for a, b in tied)  # a tie goes to the newer memory
    expected = {i: float(stored[i] @ query) / float(np.linalg.norm(query)) for i in ids[:50]}
    assert {i: loaded[1][i] for i in ids[:50]} == pytest.approx(expected, abs=1e-6)
