"""Decay by scope half-life, marking unseen decayed memories stale, and waking them up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from memories.extraction.types import Candidate
from memories.models import MaintenanceRun, Memory, MemoryEvent
from memories.tasks import mark_stale_memories
from memories.upkeep import staleness
from memories.upkeep.staleness import decay, half_life_days, mark_stale, reactivate
from memories.write.dedup import WriteContext, touch
from memories.write.services import memory_create

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
pytestmark = pytest.mark.django_db


def seen_days_ago(days: float, scope: str = "global", status: str = "active") -> Memory:
    memory = memory_create(
        namespace="user:alice",
        kind="fact",
        content=f"A {scope} fact last seen {days} days ago.",
        actor="test",
        scope=scope,
        scope_id="" if scope == "global" else "x",
        status=status,
    )
    Memory.objects.filter(pk=memory.pk).update(last_seen_at=NOW - timedelta(days=days))
    memory.refresh_from_db()
    return memory


def events(memory: Memory) -> list[str]:
    return list(
        MemoryEvent.objects.filter(memory_id=memory.pk)
        .order_by("id")
        .values_list("event", flat=True)
    )


def status(memory: Memory) -> str:
    memory.refresh_from_db()
    return memory.status


# --- decay ---------------------------------------------------------------------------


def test_half_lives_are_30_days_for_threads_90_for_global_and_60_for_projects() -> None:
    assert half_life_days("thread") == 30
    assert half_life_days("global") == 90
    assert half_life_days("project") == 60


def test_the_project_half_life_is_configurable(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PROJECT_HALF_LIFE_DAYS = 10
    assert half_life_days("project") == 10
    assert decay(NOW - timedelta(days=10), "project", NOW) == pytest.approx(0.5)


def test_an_unknown_scope_has_no_half_life() -> None:
    with pytest.raises(ValueError, match="allowed: global, project, thread"):
        half_life_days("session")


@pytest.mark.parametrize(("scope", "half_life"), [("thread", 30), ("global", 90), ("project", 60)])
def test_decay_halves_every_half_life(scope: str, half_life: int) -> None:
    assert decay(NOW, scope, NOW) == 1.0
    assert decay(NOW - timedelta(days=half_life), scope, NOW) == pytest.approx(0.5)
    assert decay(NOW - timedelta(days=2 * half_life), scope, NOW) == pytest.approx(0.25)


def test_a_global_memory_60_days_old_has_decay_063() -> None:
    assert decay(NOW - timedelta(days=60), "global", NOW) == pytest.approx(0.63, abs=0.005)


def test_a_last_seen_in_the_future_counts_as_just_seen() -> None:
    assert decay(NOW + timedelta(days=5), "thread", NOW) == 1.0


# --- mark_stale ----------------------------------------------------------------------


def test_a_memory_seen_recently_stays_active() -> None:
    memory = seen_days_ago(59, scope="thread")  # decay 0.25, but not unseen long enough
    assert mark_stale(NOW) == 0
    assert status(memory) == "active"


def test_an_old_memory_whose_decay_is_above_the_threshold_stays_active() -> None:
    memory = seen_days_ago(60, scope="global")  # decay 0.63 > 0.5
    assert mark_stale(NOW) == 0
    assert status(memory) == "active"


def test_an_unseen_decayed_global_memory_becomes_stale() -> None:
    memory = seen_days_ago(100, scope="global")  # decay 0.46
    assert mark_stale(NOW) == 1
    assert status(memory) == "stale"


def test_the_decay_boundary_is_exclusive() -> None:
    at_half_life = seen_days_ago(90, scope="global")  # decay exactly 0.5: not below
    just_past = seen_days_ago(90.01, scope="global")
    assert mark_stale(NOW) == 1
    assert status(at_half_life) == "active"
    assert status(just_past) == "stale"


def test_thread_and_project_memories_turn_stale_after_stale_after_days() -> None:
    # Their decay is below 0.5 long before 60 days; the unseen time decides.
    thread_59, thread_61 = seen_days_ago(59, "thread"), seen_days_ago(61, "thread")
    project_59, project_61 = seen_days_ago(59, "project"), seen_days_ago(61, "project")
    assert mark_stale(NOW) == 2
    assert [status(m) for m in (thread_59, thread_61, project_59, project_61)] == [
        "active",
        "stale",
        "active",
        "stale",
    ]


def test_the_thresholds_are_configurable(settings) -> None:  # type: ignore[no-untyped-def]
    settings.STALE_AFTER_DAYS = 10
    settings.STALE_DECAY_BELOW = 0.9
    memory = seen_days_ago(14, scope="global")  # decay 0.898
    assert mark_stale(NOW) == 1
    assert status(memory) == "stale"


def test_a_zero_threshold_never_marks_anything_stale(settings) -> None:  # type: ignore[no-untyped-def]
    settings.STALE_DECAY_BELOW = 0
    memory = seen_days_ago(5000, scope="thread")
    assert mark_stale(NOW) == 0
    assert status(memory) == "active"


@pytest.mark.parametrize("other", ["candidate", "archived", "superseded", "stale"])
def test_only_active_memories_are_marked(other: str) -> None:
    memory = seen_days_ago(400, status=other)
    assert mark_stale(NOW) == 0
    assert status(memory) == other
    assert "stale" not in events(memory)


def test_marking_stale_records_history_with_the_decay() -> None:
    memory = seen_days_ago(100, scope="global")
    mark_stale(NOW)
    event = MemoryEvent.objects.get(memory_id=memory.pk, event="stale")
    assert event.actor == "maintenance:staleness"
    assert event.namespace == "user:alice"
    assert event.reason == "not seen for 100 days; decay 0.463 is below 0.5"
    assert event.data["decay"] == pytest.approx(0.4629, abs=0.0001)
    assert event.data["half_life_days"] == 90
    memory.refresh_from_db()
    assert memory.updated_at == NOW


def test_a_second_run_changes_nothing() -> None:
    memory = seen_days_ago(100)
    assert mark_stale(NOW) == 1
    assert mark_stale(NOW) == 0
    assert events(memory).count("stale") == 1


def test_each_run_is_logged_as_a_maintenance_run() -> None:
    seen_days_ago(100, "global")
    seen_days_ago(70, "thread")
    mark_stale(NOW)
    run = MaintenanceRun.objects.get(processor="staleness")
    assert run.ok
    assert run.changes == {"marked_stale": 2, "by_scope": {"global": 1, "thread": 1}, "expired": 0}


def test_it_marks_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(staleness, "CHUNK_SIZE", 3)
    old = NOW - timedelta(days=200)
    Memory.objects.bulk_create(
        Memory(
            namespace="user:alice",
            kind="fact",
            content=f"fact {i}",
            content_hash=str(i),
            last_seen_at=old,
        )
        for i in range(10)
    )
    assert mark_stale(NOW) == 10
    assert not Memory.objects.filter(status="active").exists()
    assert MemoryEvent.objects.filter(event="stale").count() == 10


def test_the_periodic_task_marks_stale_memories(clock) -> None:  # type: ignore[no-untyped-def]
    memory = seen_days_ago(100)
    clock.now = NOW
    assert mark_stale_memories.call_local() == 1
    assert status(memory) == "stale"


# --- back to active ------------------------------------------------------------------


def test_a_recalled_stale_memory_becomes_active_and_is_seen_again() -> None:
    memory = seen_days_ago(100)
    mark_stale(NOW)
    memory.refresh_from_db()
    later = NOW + timedelta(hours=1)
    assert reactivate(memory, actor="recall", reason="recalled again", now=later) is True
    memory.refresh_from_db()
    assert (memory.status, memory.last_seen_at, memory.updated_at) == ("active", later, later)
    assert events(memory) == ["created", "stale", "activated"]
    activated = MemoryEvent.objects.get(memory_id=memory.pk, event="activated")
    assert (activated.actor, activated.reason) == ("recall", "recalled again")
    assert mark_stale(later) == 0  # seen just now: not marked again


def test_reactivating_a_memory_that_is_not_stale_changes_nothing() -> None:
    memory = seen_days_ago(100, status="archived")
    assert reactivate(memory, actor="recall", reason="recalled again") is False
    assert status(memory) == "archived"
    assert events(memory) == ["created"]


def test_a_stale_memory_observed_again_becomes_active() -> None:
    memory = seen_days_ago(100)
    mark_stale(NOW)
    memory.refresh_from_db()
    candidate = Candidate(kind="fact", content=memory.content, confidence=0.8)
    touch(memory, candidate, WriteContext(namespace="user:alice", actor="extraction"), "again")
    assert status(memory) == "active"
    assert events(memory) == ["created", "stale", "seen", "activated"]


@pytest.mark.parametrize("subtype", ["constraint", "workflow"])
def test_a_procedure_never_goes_stale(subtype: str) -> None:
    rule = memory_create(
        namespace="user:alice",
        kind="procedure",
        procedure_subtype=subtype,
        content="Never deploy on Fridays.",
        actor="test",
    )
    Memory.objects.filter(pk=rule.pk).update(last_seen_at=NOW - timedelta(days=400))
    assert mark_stale(NOW) == 0
    assert status(rule) == "active"


@pytest.mark.django_db(transaction=True)
def test_the_migration_reactivates_procedures_an_earlier_version_marked_stale(
    migrator: MigrationExecutor,
) -> None:
    rule = memory_create(
        namespace="user:alice", kind="procedure", procedure_subtype="constraint",
        content="Never deploy on Fridays.", actor="test", status="stale",
    )  # fmt: skip
    fact = seen_days_ago(100, status="stale")
    migrator.migrate([("memories", "0020_postgresql_vector_hnsw")])  # rows kept
    migrator.loader.build_graph()
    migrator.migrate([("memories", "0021_procedures_never_stale")])

    def status_at_0021(memory: Memory) -> str:  # the model's later columns are not there yet
        with connection.cursor() as cursor:
            cursor.execute("SELECT status FROM memories_memory WHERE id = %s", [memory.pk])
            return str(cursor.fetchone()[0])

    assert status_at_0021(rule) == "active"
    assert events(rule)[-1] == "activated"
    assert status_at_0021(fact) == "stale"  # facts and episodes still go stale
