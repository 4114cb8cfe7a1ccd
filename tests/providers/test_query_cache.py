"""Recall's cache of query vectors: same embedder and text hit, anything else embeds."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from memories.recall.hybrid import RecallQuery, recall
from memories.write.services import memory_create
from spaceduck.core.providers import QUERY_CACHE, get_embedder, query_vector, reset_providers
from spaceduck.core.providers.embeddings.base import Fingerprint
from spaceduck.core.providers.embeddings.hashing import HashEmbedder
from spaceduck.core.providers.embeddings.query_cache import SIZE, QueryCache


class Counting:
    """A hash embedder that counts the texts it embeds."""

    def __init__(self, dimensions: int = 384) -> None:
        self._inner = HashEmbedder(dimensions=dimensions)
        self.fingerprint: Fingerprint = self._inner.fingerprint
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self._inner.embed(texts)


def test_a_question_asked_again_is_not_embedded_again() -> None:
    cache, embedder = QueryCache(), Counting()
    first = cache.vector(embedder, "where does Ada live?")
    again = cache.vector(embedder, "where does Ada live?")
    assert embedder.texts == ["where does Ada live?"]
    np.testing.assert_array_equal(again, first)
    np.testing.assert_array_equal(first, HashEmbedder().embed(["where does Ada live?"])[0])


def test_another_text_is_embedded() -> None:
    cache, embedder = QueryCache(), Counting()
    cache.vector(embedder, "where does Ada live?")
    cache.vector(embedder, "Where does Ada live?")  # not the same text: case matters to a model
    assert embedder.texts == ["where does Ada live?", "Where does Ada live?"]


def test_another_fingerprint_misses() -> None:
    cache, small, large = QueryCache(), Counting(dimensions=64), Counting(dimensions=384)
    assert small.fingerprint != large.fingerprint
    assert cache.vector(small, "tea").shape == (64,)
    assert cache.vector(large, "tea").shape == (384,)
    assert (small.texts, large.texts) == (["tea"], ["tea"])


def test_another_embedder_with_the_same_fingerprint_misses() -> None:
    # An embedder rebuilt for other settings, or a stand-in, may share the fingerprint.
    cache, old, new = QueryCache(), Counting(), Counting()
    assert old.fingerprint == new.fingerprint
    cache.vector(old, "tea")
    cache.vector(new, "tea")
    assert (old.texts, new.texts) == (["tea"], ["tea"])


def test_it_keeps_the_most_recently_used_up_to_its_size() -> None:
    cache, embedder = QueryCache(size=3), Counting()
    for text in ("a", "b", "c"):
        cache.vector(embedder, text)
    cache.vector(embedder, "a")  # now the most recent: "b" is the least
    cache.vector(embedder, "d")
    assert len(cache) == 3
    embedder.texts.clear()
    for text in ("a", "c", "d", "b"):
        cache.vector(embedder, text)
    assert embedder.texts == ["b"]
    assert len(cache) == 3


def test_the_process_cache_is_bounded() -> None:
    assert QUERY_CACHE.size == SIZE == 1024


def test_a_cached_vector_cannot_be_changed_by_a_caller() -> None:
    vector = QueryCache().vector(Counting(), "tea")
    with pytest.raises(ValueError, match="read-only"):
        vector *= 2


def test_threads_asking_at_once_get_the_right_vectors_and_the_bound_holds() -> None:
    cache, embedder = QueryCache(size=8), Counting()
    texts = [f"question {i % 20}" for i in range(400)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        vectors = list(pool.map(lambda text: cache.vector(embedder, text), texts))
    expected = HashEmbedder().embed(texts)
    np.testing.assert_array_equal(np.stack(vectors), expected)
    assert len(cache) == 8


@pytest.mark.django_db  # get_embedder reads Settings > Memory's embedder
def test_reset_providers_empties_the_cache() -> None:
    query_vector(get_embedder(), "tea")
    assert len(QUERY_CACHE) > 0
    reset_providers()
    assert len(QUERY_CACHE) == 0


@pytest.mark.django_db
def test_recall_embeds_a_repeated_question_once(monkeypatch: pytest.MonkeyPatch) -> None:
    reset_providers()
    embedder = Counting()
    monkeypatch.setattr("memories.recall.hybrid.get_embedder", lambda: embedder)
    memory_create(namespace="user:alice", kind="fact", actor="t", content="Alice drinks tea.")
    for _ in range(3):
        hits = recall(RecallQuery(namespace="user:alice", text="what does Alice drink?"))
        assert [hit.memory.content for hit in hits] == ["Alice drinks tea."]
    assert embedder.texts == ["what does Alice drink?"]
    reset_providers()
