"""The vector index behaves the same on SQLite (vec0) and PostgreSQL (pgvector): `make test`
runs it on both."""

from __future__ import annotations

import numpy as np
import pytest

from memories.models import Memory
from memories.store import vector_index
from memories.write.services import memory_create
from spaceduck.core.providers import get_embedder

pytestmark = pytest.mark.django_db


def add(content: str, namespace: str = "user:alice") -> Memory:
    return memory_create(namespace=namespace, kind="fact", content=content, actor="test")


def embed(text: str) -> np.ndarray:
    return get_embedder().embed([text])[0]


def test_the_nearest_memory_comes_first_and_namespaces_stay_apart() -> None:
    violin = add("Alice plays the violin every Sunday.")
    add("Alice's flat is in Lisbon.")
    other = add("Bob plays the violin too.", namespace="user:bob")
    found = vector_index.search("user:alice", embed("Alice plays the violin every Sunday."), 5)
    assert found[0][0] == violin.pk
    assert found[0][1] == pytest.approx(1.0, abs=1e-5)
    assert other.pk not in {memory_id for memory_id, _ in found}
    # The database's own nearest-neighbour query agrees with the in-process scan.
    knn = vector_index.knn("user:alice", embed("Alice plays the violin every Sunday."), 5)
    assert [i for i, _ in knn] == [i for i, _ in found]
    assert [s for _, s in knn] == pytest.approx([s for _, s in found], abs=1e-5)


def test_stored_vectors_read_back_exactly_as_float32_bytes() -> None:
    memory = add("Alice keeps bees on her roof.")
    stored = np.frombuffer(vector_index.stored_blobs([memory.pk])[memory.pk], dtype=np.float32)
    expected = embed("Alice keeps bees on her roof.")
    assert stored.shape == (vector_index.table_dimensions(),)
    assert np.allclose(stored / np.linalg.norm(stored), expected / np.linalg.norm(expected))


def test_a_deleted_memory_leaves_the_index_and_every_cached_copy() -> None:
    keep, gone = add("Alice runs on Mondays."), add("Alice swims on Fridays.")
    query = embed("Alice swims on Fridays.")
    assert vector_index.search("user:alice", query, 5)[0][0] == gone.pk  # now cached
    Memory.objects.filter(pk=gone.pk).delete()  # the database's trigger, not Python
    assert [i for i, _ in vector_index.search("user:alice", query, 5)] == [keep.pk]
    assert vector_index.count_rows() == 1


def test_a_replaced_vector_is_searched_by_its_new_value() -> None:
    memory = add("Alice drinks green tea.")
    vector_index.search("user:alice", embed("tea"), 5)
    vector_index.upsert([(memory.pk, "user:alice", embed("Alice drinks black coffee."))])
    found = vector_index.search("user:alice", embed("Alice drinks black coffee."), 1)
    assert found[0] == (memory.pk, pytest.approx(1.0, abs=1e-5))


TEXTS = [
    "Alice plays the violin every Sunday.",
    "Alice's flat is in Lisbon.",
    "Alice keeps bees on her roof.",
    "Alice is learning Portuguese.",
    "Alice cycles to work.",
    "Alice's sister lives in Porto.",
]


def test_large_namespaces_are_searched_through_the_hnsw_index_with_the_same_answers(
    settings,  # type: ignore[no-untyped-def]
) -> None:
    from django.db import connection

    ids = [add(text).pk for text in TEXTS]
    add("Bob plays the violin too.", namespace="user:bob")
    query = embed("Who plays the violin on Sundays?")
    vector_index.cache_clear()
    exact = vector_index.scan("user:alice", query, 4)
    exact_cosines = exact.cosines(ids)

    settings.VECTOR_INDEX_MIN_ROWS = 3  # user:alice (6) is "large", user:bob (1) is not
    assert vector_index.ensure_index() == (connection.vendor == "postgresql")  # built now
    vector_index.cache_clear()
    through_index = vector_index.scan("user:alice", query, 4)
    if connection.vendor == "postgresql":
        assert vector_index.cache_info()["vectors"] == 0  # nothing copied into this process
    assert [i for i, _ in through_index.hits] == [i for i, _ in exact.hits]
    assert [s for _, s in through_index.hits] == pytest.approx([s for _, s in exact.hits], abs=1e-5)
    assert through_index.cosines(ids) == pytest.approx(exact_cosines, abs=1e-5)
    some = set(ids[2:5])
    best_two = sorted(some, key=lambda i: (-exact_cosines[i], -i))[:2]  # ties: newer first
    found = vector_index.search("user:alice", query, 2, candidate_ids=some)
    assert [i for i, _ in found] == best_two
    assert [s for _, s in found] == pytest.approx([exact_cosines[i] for i in best_two], abs=1e-5)
    assert [i for i, _ in vector_index.scan("user:bob", query, 4).hits] != []
    with pytest.raises(vector_index.DimensionMismatch):
        vector_index.scan("user:alice", query[:10], 4)


@pytest.mark.django_db(transaction=True)  # a copy read inside a transaction is not kept
def test_a_copied_namespace_is_searched_with_one_statement_until_it_reaches_the_bound(
    settings,  # type: ignore[no-untyped-def]
) -> None:
    """The copy's counters, the namespace's size (PostgreSQL) and the changes past the copy
    are read by one statement: the copy stays exact, and the search moves to the index
    once the namespace reaches VECTOR_INDEX_MIN_ROWS."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for text in TEXTS[:2]:
        add(text)
    query = embed("Who plays the violin on Sundays?")
    settings.VECTOR_INDEX_MIN_ROWS = 3
    vector_index.cache_clear()
    assert len(vector_index.scan("user:alice", query, 4).hits) == 2  # counted: 2, copied

    def statements() -> list[str]:
        with CaptureQueriesContext(connection) as queries:
            found = vector_index.scan("user:alice", query, 4).hits
        assert sorted(i for i, _ in found) == sorted(i for i, _ in exact())
        return [q["sql"] for q in queries]

    def exact() -> list[tuple[int, float]]:
        return vector_index.knn("user:alice", query, 4)

    assert len(statements()) == 1  # the copy (2 < 3) answers
    for text in TEXTS[2:4]:
        add(text)
    searched = statements()  # exact still
    if connection.vendor == "postgresql":
        # 4 >= 3, read in the same statement: searched through the index at once
        assert any("hnsw.ef_search" in str(sql) for sql in searched)
        assert vector_index.cache_info()["namespaces"] == 1  # the copy is left, unused
    else:
        assert not any("hnsw" in str(sql) for sql in searched)  # SQLite: the copy, caught up


def test_the_hnsw_index_is_built_only_once_a_namespace_needs_it(
    settings,  # type: ignore[no-untyped-def]
) -> None:
    """PostgreSQL keeps no HNSW graph (every vector insert would update it) until a
    namespace reaches VECTOR_INDEX_MIN_ROWS; the maintenance task then builds it once."""
    from django.db import connection

    from memories.tasks import index_large_namespaces

    def exists() -> bool:
        if connection.vendor != "postgresql":
            return False
        with connection.cursor() as cursor:
            cursor.execute("SELECT to_regclass('memories_vec_hnsw') IS NOT NULL")
            return bool(cursor.fetchone()[0])

    for text in TEXTS[:3]:
        add(text)
    assert not exists()  # the migrations leave none
    assert vector_index.ensure_index() is False  # 3 memories, the bound 1.5M
    assert not exists()
    settings.VECTOR_INDEX_MIN_ROWS = 3
    assert index_large_namespaces.call_local() == (connection.vendor == "postgresql")
    assert exists() == (connection.vendor == "postgresql")
    assert vector_index.ensure_index() is False  # already there
