"""Index integrity: memories against vector and keyword rows, and `reindex` repairing them."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from memories.models import Memory
from memories.store import keyword_index, vector_index
from memories.upkeep import integrity
from memories.write.services import content_hash, memory_create
from spaceduck.core.providers import get_embedder, reset_providers
from tests.memories import keyword_rows

pytestmark = pytest.mark.django_db

TEXTS = [
    "Alice plays the cello.",
    "Alice's cat is called Miso.",
    "Alice works at CERN.",
    "Alice prefers window seats.",
    "Alice is allergic to peanuts.",
    "Alice grows tomatoes on her balcony.",
]


@pytest.fixture
def ids() -> list[int]:
    return [
        memory_create(namespace="user:alice", kind="fact", content=t, actor="t").pk for t in TEXTS
    ]


def sql(statement: str, params: list[object] | None = None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def reindex(*args: str) -> str:
    out = StringIO()
    call_command("reindex", "--no-progress", *args, stdout=out)
    return out.getvalue()


def nearest(text: str) -> int:
    vector_index.cache_clear()
    return vector_index.search("user:alice", get_embedder().embed([text])[0], 1)[0][0]


def test_a_clean_database_reports_no_problem(ids: list[int]) -> None:
    clean = {
        "memories": 6,
        "vectors": 6,
        "keyword": 6,
        "missing_vectors": 0,
        "orphan_vectors": 0,
        "misplaced_vectors": 0,
        "missing_keyword": 0,
        "orphan_keyword": 0,
        "problem": None,
    }
    assert integrity.index_report() == clean
    cheap = integrity.index_report(exact=False)
    assert (cheap["memories"], cheap["vectors"], cheap["keyword"], cheap["problem"]) == (
        6,
        6,
        6,
        None,
    )
    assert cheap["missing_vectors"] is None  # the cheap report only counts
    assert not integrity.find_problems()
    assert "nothing to do" in reindex()


def break_indexes(ids: list[int]) -> int:
    """Delete, orphan and misplace index rows by raw SQL; returns the orphan's id."""
    sql("DELETE FROM memories_vec WHERE memory_id IN (%s, %s)", [ids[0], ids[1]])
    keyword_rows.drop_documents([ids[2], ids[3]])
    orphan = max(ids) + 100
    vector_index.upsert([(orphan, "user:alice", get_embedder().embed(["gone"])[0])])
    keyword_rows.add_orphan(orphan, "user:alice", "orphan words")
    # A vector in the wrong namespace's partition: the memory's own searches miss it.
    vector_index.upsert([(ids[4], "user:bob", get_embedder().embed([TEXTS[4]])[0])])
    return orphan


def test_the_report_finds_missing_orphaned_and_misplaced_rows(ids: list[int]) -> None:
    orphan = break_indexes(ids)
    report = integrity.index_report()
    assert report["memories"] == 6
    assert report["vectors"] == 5  # 6 - 2 deleted + 1 orphan
    assert report["keyword"] == 5  # 6 - 2 deleted + 1 orphan
    assert report["missing_vectors"] == 2
    assert report["orphan_vectors"] == 1
    assert report["misplaced_vectors"] == 1
    assert report["missing_keyword"] == 2
    assert report["orphan_keyword"] == 1
    assert "run python manage.py reindex" in report["problem"]
    found = integrity.find_problems()
    assert found.missing_vectors == ids[:2]
    assert found.orphan_vectors == [orphan]
    assert found.misplaced_vectors == [ids[4]]
    assert found.missing_keyword == ids[2:4]
    assert found.orphan_keyword == [orphan]

    cheap = integrity.index_report(exact=False)
    assert cheap["problem"] == (
        "6 memories but 5 vectors and 5 keyword rows; "
        "run python manage.py reindex to repair the indexes"
    )


def test_reindex_repairs_every_row_even_when_the_fingerprint_is_current(ids: list[int]) -> None:
    break_indexes(ids)
    with pytest.raises(CommandError, match="reindex"):
        reindex("--check")

    out = reindex()
    assert "up to date" in out
    assert (
        "Repaired the indexes: 3 vectors embedded, 1 orphan vectors deleted, "
        "2 memories keyword-indexed, 1 orphan keyword rows deleted." in out
    )
    assert integrity.index_report()["problem"] is None
    assert "6 memories, 6 vectors, 6 keyword rows" in reindex("--check")
    # Searchable again, by vector and by keyword.
    assert nearest(TEXTS[0]) == ids[0]
    assert nearest(TEXTS[4]) == ids[4]
    assert keyword_index.matching_ids("user:alice", "CERN") == [ids[2]]
    assert keyword_index.matching_ids("user:alice", "window seats") == [ids[3]]
    assert keyword_index.matching_ids("user:alice", "orphan") == []
    assert "nothing to do" in reindex()


def test_rows_inserted_around_the_services_are_found_and_indexed(ids: list[int]) -> None:
    """What loaddata leaves behind: memory rows (the keyword trigger fires) without vectors."""
    loaded = Memory.objects.bulk_create(
        Memory(
            namespace="user:alice",
            kind="fact",
            content=f"Loaded memory number {i} about kayaks",
            content_hash=content_hash(f"Loaded memory number {i} about kayaks"),
        )
        for i in range(3)
    )
    report = integrity.index_report()
    assert (report["missing_vectors"], report["missing_keyword"]) == (3, 0)
    assert "Repaired the indexes: 3 vectors embedded" in reindex()
    assert nearest("Loaded memory number 1 about kayaks") == loaded[1].pk


def test_keyword_repair_rebuilds_rows_exactly_as_the_trigger_writes_them(ids: list[int]) -> None:
    memory = memory_create(
        namespace="user:alice",
        kind="fact",
        title="Kayak trip",
        content="Alice paddled the fjord.",
        summary="A summary about fjords",
        tags=["outdoors"],
        context="we talked about boats",
        actor="t",
    )
    words = ["kayak", "paddled", "summary", "outdoors", "boats"]
    before = {word: keyword_index.matching_ids("user:alice", word) for word in words}
    assert all(found == [memory.pk] for found in before.values())
    keyword_rows.drop_documents([memory.pk])
    assert keyword_index.matching_ids("user:alice", "kayak") == []
    reindex()
    assert {word: keyword_index.matching_ids("user:alice", word) for word in words} == before


def test_the_repair_columns_are_the_trigger_columns() -> None:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            trigger = cursor.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'memories_fts_ai'"
            ).fetchone()[0]
            listed = trigger.split("memories_fts(rowid, ", 1)[1].split(")", 1)[0]
        else:  # the update trigger marks a memory when one of these columns changes
            trigger = cursor.execute(
                "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'memories_fts_au'"
            ).fetchone()[0]
            listed = trigger.split("UPDATE OF namespace, ", 1)[1].split(" ON ", 1)[0]
    assert tuple(c.strip() for c in listed.split(",")) == keyword_index.COLUMNS


def test_rebuild_keyword_reindexes_everything(ids: list[int]) -> None:
    keyword_rows.drop_all()
    assert integrity.index_report()["missing_keyword"] == 6
    out = reindex("--rebuild-keyword")
    assert "Rebuilt the keyword index: 6 memories." in out
    assert integrity.index_report()["problem"] is None
    assert keyword_index.matching_ids("user:alice", "cello") == [ids[0]]


def test_a_repair_never_revives_a_memory_deleted_meanwhile(ids: list[int]) -> None:
    sql("DELETE FROM memories_vec WHERE memory_id = %s", [ids[0]])
    problems = integrity.find_problems()
    Memory.objects.filter(pk=ids[0]).delete()  # deleted between the report and the repair
    repaired = integrity.repair(problems)
    assert repaired.embedded == 0
    assert integrity.index_report()["problem"] is None


def test_check_also_reports_a_fingerprint_mismatch(settings, ids: list[int]) -> None:  # type: ignore[no-untyped-def]
    settings.SPACEDUCK_EMBEDDINGS = {**settings.SPACEDUCK_EMBEDDINGS, "dimensions": 64}
    reset_providers()
    with pytest.raises(CommandError, match="configured embedder"):
        reindex("--check")
