"""Dedup and contradictions: thresholds, arbiter verdicts, slots, re-learning, re-runs."""

from __future__ import annotations

from typing import Any

import pytest

from memories.extraction.types import Candidate
from memories.models import Conflict, Memory, MemoryEvent
from memories.write import dedup
from memories.write.dedup import WriteContext, commit_candidate
from memories.write.services import HistoryEvent
from spaceduck.core.providers.chat.base import Arbitration
from spaceduck.core.providers.chat.heuristic import HeuristicChat
from tests.fakes.embedders import ScriptedEmbedder

pytestmark = pytest.mark.django_db
BASE = "The user drinks black coffee every morning."


class ScriptedArbiter(HeuristicChat):
    """The heuristic provider with a fixed arbiter verdict, counting the questions."""

    def __init__(self, verdict: str) -> None:
        self.verdict = verdict
        self.asked = 0

    def arbitrate(self, *, existing: str, candidate: str) -> Arbitration:
        self.asked += 1
        return Arbitration(self.verdict, "scripted")  # type: ignore[arg-type]


def ctx(**kwargs: object) -> WriteContext:
    return WriteContext(namespace="user:alice", actor="test", **kwargs)  # type: ignore[arg-type]


def fact(content: str, **kwargs: object) -> Candidate:
    return Candidate(kind="fact", content=content, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def arbiter(monkeypatch: pytest.MonkeyPatch) -> ScriptedArbiter:
    chat = ScriptedArbiter("contradiction")
    monkeypatch.setattr(dedup, "get_chat", lambda: chat)
    return chat


def embed_with(monkeypatch: pytest.MonkeyPatch, cosines: dict[str, float]) -> None:
    embedder = ScriptedEmbedder({BASE: 1.0, **cosines})
    monkeypatch.setattr(dedup, "get_embedder", lambda: embedder)


@pytest.mark.parametrize(
    ("cosine", "decision", "asked"),
    [(0.59, "stored", 0), (0.60, "stored", 1), (0.92, "duplicate", 0), (0.93, "duplicate", 0)],
)
def test_threshold_boundaries(
    monkeypatch: pytest.MonkeyPatch,
    arbiter: ScriptedArbiter,
    cosine: float,
    decision: str,
    asked: int,
) -> None:
    arbiter.verdict = "consistent"
    # No digits in the text: a number the base lacks would make it a different fact.
    new_text = {
        0.59: "A statement just below the topic band.",
        0.60: "A statement at the edge of the topic band.",
        0.92: "A statement at the dedup threshold.",
        0.93: "A statement just above the dedup threshold.",
    }[cosine]
    embed_with(monkeypatch, {new_text: cosine})
    first = commit_candidate(fact(BASE), ctx())
    second = commit_candidate(fact(new_text), ctx())
    assert second.decision == decision
    assert arbiter.asked == asked
    if decision == "duplicate":
        assert second.matched_memory_id == first.memory_id
        assert Memory.objects.count() == 1
    else:
        assert Memory.objects.filter(status="active").count() == 2


def test_a_contradiction_supersedes_the_old_memory_in_one_step(
    monkeypatch: pytest.MonkeyPatch, arbiter: ScriptedArbiter
) -> None:
    new_text = "The user now drinks only green tea in the morning."
    embed_with(monkeypatch, {new_text: 0.75})
    old = commit_candidate(fact(BASE), ctx())
    new = commit_candidate(fact(new_text), ctx())
    assert new.decision == "stored"
    assert new.extra["superseded"] == [old.memory_id]
    assert new.extra["arbitrations"][0]["verdict"] == "contradiction"  # type: ignore[index]
    retired = Memory.objects.get(pk=old.memory_id)
    assert retired.status == "superseded"
    assert retired.superseded_by_id == new.memory_id
    events = MemoryEvent.objects.filter(memory_id=old.memory_id).values_list("event", flat=True)
    assert list(events) == ["created", "superseded"]


def test_consistent_statements_on_the_same_topic_are_both_kept(
    monkeypatch: pytest.MonkeyPatch, arbiter: ScriptedArbiter
) -> None:
    arbiter.verdict = "consistent"
    new_text = "The user takes the coffee with a biscuit."
    embed_with(monkeypatch, {new_text: 0.7})
    commit_candidate(fact(BASE), ctx())
    commit_candidate(fact(new_text), ctx())
    assert Memory.objects.filter(status="active").count() == 2


def test_a_failed_supersession_leaves_nothing_half_done(
    monkeypatch: pytest.MonkeyPatch, arbiter: ScriptedArbiter
) -> None:
    new_text = "The user quit coffee."
    embed_with(monkeypatch, {new_text: 0.8})
    old = commit_candidate(fact(BASE), ctx())

    def broken(events: list[HistoryEvent], **kwargs: str) -> None:
        if any(e.event == MemoryEvent.Event.SUPERSEDED for e in events):
            raise RuntimeError("disk full")  # after the old memory's row was updated
        real(events, **kwargs)

    real = dedup.memory_history_records
    monkeypatch.setattr(dedup, "memory_history_records", broken)
    with pytest.raises(RuntimeError):
        commit_candidate(fact(new_text), ctx())
    assert list(Memory.objects.values_list("id", "status")) == [(old.memory_id, "active")]


def test_identity_slots_supersede_whatever_the_cosine() -> None:
    paris = commit_candidate(fact("The user lives in Paris.", slot="location"), ctx())
    tokyo = commit_candidate(fact("The user lives in Tokyo.", slot="location"), ctx())
    assert tokyo.extra["superseded"] == [paris.memory_id]
    back = commit_candidate(fact("The user lives in Paris.", slot="location"), ctx())
    # Re-learning Paris: the superseded Paris is dead, so this is a new memory that retires Tokyo.
    assert back.decision == "stored"
    assert back.memory_id != paris.memory_id
    assert back.extra["superseded"] == [tokyo.memory_id]
    live = Memory.objects.filter(status="active").values_list("content", flat=True)
    assert list(live) == ["The user lives in Paris."]


def test_an_exact_duplicate_touches_and_promotes_a_candidate() -> None:
    first = commit_candidate(fact("The user might move to Berlin.", confidence=0.6), ctx())
    assert Memory.objects.get(pk=first.memory_id).status == "candidate"
    again = commit_candidate(fact("the user might move to berlin", confidence=0.6), ctx())
    assert again.decision == "duplicate"
    memory = Memory.objects.get(pk=first.memory_id)
    assert memory.status == "active"
    assert memory.confidence == pytest.approx(0.75)
    events = MemoryEvent.objects.filter(memory_id=memory.pk).values_list("event", flat=True)
    assert list(events) == ["created", "seen", "promoted"]


def test_touching_a_memory_that_is_gone_writes_no_history() -> None:
    from django.db import DatabaseError, transaction

    first = commit_candidate(fact("The user keeps bees."), ctx())
    memory = Memory.objects.get(pk=first.memory_id)
    Memory.objects.filter(pk=memory.pk).delete()
    with pytest.raises(DatabaseError), transaction.atomic():
        dedup.touch(memory, fact("The user keeps bees."), ctx(), reason="seen again")
    assert not MemoryEvent.objects.filter(memory_id=memory.pk, event="seen").exists()


def test_the_task_budget_drops_writes_past_it() -> None:
    verdicts = [
        commit_candidate(
            fact(f"Task fact number {i} is unique."), ctx(task_id="t1", max_memory_writes=3)
        )
        for i in range(5)
    ]
    assert [v.decision for v in verdicts] == ["stored"] * 3 + ["rejected"] * 2
    assert verdicts[-1].reason == "budget_exhausted"
    other = commit_candidate(fact("Another task is not limited by t1."), ctx(task_id="t2"))
    assert other.decision == "stored"


def test_content_stored_by_another_worker_after_the_first_check_is_a_duplicate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two worker threads extracting the same fact: the second one's first check ran
    before the first one committed. The check under the write lock catches it. (A fact with
    no claim the rules read: a claim is checked first, see the test below.)"""
    first = commit_candidate(fact("The user keeps bees in Oslo."), ctx())
    checks = []
    real = dedup._locked_reads

    def stale(candidate: Candidate, context: WriteContext, claim: Any) -> Any:
        checks.append(candidate.content)  # the first look, by content: before the commit
        return dedup._First(None, None, [])

    def under_the_lock(candidate: Candidate, context: WriteContext, claim: Any) -> Any:
        checks.append(candidate.content)
        return real(candidate, context, claim)

    monkeypatch.setattr(dedup, "_first_reads", stale)
    monkeypatch.setattr(dedup, "_locked_reads", under_the_lock)
    monkeypatch.setattr(dedup, "_neighbours", lambda *args: [])  # its vector search ran early too
    second = commit_candidate(fact("The user keeps bees in Oslo."), ctx())
    assert len(checks) == 2  # the early check missed it, the one under the lock did not
    assert (second.decision, second.matched_memory_id) == ("duplicate", first.memory_id)
    assert Memory.objects.filter(content="The user keeps bees in Oslo.").count() == 1


@pytest.mark.parametrize(
    ("later", "decision"),
    [("The user's home is in Oslo, Norway.", "duplicate"), ("The user lives in Bergen.", "stored")],
)
def test_a_claim_stored_by_another_worker_after_the_first_check_is_seen_under_the_lock(
    monkeypatch: pytest.MonkeyPatch, later: str, decision: str
) -> None:
    """The other worker's memory about the same subject and attribute was committed after
    this one's first look: under the lock the same value is a duplicate, another value
    replaces it."""
    first = commit_candidate(fact("The user lives in Oslo."), ctx())
    looks = []
    real_first, real_locked = dedup._first_reads, dedup._locked_reads

    def stale(candidate: Candidate, context: WriteContext, claim: Any) -> Any:
        looks.append(claim)
        first = real_first(candidate, context, claim)
        return dedup._First(first.earlier, first.exact, [], first.version, first.slotted)

    def under_the_lock(candidate: Candidate, context: WriteContext, claim: Any) -> Any:
        looks.append(claim)
        return real_locked(candidate, context, claim)

    monkeypatch.setattr(dedup, "_first_reads", stale)
    monkeypatch.setattr(dedup, "_locked_reads", under_the_lock)
    monkeypatch.setattr(dedup, "_neighbours", lambda *args, **kwargs: [])
    monkeypatch.setattr(dedup, "_slot_holders", lambda *args: [])
    second = commit_candidate(fact(later), ctx())
    assert len(looks) == 2
    assert second.decision == decision
    first_now = Memory.objects.get(pk=first.memory_id)
    if decision == "duplicate":
        assert second.matched_memory_id == first.memory_id
        assert first_now.status == "active"
    else:
        assert first_now.status == "superseded"
        assert first_now.superseded_by_id == second.memory_id


def test_a_near_duplicate_stored_by_another_worker_after_the_first_check_is_a_duplicate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two workers extracting two phrasings of one fact: the other worker's memory is
    committed after this one's vector search. The check under the lock looks at the
    vectors written since that search, and finds it."""
    from memories.write import services

    near = "A statement just above the dedup threshold."
    embedder = ScriptedEmbedder({BASE: 1.0, near: 0.93})
    monkeypatch.setattr(dedup, "get_embedder", lambda: embedder)
    monkeypatch.setattr(services, "get_embedder", lambda: embedder)
    real = dedup._neighbours
    looked_among: list[object] = []

    def other_worker_stores_meanwhile(vector, candidate, context, among=None):  # type: ignore[no-untyped-def]
        looked_among.append(among)
        found = real(vector, candidate, context, among)
        if len(looked_among) == 1:
            other = services.memory_create(
                namespace="user:alice", kind="fact", content=BASE, actor="other worker"
            )
            looked_among.append(other.pk)
        return found

    monkeypatch.setattr(dedup, "_neighbours", other_worker_stores_meanwhile)
    verdict = commit_candidate(fact(near), ctx())
    first_search, other_id, under_lock = looked_among
    assert first_search is None  # the whole namespace, before the other memory existed
    assert under_lock == {other_id}  # only what was written since
    assert (verdict.decision, verdict.matched_memory_id) == ("duplicate", other_id)
    assert Memory.objects.count() == 1


def test_without_writes_meanwhile_the_check_under_the_lock_searches_nothing_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[object] = []
    real = dedup._neighbours

    def counted(vector, candidate, context, among=None):  # type: ignore[no-untyped-def]
        calls.append(among)
        return real(vector, candidate, context, among)

    monkeypatch.setattr(dedup, "_neighbours", counted)
    assert commit_candidate(fact("The user keeps bees."), ctx()).decision == "stored"
    assert calls == [None]  # one vector search: the version had not moved


def test_a_rerun_message_does_not_bring_back_what_a_later_message_superseded() -> None:
    """A worker dies after a message's memory was stored; a later message supersedes it;
    the killed extraction is run again: it must not store the old value a second time."""
    from memories.models import Message
    from memories.write.services import create_thread

    thread = create_thread("user:alice")
    lives, moved = (
        Message.objects.create(thread=thread, role="user", content=text)
        for text in ("I live in Oslo.", "I moved, I live in Austin now.")
    )
    oslo = fact("The user lives in Oslo.", slot="location")
    first = commit_candidate(oslo, ctx(message_id=lives.pk))
    austin = commit_candidate(
        fact("The user lives in Austin.", slot="location"), ctx(message_id=moved.pk)
    )
    assert austin.extra["superseded"] == [first.memory_id]

    again = commit_candidate(oslo, ctx(message_id=lives.pk))  # the re-run
    assert (again.decision, again.matched_memory_id) == ("already_extracted", first.memory_id)
    assert Memory.objects.filter(content="The user lives in Oslo.").count() == 1
    assert Memory.objects.get(pk=austin.memory_id).status == "active"


def test_an_unsure_arbiter_sends_the_pair_to_the_conflict_inbox(
    monkeypatch: pytest.MonkeyPatch, arbiter: ScriptedArbiter
) -> None:
    arbiter.verdict = "unsure"
    new_text = "The user takes the coffee without milk now."
    embed_with(monkeypatch, {new_text: 0.8})
    old = commit_candidate(fact(BASE), ctx())
    new = commit_candidate(fact(new_text), ctx())
    assert new.decision == "stored"
    assert new.extra["status"] == "candidate"
    assert new.extra["conflicts"] == [old.memory_id]
    assert "unsure" in str(new.extra["asks"])
    assert Memory.objects.get(pk=old.memory_id).status == "active"  # nothing guessed
    [conflict] = Conflict.objects.all()
    assert (conflict.old_id, conflict.new_id, conflict.status) == (
        old.memory_id,
        new.memory_id,
        "open",
    )


def test_a_doubted_candidate_waits_and_replaces_nothing_without_a_person(
    monkeypatch: pytest.MonkeyPatch, arbiter: ScriptedArbiter
) -> None:
    new_text = "The user takes the coffee with cream."
    embed_with(monkeypatch, {new_text: 0.8})
    old = commit_candidate(fact(BASE), ctx())
    new = commit_candidate(fact(new_text, doubt="may be sarcasm"), ctx())
    assert new.extra["status"] == "candidate"
    assert new.extra["conflicts"] == [old.memory_id]
    assert Memory.objects.get(pk=old.memory_id).status == "active"
    alone = commit_candidate(
        fact("The user is the Queen of England.", doubt="may be sarcasm"), ctx()
    )
    assert alone.extra["status"] == "candidate"
    assert "conflicts" not in alone.extra
    assert "may not mean it" in alone.reason
