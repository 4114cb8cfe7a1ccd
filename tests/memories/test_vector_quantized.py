"""The quantized first pass of the vector scan: int8 codes rank the namespace, the
shortlist is scored exactly. The thresholds are lowered here so small namespaces take it."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from memories.store import vector_index
from memories.write.services import memory_create
from spaceduck.core.providers import get_embedder
from tests.memories.test_vector_cache import (
    ALICE,
    brute_force,
    fill,
    hit_ids,
    transactional,
    unit_vectors,
)

pytestmark = transactional


@pytest.fixture(autouse=True)
def quantized(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(vector_index, "QUANTIZED_MIN_VECTORS", 300)
    monkeypatch.setattr(vector_index, "_SHORTLIST_MIN", 16)
    vector_index.cache_clear()
    yield
    vector_index.cache_clear()


def cached(namespace: str) -> vector_index._Snapshot:
    return vector_index._CACHE[vector_index._key(namespace)]


def test_the_codes_rank_and_the_shortlist_is_scored_exactly() -> None:
    rng = np.random.default_rng(31)
    stored = fill(ALICE, unit_vectors(rng, 3000))
    found = total = 0
    for query in unit_vectors(rng, 20):
        hits = vector_index.search(ALICE, query, 10)
        exact = brute_force(stored, query, 10)
        found += len({i for i, _ in hits} & set(exact))
        total += len(exact)
        for memory_id, score in hits:  # the scores are the exact cosines, never estimates
            assert score == pytest.approx(float(stored[memory_id] @ query), abs=1e-6)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert cached(ALICE).codes is not None
    assert found / total >= 0.99


def test_scan_keeps_every_cosine_for_the_second_stage() -> None:
    rng = np.random.default_rng(32)
    stored = fill(ALICE, unit_vectors(rng, 1000))
    query = unit_vectors(rng, 1)[0]
    scan = vector_index.scan(ALICE, query, 10)
    far = list(stored)[:50]  # most of them outside the shortlist
    cosines = scan.cosines(far)
    assert cosines == pytest.approx({i: float(stored[i] @ query) for i in far}, abs=1e-6)


def test_appends_replacements_and_deletes_keep_the_codes_in_step() -> None:
    rng = np.random.default_rng(33)
    stored = fill(ALICE, unit_vectors(rng, 400))
    query = unit_vectors(rng, 1)[0]
    vector_index.search(ALICE, query, 5)
    before = cached(ALICE).codes
    assert before is not None

    memory = memory_create(namespace=ALICE, kind="fact", content="the cello", actor="t")
    cello = get_embedder().embed(["the cello"])[0]
    assert hit_ids(ALICE, cello, 1) == [memory.pk]
    replaced = next(iter(stored))
    vector_index.upsert([(replaced, ALICE, cello)])
    assert set(hit_ids(ALICE, cello, 2)) == {memory.pk, replaced}
    vector_index.delete([memory.pk])
    assert hit_ids(ALICE, cello, 1) == [replaced]
    added = fill(ALICE, unit_vectors(rng, 700))  # grows past the spare capacity
    both = {**{i: v for i, v in stored.items() if i != replaced}, **added, replaced: cello}
    hits = hit_ids(ALICE, query, 10)
    assert len(set(hits) & set(brute_force(both, query, 10))) >= 9
    assert memory.pk not in hit_ids(ALICE, cello, 1100)  # a deleted row never comes back


def test_a_namespace_growing_past_the_threshold_gets_its_codes() -> None:
    rng = np.random.default_rng(34)
    stored = fill(ALICE, unit_vectors(rng, 200))
    query = unit_vectors(rng, 1)[0]
    vector_index.search(ALICE, query, 5)
    assert cached(ALICE).codes is None  # small: the float32 product alone
    stored |= fill(ALICE, unit_vectors(rng, 200))
    assert hit_ids(ALICE, query, 5) == brute_force(stored, query, 5)
    assert cached(ALICE).codes is not None


def test_codes_estimate_each_cosine_closely() -> None:
    rng = np.random.default_rng(35)
    vectors = unit_vectors(rng, 500)
    matrix = np.ascontiguousarray(vectors)  # one vector per row, as a snapshot holds them
    codes = vector_index._Codes.of(matrix, 500)
    query = unit_vectors(rng, 1)[0]
    estimates = codes.scores(query, 500)
    exact = vectors @ query
    # Up to the query's own (positive) scale: compare after fitting it.
    factor = float(estimates @ exact / (estimates @ estimates))
    assert np.max(np.abs(estimates * factor - exact)) < 5e-3


@pytest.mark.parametrize("take", [64, 122, 300])
def test_the_sampled_bound_keeps_exactly_the_best(take: int) -> None:
    """A million scores: the sample's bound only narrows where the partition looks."""
    rng = np.random.default_rng(36)
    scores = rng.standard_normal(1_000_000).astype(np.float32)
    scores[rng.integers(0, scores.size, 1000)] = -np.inf  # dead rows
    best = vector_index._best_positions(scores, take)
    expected = np.argpartition(scores, scores.size - take)[scores.size - take :]
    assert sorted(scores[best].tolist()) == sorted(scores[expected].tolist())
    assert len(set(best.tolist())) == take


def test_the_shortlist_grows_with_the_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector_index, "_SHORTLIST_MIN", 64)  # the shipped value
    assert vector_index._shortlist(20, 100_000) == 64
    assert vector_index._shortlist(20, 1_000_000) == 122
    assert vector_index._shortlist(50, 0) == 150
