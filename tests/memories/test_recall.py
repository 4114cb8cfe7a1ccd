"""Hybrid recall: lists, fusion, multipliers, filters, scopes, superseded, stale, explanations."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memories.extraction.types import Candidate
from memories.models import Memory, MemoryEvent
from memories.recall.hybrid import RecallQuery, keyword_list, recall
from memories.store import keyword_index
from memories.write.dedup import WriteContext, commit_candidate
from memories.write.services import memory_create

pytestmark = pytest.mark.django_db
NOW = timezone.now()


def add(content: str, **fields: object) -> Memory:
    defaults: dict[str, object] = {"namespace": "user:alice", "kind": "fact", "actor": "t"}
    return memory_create(content=content, **{**defaults, **fields})  # type: ignore[arg-type]


def ask(text: str, **kwargs: object) -> list[Memory]:
    query = RecallQuery(namespace="user:alice", text=text, now=NOW, **kwargs)  # type: ignore[arg-type]
    return [hit.memory for hit in recall(query)]


def test_it_finds_memories_by_words_and_fuses_both_lists() -> None:
    tea = add("Alice drinks green tea every afternoon.")
    add("Alice keeps two cats named Miso and Tofu.")
    hits = recall(RecallQuery(namespace="user:alice", text="green tea", now=NOW))
    assert hits[0].memory == tea
    assert hits[0].match_source == "hybrid"
    assert hits[0].explanation.keyword_rank == 1
    assert hits[0].explanation.vector_rank == 1


def test_the_explanation_multiplies_to_the_score() -> None:
    add("Alice plays the cello in an orchestra.", importance=0.85, confidence=0.95)
    hit = recall(RecallQuery(namespace="user:alice", text="cello orchestra", now=NOW))[0]
    e = hit.explanation
    assert e.rrf == pytest.approx(1 / 61 + 1 / 61)
    assert e.importance == pytest.approx(0.7 + 0.3 * 0.85)
    assert e.confidence == pytest.approx(0.6 + 0.4 * 0.95)
    product = (e.rrf + e.neighbour) * e.importance * e.confidence * e.recency * e.scope
    product *= e.superseded * e.second_stage
    assert hit.score == pytest.approx(product)
    assert e.final == pytest.approx(product)


@pytest.mark.parametrize(("scope", "half_life"), [("thread", 30), ("global", 90), ("project", 60)])
def test_recency_decays_with_the_scope_half_life_and_is_floored(scope: str, half_life: int) -> None:
    memory = add(
        "Alice visited the observatory.", scope=scope, scope_id="x" if scope != "global" else ""
    )
    Memory.objects.filter(pk=memory.pk).update(last_seen_at=NOW - timedelta(days=half_life / 2))
    query = (
        {"thread_id": "x"}
        if scope == "thread"
        else {"project_id": "x"}
        if scope == "project"
        else {}
    )
    hit = recall(RecallQuery(namespace="user:alice", text="observatory", now=NOW, **query))[0]  # type: ignore[arg-type]
    assert hit.explanation.recency == pytest.approx(math.exp(-math.log(2) / 2), rel=1e-3)
    Memory.objects.filter(pk=memory.pk).update(last_seen_at=NOW - timedelta(days=half_life * 3))
    hit = recall(RecallQuery(namespace="user:alice", text="observatory", now=NOW, **query))[0]  # type: ignore[arg-type]
    assert hit.explanation.recency == 0.5
    assert hit.explanation.scope == {"thread": 1.5, "project": 1.2, "global": 1.0}[scope]


def test_thread_and_project_memories_stay_in_their_scope() -> None:
    add("Deploy notes for thread one.", scope="thread", scope_id="t1")
    add("Deploy notes for thread two.", scope="thread", scope_id="t2")
    add("Deploy notes for project apollo.", scope="project", scope_id="apollo")
    add("Deploy notes for everyone.")
    seen = {m.content for m in ask("deploy notes", thread_id="t1", project_id="apollo")}
    assert seen == {
        "Deploy notes for thread one.",
        "Deploy notes for project apollo.",
        "Deploy notes for everyone.",
    }
    assert {m.content for m in ask("deploy notes")} == {"Deploy notes for everyone."}


def test_other_namespaces_never_leak() -> None:
    add("Bob's secret garden has roses.", namespace="user:bob")
    add("Alice's garden has tulips.")
    assert [m.content for m in ask("garden roses tulips")] == ["Alice's garden has tulips."]


def test_filters_kinds_confidence_expiry_and_tasks() -> None:
    add("Alice likes sailing boats.")
    add("Alice sails on Sundays.", kind="episode")
    add("Alice may like sailing.", confidence=0.3)
    expired = add("Alice sailed yesterday only.")
    Memory.objects.filter(pk=expired.pk).update(expires_at=NOW - timedelta(hours=1))
    task = add("Alice sailing digest from a task.")
    Memory.objects.filter(pk=task.pk).update(source_task_id="digest")
    assert {m.content for m in ask("sailing", kinds=["fact"], exclude_task_memories=True)} == {
        "Alice likes sailing boats."
    }
    own = {m.content for m in ask("sailing", kinds=["fact"], source_task_id="digest")}
    assert own == {"Alice likes sailing boats.", "Alice sailing digest from a task."}
    other = {m.content for m in ask("sailing", kinds=["fact"], source_task_id="other")}
    assert other == {"Alice likes sailing boats."}


def test_superseded_memories_only_on_request_and_never_beside_their_superseder() -> None:
    ctx = WriteContext(namespace="user:alice", actor="t")
    commit_candidate(
        Candidate(kind="fact", content="The user lives in Paris.", slot="location"), ctx
    )
    commit_candidate(
        Candidate(kind="fact", content="The user lives in Tokyo.", slot="location"), ctx
    )
    assert [m.content for m in ask("where does the user live")] == ["The user lives in Tokyo."]
    both = recall(
        RecallQuery(namespace="user:alice", text="user lives", now=NOW, include_superseded=True)
    )
    assert [h.memory.content for h in both] == ["The user lives in Tokyo."]
    Memory.objects.filter(content="The user lives in Tokyo.").update(status="archived")
    old = recall(
        RecallQuery(
            namespace="user:alice", text="user lives Paris", now=NOW, include_superseded=True
        )
    )
    assert [h.memory.content for h in old] == ["The user lives in Paris."]
    assert old[0].explanation.superseded == 0.1


def test_stale_memories_fill_in_and_come_back_to_life() -> None:
    fresh = add("Alice reads science fiction.")
    stale = add("Alice read a science book about stars.")
    Memory.objects.filter(pk=stale.pk).update(status="stale")
    assert [m.pk for m in ask("science", top_k=1)] == [fresh.pk]
    assert Memory.objects.get(pk=stale.pk).status == "stale"
    assert {m.pk for m in ask("science", top_k=5)} == {fresh.pk, stale.pk}
    assert Memory.objects.get(pk=stale.pk).status == "active"
    assert MemoryEvent.objects.filter(memory_id=stale.pk, event="activated").exists()


def test_keyword_only_when_semantic_recall_is_off(settings) -> None:  # type: ignore[no-untyped-def]
    settings.RECALL_SEMANTIC = False
    add("Alice collects vinyl records.")
    hits = recall(RecallQuery(namespace="user:alice", text="vinyl", now=NOW))
    assert [h.match_source for h in hits] == ["fts"]
    assert hits[0].explanation.vector_rank is None


@pytest.mark.parametrize("text", ['NOT "x', "a*", "col:umn", "NEAR(a b)", "\x00", "\ud800", "^-{}"])
def test_hostile_queries_never_crash(text: str) -> None:
    add("Alice likes puzzles.")
    recall(RecallQuery(namespace="user:alice", text=text, now=NOW))


def test_the_keyword_list_reads_only_its_namespace() -> None:
    mine = add("Alice drinks tea.")
    for i in range(3):
        add(f"Bob drinks tea, cup {i}.", namespace="user:bob")
    assert [memory_id for memory_id, _ in keyword_list("user:alice", "tea", 20)] == [mine.pk]
    # The namespace's own words are not in the index.
    assert keyword_list("user:alice", "user", 20) == []


def test_words_too_common_to_score_are_left_to_the_vector_list(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(keyword_index, "MAX_MATCHED_DOCS", 2)
    orchid = add("Alice grows an orchid in the garden.")
    for vegetable in ("beans", "leeks", "kale"):
        add(f"Alice grows {vegetable} in the garden.")
    # "garden" is in 4 memories: over the budget once "orchid" (1) is in.
    assert [memory_id for memory_id, _ in keyword_list("user:alice", "garden orchid", 20)] == [
        orchid.pk
    ]
    # Frequencies are per namespace: Bob's one garden memory is scored.
    bob = add("Bob sits in the garden.", namespace="user:bob")
    assert [memory_id for memory_id, _ in keyword_list("user:bob", "garden", 20)] == [bob.pk]
    assert keyword_list("user:alice", "garden", 20) == []


def test_a_word_found_too_common_is_not_counted_again_but_a_rare_one_always_is(
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setattr(keyword_index, "MAX_MATCHED_DOCS", 2)
    for vegetable in ("beans", "leeks", "kale"):
        add(f"Alice grows {vegetable} in the garden.")
    counted: list[str] = []
    count = keyword_index._documents

    def counting(cursor: object, text: str) -> int:
        counted.append(text)
        return count(cursor, text)

    monkeypatch.setattr(keyword_index, "_documents", counting)
    # PostgreSQL reads a whole word's count from its frequency: no walk at all.
    walks = 1 if connection.vendor == "sqlite" else 0
    assert keyword_list("user:alice", "garden", 20) == []
    assert len(counted) == walks
    assert keyword_list("user:alice", "garden", 20) == []
    assert len(counted) == walks  # remembered as common: not walked again
    # A word with no memory yet is counted every time, so a new memory is found at once.
    assert keyword_list("user:alice", "orchid", 20) == []
    orchid = add("Alice grows an orchid.")
    assert [memory_id for memory_id, _ in keyword_list("user:alice", "orchid", 20)] == [orchid.pk]


@pytest.mark.parametrize(
    "query",
    ["cafe\u0301", "café", "CAFÉ", "cafe", "\uff43\uff41\uff46\uff45"],  # decomposed, fullwidth
)
def test_unicode_forms_of_a_word_find_the_same_memories_on_either_database(query: str) -> None:
    composed = memory_create(namespace="user:u", kind="fact", content="café au lait", actor="t")
    decomposed = memory_create(
        namespace="user:u", kind="fact", content="cafe\u0301 noir", actor="t"
    )
    memory_create(namespace="user:u", kind="fact", content="tea with milk", actor="t")
    found = {memory_id for memory_id, _ in keyword_list("user:u", query, 10)}
    assert found == {composed.pk, decomposed.pk}


def test_a_word_too_common_is_judged_by_its_document_count_not_its_postings(
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    """PostgreSQL: counting a word through the GIN index reads every posting it has (a
    bitmap scan has no early stop), a million at 1M memories; its document frequency
    says the same in one look-up. The terms kept are the same as on SQLite."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memories.store import keyword_pg

    monkeypatch.setattr(keyword_index, "MAX_MATCHED_DOCS", 2)
    orchid = add("Alice grows an orchid in the garden.")
    for vegetable in ("beans", "leeks", "kale"):
        add(f"Alice grows {vegetable} in the garden.")
    keyword_list("user:alice", "tulip", 20)  # the pending memories indexed
    with CaptureQueriesContext(connection) as queries:
        found = keyword_list("user:alice", "garden orchid", 20)
    assert [memory_id for memory_id, _ in found] == [orchid.pk]
    if connection.vendor == "postgresql":
        walked = [q["sql"] for q in queries if "@@" in q["sql"]]  # the GIN index read
        assert any("orchid" in sql for sql in walked)  # BM25 of the word kept
        assert not any("garden" in sql for sql in walked)
        with connection.cursor() as cursor:
            term = keyword_index.phrase("user:alice", "garden")
            assert keyword_pg.document_count(cursor, term, 2) == 3  # 4, counted up to 3
            assert keyword_pg.document_count(cursor, term, 10) == 4
            either = f"{term} | {keyword_index.phrase('user:alice', 'orchid')}"
            assert keyword_pg.document_count(cursor, either, 10) == 4  # the union, not 5


def test_rare_words_are_searched_without_counting_them_through_the_index() -> None:
    """PostgreSQL: when the words' frequencies add up to at most MAX_MATCHED_DOCS, so does
    their union: no count through the index, only the BM25 query reads it."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    orchid, beans = add("Alice grows an orchid."), add("Alice grows beans.")
    keyword_list("user:alice", "tulip", 20)  # the pending memories indexed
    with CaptureQueriesContext(connection) as queries:
        found = keyword_list("user:alice", "orchid beans", 20)
    assert {memory_id for memory_id, _ in found} == {orchid.pk, beans.pk}
    if connection.vendor == "postgresql":
        counts = [q for q in queries if str(q["sql"]).startswith("SELECT count(*) FROM (SELECT 1")]
        assert counts == []
        assert len(queries) == 2  # the words' frequencies with the pending check, BM25
