"""Recall's second stage (memories.recall.rerank): it re-scores the fused candidates, and the
explanation still multiplies to the score with the stage's factor shown."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memories.recall import rerank
from memories.recall.hybrid import RecallQuery, recall
from memories.write.services import memory_create

pytestmark = pytest.mark.django_db
NS = "user:alice"
ASKED = datetime(2023, 11, 15, 12, 0, tzinfo=UTC)


def add(content: str, **fields: object) -> int:
    return memory_create(namespace=NS, kind="episode", content=content, actor="t", **fields).pk  # type: ignore[arg-type]


def test_the_shipped_weights_are_loaded_with_their_split() -> None:
    fitted = rerank.weights()
    assert fitted is not None
    assert set(fitted.features) == set(rerank.FEATURES)
    assert fitted.fitted_on
    assert fitted.validated_on
    assert not set(fitted.fitted_on) & set(fitted.validated_on)


def test_the_explanation_multiplies_to_the_score_with_the_second_stage() -> None:
    add("Caroline went to a support group on Tuesday.")
    add("Melanie painted a sunrise over the lake.")
    add("Caroline is thinking about adopting a dog.")
    hits = recall(RecallQuery(NS, "When did Caroline go to the support group?", asked_at=ASKED))
    assert hits
    for hit in hits:
        e = hit.explanation
        product = (e.rrf + e.neighbour) * e.importance * e.confidence * e.recency * e.scope
        product *= e.superseded * e.second_stage
        assert hit.score == pytest.approx(product)
        assert e.final == pytest.approx(product)
    assert any(hit.explanation.second_stage != 1.0 for hit in hits)
    assert hits[0].memory.content.startswith("Caroline went")


def test_without_the_second_stage_its_factor_is_one() -> None:
    add("Caroline went to a support group on Tuesday.")
    hits = recall(RecallQuery(NS, "support group", second_stage=False))
    assert hits
    assert all(hit.explanation.second_stage == 1.0 for hit in hits)


@pytest.mark.parametrize(
    "question",
    [
        "Where did Melanie go camping in May 2023?",
        "Where did Melanie go camping on 20 May 2023?",
        "Where did Melanie go camping in May?",  # asked in November 2023: May 2023
        "Where did Melanie go camping last May?",
        "Where did Melanie go camping two weeks before 3 June 2023?",
        "Where did Melanie go camping in the spring of 2023?",
    ],
)
def test_a_date_in_the_query_lifts_the_memory_of_that_time(question: str) -> None:
    may = add("Melanie went camping with her kids.", occurred_at=datetime(2023, 5, 20, tzinfo=UTC))
    add("Melanie went camping with her family.", occurred_at=datetime(2023, 8, 12, tzinfo=UTC))
    add("Melanie went camping at the lake.", occurred_at=datetime(2022, 5, 21, tzinfo=UTC))
    hits = recall(RecallQuery(NS, question, asked_at=ASKED))
    assert hits[0].memory.pk == may
    assert hits[0].explanation.dates  # the range the query named is shown
    assert hits[0].explanation.second_stage > hits[1].explanation.second_stage


def test_without_a_date_in_the_query_the_dates_do_not_decide() -> None:
    add("Melanie went camping with her kids.", occurred_at=datetime(2023, 5, 20, tzinfo=UTC))
    add("Melanie went camping with her family.", occurred_at=datetime(2023, 8, 12, tzinfo=UTC))
    hits = recall(RecallQuery(NS, "Where did Melanie go camping?", asked_at=ASKED))
    assert all(not hit.explanation.dates for hit in hits)
