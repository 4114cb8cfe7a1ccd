"""Recall's neighbour bonus: hits from the same or adjacent messages of a thread lift each other."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import Memory, Message, Thread
from memories.recall.hybrid import NEIGHBOUR_WEIGHT, RecallHit, RecallQuery, recall
from memories.store.selectors import message_neighbours
from memories.write.services import create_thread, memory_create, save_message

pytestmark = pytest.mark.django_db
NOW = timezone.now()
NS = "user:alice"


def conversation(*texts: str, thread: Thread | None = None) -> list[Message]:
    """A thread whose messages are ``texts`` in order, one second apart."""
    thread = thread or create_thread(NS)
    start = NOW - timedelta(hours=1)
    return [
        save_message(thread.pk, "user", text, created_at=start + timedelta(seconds=i))
        for i, text in enumerate(texts)
    ]


def remember(content: str, message: Message | None = None) -> Memory:
    memory = memory_create(namespace=NS, kind="episode", content=content, actor="t")
    if message is not None:
        Memory.objects.filter(pk=memory.pk).update(
            source_message=message, source_thread_id=message.thread_id
        )
        memory.refresh_from_db()
    return memory


def hits(text: str, **kwargs: object) -> dict[int, RecallHit]:
    query = RecallQuery(namespace=NS, text=text, now=NOW, **kwargs)  # type: ignore[arg-type]
    return {hit.memory.pk: hit for hit in recall(query)}


def test_message_neighbours_follow_thread_order() -> None:
    first, second, third = conversation("a", "b", "c")
    # Saved out of order: its created_at puts it first in the thread.
    early = save_message(first.thread_id, "user", "z", created_at=NOW - timedelta(days=1))
    other = conversation("x")[0]
    assert message_neighbours({first.pk, third.pk, early.pk, other.pk}) == {
        early.pk: (None, first.pk),
        first.pk: (early.pk, second.pk),
        third.pk: (second.pk, None),
        other.pk: (None, None),
    }
    assert message_neighbours(set()) == {}


def test_the_turn_after_a_strong_hit_outranks_a_slightly_better_stranger() -> None:
    question, answer = conversation(
        "Did you see the marathon in Boston?", "Yes, I ran it and finished in four hours."
    )
    asked = remember("Did you see the marathon in Boston?", question)
    replied = remember("Yes, I ran it and finished in four hours.", answer)
    # A memory from no conversation that matches better on its own words.
    stranger = remember("Yes, I ran it in Boston and finished in four hours.")
    # The fusion's bonus on its own: the second stage (memories.recall.rerank) reads the words
    # and rightly likes the stranger's "Boston"; tests/memories/test_rerank.py covers it.
    found = hits("marathon in Boston ran hours", lists=("keyword",), second_stage=False)
    assert found[stranger.pk].explanation.keyword_rank < found[replied.pk].explanation.keyword_rank
    e = found[replied.pk].explanation
    assert e.neighbour_of == asked.pk
    assert e.neighbour == pytest.approx(NEIGHBOUR_WEIGHT * found[asked.pk].explanation.rrf)
    assert found[stranger.pk].explanation.neighbour == 0.0
    assert found[stranger.pk].explanation.neighbour_of is None
    assert found[replied.pk].score > found[stranger.pk].score
    order = list(found)
    assert order.index(replied.pk) < order.index(stranger.pk)


def test_the_bonus_is_part_of_the_product() -> None:
    question, answer = conversation("Where is the cello lesson?", "The cello lesson is in Leeds.")
    remember("Where is the cello lesson?", question)
    replied = remember("The cello lesson is in Leeds.", answer)
    hit = hits("cello lesson Leeds")[replied.pk]
    e = hit.explanation
    assert e.neighbour > 0
    product = (e.rrf + e.neighbour) * e.importance * e.confidence * e.recency * e.scope
    product *= e.superseded * e.second_stage
    assert hit.score == pytest.approx(product)
    assert e.final == pytest.approx(product)
    assert e.as_dict()["neighbour_of"] is not None


def test_only_adjacent_messages_of_one_thread_are_neighbours() -> None:
    messages = conversation("cello one", "filler", "cello three")
    first = remember("cello one", messages[0])
    third = remember("cello three", messages[2])  # two messages away: no neighbour
    elsewhere = conversation("cello elsewhere")[0]  # position 1 of another thread
    other_thread = remember("cello elsewhere", elsewhere)
    loose = remember("cello loose")  # no source message
    found = hits("cello")
    for memory in (first, third, other_thread, loose):
        assert found[memory.pk].explanation.neighbour == 0.0
        assert found[memory.pk].explanation.neighbour_of is None


def test_memories_from_one_message_lift_each_other() -> None:
    (message,) = conversation("I moved to Lisbon and adopted a dog named Piko.")
    city = remember("Alice moved to Lisbon.", message)
    dog = remember("Alice has a dog named Piko.", message)
    found = hits("Lisbon")
    assert found[dog.pk].explanation.neighbour_of == city.pk
    assert found[city.pk].explanation.neighbour_of == dog.pk
    assert found[dog.pk].explanation.neighbour == pytest.approx(
        NEIGHBOUR_WEIGHT * found[city.pk].explanation.rrf
    )


def test_the_first_stage_adds_no_neighbour_outside_the_lists() -> None:
    # The bonus only lifts hits; adding the memories written beside them is the second
    # stage's (test_recall_widen.py).
    question, answer = conversation("Which cello do you play?", "A Bavarian one.")
    asked = remember("Which cello do you play?", question)
    replied = remember("A Bavarian one.", answer)
    found = hits("cello", lists=("keyword",), second_stage=False)
    assert asked.pk in found
    assert replied.pk not in found
