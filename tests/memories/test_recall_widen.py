"""The second stage's pool also holds the memories written just before and after its best
candidates (memories.recall.hybrid.widen): an answer is often the turn after the question that
matched, and a memory written through POST /api/memories has no thread to say so."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memories.models import Memory, MemoryStatus
from memories.recall.hybrid import NEIGHBOUR_WEIGHT, RecallHit, RecallQuery, recall
from memories.store.selectors import written_around
from memories.write.services import memory_create

pytestmark = pytest.mark.django_db
NS = "user:alice"
DAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def add(content: str, namespace: str = NS, **fields: object) -> Memory:
    fields.setdefault("occurred_at", DAY)
    return memory_create(namespace=namespace, kind="episode", content=content, actor="t", **fields)  # type: ignore[arg-type]


def hits(text: str, **kwargs: object) -> dict[int, RecallHit]:
    return {h.memory.pk: h for h in recall(RecallQuery(NS, text, lists=("keyword",), **kwargs))}  # type: ignore[arg-type]


def test_the_memory_written_after_a_hit_joins_as_its_neighbour() -> None:
    asked = add("Melanie: What games did you all play at the picnic?")
    answer = add("Maria: Charades and a scavenger hunt.")
    found = hits("picnic games")
    assert answer.pk in found
    e = found[answer.pk].explanation
    assert found[answer.pk].match_source == "neighbour"
    assert e.vector_rank is None
    assert e.keyword_rank is None
    assert e.neighbour_of == asked.pk
    assert e.neighbour == pytest.approx(NEIGHBOUR_WEIGHT * found[asked.pk].explanation.rrf)
    product = (e.rrf + e.neighbour) * e.importance * e.confidence * e.recency * e.scope
    assert found[answer.pk].score == pytest.approx(product * e.superseded * e.second_stage)


def test_without_the_second_stage_nothing_is_added() -> None:
    add("Melanie: What games did you all play at the picnic?")
    answer = add("Maria: Charades and a scavenger hunt.")
    assert answer.pk not in hits("picnic games", second_stage=False)


def test_memories_that_occurred_apart_are_not_neighbours() -> None:
    add("Melanie: What games did you all play at the picnic?")
    later = add("Maria: Charades and a scavenger hunt.", occurred_at=DAY + timedelta(days=3))
    assert later.pk not in hits("picnic games")


def test_without_dates_the_write_times_decide() -> None:
    asked = add("Melanie: What games did you all play at the picnic?", occurred_at=None)
    answer = add("Maria: Charades and a scavenger hunt.", occurred_at=None)
    assert answer.pk in hits("picnic games")
    Memory.objects.filter(pk=answer.pk).update(created_at=asked.created_at + timedelta(days=1))
    assert answer.pk not in hits("picnic games")


def test_another_namespace_written_between_does_not_part_them() -> None:
    asked = add("Melanie: What games did you all play at the picnic?")
    between = add("Bob: picnic games are my thing", namespace="user:bob")
    answer = add("Maria: Charades and a scavenger hunt.")
    assert written_around([asked.pk, answer.pk]) == {
        asked.pk: (None, answer.pk),
        answer.pk: (asked.pk, None),
    }
    found = hits("picnic games")
    assert answer.pk in found
    assert between.pk not in found


def test_the_read_filters_apply_to_what_is_added() -> None:
    add("Melanie: What games did you all play at the picnic?")
    answer = add("Maria: Charades and a scavenger hunt.")
    Memory.objects.filter(pk=answer.pk).update(status=MemoryStatus.ARCHIVED)
    assert answer.pk not in hits("picnic games")


def test_a_superseded_memory_is_never_added_beside_its_superseder() -> None:
    old = add("The user lives in Paris.")
    new = add("The user lives in Tokyo.")
    Memory.objects.filter(pk=old.pk).update(status=MemoryStatus.SUPERSEDED, superseded_by=new)
    found = hits("Tokyo", include_superseded=True)
    assert new.pk in found
    assert old.pk not in found
