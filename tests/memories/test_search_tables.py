"""FTS5 and vec0 rows follow inserts, updates and deletes of memories."""

from __future__ import annotations

import pytest
from django.db import connection

from memories.models import Memory, MemoryEvent
from memories.store import keyword_index, vector_index
from memories.write.lifecycle import memory_edit
from memories.write.services import memory_create, memory_delete
from spaceduck.core.providers import get_embedder
from tests.memories.keyword_rows import assert_sound

pytestmark = pytest.mark.django_db


def fts_ids(query: str, namespace: str = "user:alice") -> list[int]:
    return keyword_index.matching_ids(namespace, query)


def vector_ids(namespace: str) -> list[int]:
    with connection.cursor() as cursor:
        rows = cursor.execute(
            "SELECT memory_id FROM memories_vec WHERE namespace = %s ORDER BY memory_id",
            [namespace],
        ).fetchall()
    return [row[0] for row in rows]


def fts_integrity_ok() -> None:
    assert_sound()


def test_insert_adds_fts_and_vector_rows() -> None:
    memory = memory_create(
        namespace="user:alice",
        kind="fact",
        content="Alice lives in Lisbon.",
        title="Home",
        tags=["location"],
        actor="test",
    )
    assert fts_ids("lisbon") == [memory.pk]
    assert fts_ids("home") == [memory.pk]
    assert fts_ids("location") == [memory.pk]
    assert vector_ids("user:alice") == [memory.pk]
    fts_integrity_ok()


def test_update_replaces_the_indexed_text_and_the_vector() -> None:
    memory = memory_create(
        namespace="user:alice", kind="fact", content="Alice likes tea.", actor="t"
    )
    memory_edit(memory=memory, changes={"content": "Alice likes strong coffee."}, actor="t")
    assert fts_ids("tea") == []
    assert fts_ids("coffee") == [memory.pk]
    hits = vector_index.knn(
        "user:alice", get_embedder().embed(["Alice likes strong coffee."])[0], 1
    )
    assert hits[0][0] == memory.pk
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    fts_integrity_ok()


def test_delete_removes_fts_and_vector_rows_and_keeps_a_tombstone() -> None:
    memory = memory_create(
        namespace="user:alice", kind="fact", content="Alice owns a cat.", actor="t"
    )
    memory_id = memory.pk
    memory_delete(memory=memory, actor="t", reason="test")
    assert fts_ids("cat") == []
    assert vector_ids("user:alice") == []
    assert not Memory.objects.filter(pk=memory_id).exists()
    events = list(MemoryEvent.objects.filter(memory_id=memory_id).values_list("event", flat=True))
    assert events == ["deleted"]  # the history becomes the tombstone (issue 37)
    fts_integrity_ok()


def test_a_queryset_delete_also_removes_index_rows() -> None:
    # The triggers, not the service, own the index rows: bulk deletes stay consistent.
    for text in ("one apple", "two apples", "three pears"):
        memory_create(namespace="user:alice", kind="fact", content=text, actor="t")
    Memory.objects.filter(content__contains="apple").delete()
    assert len(fts_ids("pears")) == 1
    assert fts_ids("apple") == []
    assert len(vector_ids("user:alice")) == 1
    fts_integrity_ok()


def test_vector_search_is_per_namespace() -> None:
    alice = memory_create(namespace="user:alice", kind="fact", content="I love sailing", actor="t")
    memory_create(namespace="user:bob", kind="fact", content="I love sailing", actor="t")
    query = get_embedder().embed(["sailing"])[0]
    assert [memory_id for memory_id, _ in vector_index.knn("user:alice", query, 10)] == [alice.pk]


def test_the_keyword_index_folds_case_and_diacritics_and_keeps_namespaces_apart() -> None:
    memory = memory_create(
        namespace="user:alice", kind="fact", content="Alice's CAFÉ is in Zürich.", actor="t"
    )
    memory_create(namespace="user:bob", kind="fact", content="Bob's cafe is in Zurich.", actor="t")
    assert fts_ids("cafe zurich") == [memory.pk]
    assert fts_ids("Café") == [memory.pk]
    # The namespace is not text in the index: its words match nothing.
    assert fts_ids("alice") == [memory.pk]
    assert fts_ids("user") == []
    fts_integrity_ok()


def test_moving_a_memory_to_another_namespace_moves_its_index_terms() -> None:
    memory = memory_create(namespace="user:alice", kind="fact", content="Alice sails.", actor="t")
    Memory.objects.filter(pk=memory.pk).update(namespace="user:carol")
    assert fts_ids("sails") == []
    assert fts_ids("sails", namespace="user:carol") == [memory.pk]
    fts_integrity_ok()


def test_context_is_keyword_indexed_but_not_embedded() -> None:
    memory = memory_create(
        namespace="user:alice",
        kind="fact",
        content="Alice prefers the aisle.",
        context="Window or aisle seat for the Lisbon flight?",
        actor="t",
    )
    assert fts_ids("lisbon flight") == [memory.pk]
    own = get_embedder().embed(["Alice prefers the aisle."])[0]
    (best,) = vector_index.knn("user:alice", own, 1)
    assert best == (memory.pk, pytest.approx(1.0, abs=1e-5))  # the vector is the content's
    Memory.objects.filter(pk=memory.pk).update(context="")
    assert fts_ids("lisbon") == []
    fts_integrity_ok()


def fts_config(name: str, value: int) -> None:
    with connection.cursor() as cursor:
        sql = "INSERT INTO memories_fts(memories_fts, rank) VALUES (%s, %s)"
        cursor.execute(sql, [name, value])


def fts_pages() -> int:
    """Rows of FTS5's %_data table: a structure record plus each segment's leaf pages."""
    with connection.cursor() as cursor:
        return int(cursor.execute("SELECT count(*) FROM memories_fts_data").fetchone()[0])


@pytest.mark.django_db(transaction=True)
@pytest.mark.sqlite_only  # FTS5's segments; PostgreSQL's GIN index has none to merge
def test_merging_the_keyword_segments_keeps_every_answer() -> None:
    """Each committed write leaves its own FTS5 segment; merging them changes no result."""
    words = ["kite", "lisbon", "violin", "garden", "coffee"]
    # FTS5 merges segments by itself (automerge: 4 of a level; crisismerge: 16), which would
    # leave a number depending on the tests before. From an empty index (deletes by earlier
    # tests leave segments too) with both off, each write keeps its own segment.
    assert not Memory.objects.exists()
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO memories_fts(memories_fts) VALUES ('delete-all')")
    fts_config("automerge", 0)
    fts_config("crisismerge", 1000)
    try:
        for i in range(40):
            memory_create(
                namespace="user:alice",
                kind="fact",
                content=f"Alice note {i} about {words[i % 5]}.",
                actor="test",
            )
    finally:  # FTS5's defaults; the settings are stored in the index itself
        fts_config("automerge", 4)
        fts_config("crisismerge", 16)
    before, pages = {word: fts_ids(word) for word in words}, fts_pages()
    assert pages > 40  # a structure record plus at least one leaf page per write
    assert keyword_index.merge_segments(max_steps=0) == 0  # no budget, no work
    assert fts_pages() == pages
    assert keyword_index.merge_segments() > 0
    assert fts_pages() < pages / 2
    assert keyword_index.merge_segments() == 0  # nothing left to merge
    assert {word: fts_ids(word) for word in words} == before
    assert all(len(ids) == 8 for ids in before.values())
    fts_integrity_ok()


WORDS = ["heron", "walrus", "gecko", "lynx"]


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_and_searchers_each_find_their_own_memory_at_once() -> None:
    # On PostgreSQL every search first indexes its namespace's pending memories while
    # other threads write and search there too: no write may go missing, no thread may
    # wait forever or deadlock, and the statistics must add up afterwards.
    import threading

    from django.db import connection as conn

    barrier = threading.Barrier(len(WORDS))
    errors: list[BaseException] = []

    def writer(word: str) -> None:
        try:
            barrier.wait()
            for n in range(8):
                memory = memory_create(
                    namespace="user:crowd",
                    kind="fact",
                    content=f"The {word} number {n}.",
                    actor="t",
                )
                assert memory.pk in fts_ids(word, namespace="user:crowd")
                hits = keyword_index.search("user:crowd", [(word, False)], 50)
                assert memory.pk in {memory_id for memory_id, _ in hits}
        except BaseException as exc:  # asserted below
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=writer, args=(word,)) for word in WORDS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    for word in WORDS:
        assert len(fts_ids(word, namespace="user:crowd")) == 8
    assert keyword_index.count_rows() == 8 * len(WORDS)
    fts_integrity_ok()


def test_catching_up_many_namespaces_at_once_indexes_every_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.db import connection as conn

    from memories.store import keyword_pg

    monkeypatch.setattr(keyword_pg, "GROUP_PENDING", 7)  # several groups of namespaces
    created = {
        f"user:n{n:02d}": memory_create(
            namespace=f"user:n{n:02d}", kind="fact", content=f"Otter number {n}.", actor="t"
        ).pk
        for n in range(30)
    }
    indexed = keyword_index.catch_up()
    assert indexed == (30 if conn.vendor == "postgresql" else 0)  # SQLite's triggers index
    assert keyword_index.catch_up() == 0  # nothing left pending
    for namespace, memory_id in created.items():
        assert fts_ids("otter", namespace=namespace) == [memory_id]
    fts_integrity_ok()


def _frequencies(namespace: str, *words: str) -> dict[str, int]:
    """memories_fts_lexemes' document counts of these words in the namespace (PostgreSQL)."""
    from memories.store import keyword_pg
    from spaceduck.core.fts import namespace_key

    keyword_index.catch_up()
    lexemes = {keyword_pg.lexeme(namespace_key(namespace), word): word for word in words}
    with connection.cursor() as cursor:
        rows = cursor.execute(
            "SELECT lexeme, documents FROM memories_fts_lexemes WHERE lexeme = ANY(%s)",
            [list(lexemes)],
        ).fetchall()
    return {lexemes[lexeme]: documents for lexeme, documents in rows}


def test_each_word_s_document_count_follows_writes_edits_moves_and_deletes() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's document frequencies (FTS5 keeps its own)")
    first = memory_create(namespace="user:alice", kind="fact", content="Otter otter.", actor="t")
    second = memory_create(namespace="user:alice", kind="fact", content="An otter.", actor="t")
    memory_create(namespace="user:bob", kind="fact", content="An otter swims.", actor="t")
    # Documents, not occurrences; each namespace its own.
    assert _frequencies("user:alice", "otter", "swim") == {"otter": 2}
    assert _frequencies("user:bob", "otter", "swim") == {"otter": 1, "swim": 1}
    memory_edit(memory=second, changes={"content": "A heron."}, actor="t")
    assert _frequencies("user:alice", "otter", "heron") == {"otter": 1, "heron": 1}
    Memory.objects.filter(pk=first.pk).update(namespace="user:bob")
    assert _frequencies("user:alice", "otter") == {}  # gone from a namespace: no row left
    assert _frequencies("user:bob", "otter") == {"otter": 2}
    memory_delete(memory=second, actor="t")
    assert _frequencies("user:alice", "heron") == {}
    fts_integrity_ok()
    keyword_index.rebuild()
    assert _frequencies("user:bob", "otter", "swim") == {"otter": 2, "swim": 1}
    fts_integrity_ok()


def test_a_wrong_document_count_is_reported_by_the_index_check() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's document frequencies (FTS5 keeps its own)")
    memory_create(namespace="user:alice", kind="fact", content="Otter.", actor="t")
    keyword_index.catch_up()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_fts_lexemes SET documents = documents + 1")
    (problem,) = keyword_index.problems()
    assert "otter" in problem
    assert "in 1 documents, counted 2" in problem


def test_a_namespace_with_more_pending_memories_than_a_group_is_indexed_in_several_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memories.store import keyword_pg

    monkeypatch.setattr(keyword_pg, "GROUP_PENDING", 3)
    batches: list[int] = []
    index_rows = keyword_pg.index_rows

    def counting(memory_ids: list[int]) -> int:
        batches.append(len(memory_ids))
        return index_rows(memory_ids)

    monkeypatch.setattr(keyword_pg, "index_rows", counting)
    created = [
        memory_create(namespace="user:alice", kind="fact", content=f"Otter {n}.", actor="t").pk
        for n in range(8)
    ]
    if connection.vendor == "postgresql":
        assert keyword_index.catch_up() == 8
        assert batches == [3, 3, 2]  # one transaction each
    assert sorted(fts_ids("otter")) == sorted(created)
    fts_integrity_ok()
