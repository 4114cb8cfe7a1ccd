from __future__ import annotations

import math

import pytest

from memories.extraction.gate import (
    MAX_CANDIDATES,
    MAX_SUMMARY_CHARS,
    MAX_TITLE_CHARS,
    has_action,
    validate,
)
from memories.extraction.sentences import is_sentence
from memories.extraction.types import Candidate


def fact(content: str = "The user lives in Paris.", **fields: object) -> Candidate:
    return Candidate(kind="fact", content=content, **fields)  # type: ignore[arg-type]


def reason_for(candidate: Candidate) -> str:
    accepted, rejected = validate([candidate])
    assert accepted == []
    assert len(rejected) == 1
    assert rejected[0].decision == "rejected"
    assert rejected[0].candidate is candidate
    return rejected[0].reason


def test_it_accepts_a_well_formed_fact_unchanged_in_identity() -> None:
    candidate = fact(tags=["identity", "location"], title="Location")
    accepted, rejected = validate([candidate])
    assert accepted == [candidate]
    assert accepted[0] is candidate
    assert rejected == []


def test_it_rejects_an_unknown_kind_with_the_kind_in_the_reason() -> None:
    assert reason_for(Candidate(kind="note", content="The user lives in Paris.")) == (
        "invalid_kind: 'note'"
    )


@pytest.mark.parametrize(
    "content",
    ["ok", "Thanks!", "thank you so much", "Ok ok ok, thanks!", "sounds good", "Got it, thx"],
)
def test_it_rejects_filler(content: str) -> None:
    assert reason_for(fact(content)).startswith("trivial_content")


@pytest.mark.parametrize("content", ["", "   ", "!!! ??? ...", "👍👍👍 🎉🎉", "— … —"])
def test_it_rejects_content_without_words(content: str) -> None:
    assert reason_for(fact(content)) == "trivial_content: no words"


@pytest.mark.parametrize(
    ("content", "accepted"),
    [
        ("Ada codes.", False),  # 2 words
        ("Ada codes daily.", True),  # 3 words, 16 chars
        ("Bo is a dev", False),  # 4 words, 11 chars
        ("Bob is a dev", True),  # exactly 12 chars
        ("  Bob is a dev  ", True),  # whitespace does not count
    ],
)
def test_it_needs_three_words_and_twelve_characters(content: str, accepted: bool) -> None:
    ok, rejected = validate([fact(content)])
    assert bool(ok) is accepted
    if not accepted:
        assert rejected[0].reason.startswith("too_short")


def test_it_rejects_content_over_1000_characters_and_keeps_1000() -> None:
    body = "The user likes " + "x" * 985 + "."
    assert len(body) == 1001
    assert reason_for(fact(body)) == "too_long: 1001 chars (max 1000)"
    accepted, _ = validate([fact(body[:-2] + ".")])
    assert len(accepted[0].content) == 1000


@pytest.mark.parametrize("value", [-0.01, 1.01, 2, math.nan, math.inf, True, "high", None])
@pytest.mark.parametrize("field", ["importance", "confidence"])
def test_it_rejects_scores_outside_zero_to_one(field: str, value: object) -> None:
    assert reason_for(fact(**{field: value})).startswith(f"invalid_{field}:")


@pytest.mark.parametrize("value", [0, 0.0, 0.5, 1, 1.0])
def test_it_accepts_scores_on_the_boundaries(value: float) -> None:
    accepted, _ = validate([fact(importance=value, confidence=value)])
    assert len(accepted) == 1


def test_a_procedure_needs_a_subtype() -> None:
    bare = Candidate(kind="procedure", content="Always run the tests before deploying.")
    assert reason_for(bare).startswith("missing_procedure_subtype")
    wrong = Candidate(
        kind="procedure", content="Always run the tests first.", procedure_subtype="habit"
    )
    assert reason_for(wrong) == "invalid_procedure_subtype: 'habit'"


def test_it_normalises_the_procedure_subtype() -> None:
    candidate = Candidate(
        kind="procedure", content="Never push to main directly.", procedure_subtype=" Constraint "
    )
    accepted, _ = validate([candidate])
    assert accepted[0].procedure_subtype == "constraint"


def test_it_clears_a_procedure_subtype_on_other_kinds() -> None:
    accepted, _ = validate([fact(procedure_subtype="constraint")])
    assert accepted[0].procedure_subtype == ""


@pytest.mark.parametrize(
    "content",
    [
        "The user moved to Berlin in 2021.",
        "The user went to Japan last year.",
        "The team shipped version 2 on Friday.",
        "The user is moving to Lisbon next month.",
        "The user met Grace at the conference.",
        "The user decided to switch to Postgres.",
        "The user will start a new job on Monday.",
    ],
)
def test_an_episode_with_an_action_passes(content: str) -> None:
    accepted, _ = validate([Candidate(kind="episode", content=content)])
    assert len(accepted) == 1


@pytest.mark.parametrize(
    "content",
    [
        "The user is in Berlin this week.",
        "A hundred people at the offsite.",
        "The user has a blue notebook.",
    ],
)
def test_an_episode_without_an_action_is_rejected(content: str) -> None:
    assert reason_for(Candidate(kind="episode", content=content)).startswith("no_action")


def test_it_rejects_an_unknown_slot_and_normalises_a_known_one() -> None:
    assert reason_for(fact(slot="shoe_size")) == "invalid_slot: 'shoe_size'"
    accepted, _ = validate([fact(slot=" Location ")])
    assert accepted[0].slot == "location"


def test_it_rejects_an_invalid_retention() -> None:
    assert reason_for(fact(retention="maybe")) == "invalid_retention: 'maybe'"


def test_it_normalises_tags() -> None:
    candidate = fact(tags=[" Identity ", "identity", "", "LOCATION", "Paris", "travel", "extra"])
    accepted, _ = validate([candidate])
    assert accepted[0].tags == ["identity", "location", "paris", "travel"]


@pytest.mark.parametrize("tags", [[], ["", "  "]])
def test_it_derives_a_tag_from_the_kind_when_none_is_left(tags: list[str]) -> None:
    accepted, _ = validate([Candidate(kind="episode", content="The user moved house.", tags=tags)])
    assert accepted[0].tags == ["episode"]


def test_it_cuts_long_titles_and_summaries_without_an_ellipsis() -> None:
    candidate = fact(title="  " + "t" * 200, summary="s" * 400)
    accepted, _ = validate([candidate])
    assert accepted[0].title == "t" * MAX_TITLE_CHARS
    assert accepted[0].summary == "s" * MAX_SUMMARY_CHARS
    assert "…" not in accepted[0].title


def test_exactly_eight_candidates_are_all_accepted() -> None:
    candidates = [fact(f"The user owns {n} bicycles.") for n in range(MAX_CANDIDATES)]
    accepted, rejected = validate(candidates)
    assert len(accepted) == 8
    assert rejected == []


def test_the_ninth_candidate_is_rejected_as_too_many() -> None:
    candidates = [fact(f"The user owns {n} bicycles.") for n in range(9)]
    accepted, rejected = validate(candidates)
    assert accepted == candidates[:8]
    assert [v.candidate for v in rejected] == [candidates[8]]
    assert rejected[0].reason.startswith("too_many_candidates")


def test_invalid_candidates_do_not_use_up_the_cap() -> None:
    junk = [fact("ok"), Candidate(kind="note", content="The user owns a bicycle.")]
    good = [fact(f"The user owns {n} bicycles.") for n in range(8)]
    accepted, rejected = validate(junk + good)
    assert accepted == good
    assert [v.reason.split(":")[0] for v in rejected] == ["trivial_content", "invalid_kind"]


def test_rejected_candidates_are_left_as_proposed() -> None:
    candidate = fact("ok", tags=["  MIXED  "], title="x" * 200)
    validate([candidate])
    assert candidate.tags == ["  MIXED  "]
    assert len(candidate.title) == 200


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The user prefers tabs.", True),
        ("Always run the tests.", True),
        ("It's raining.", True),
        ("The user doesn't eat meat.", True),
        ("The blue notebook on the desk.", False),
        ("Paris, France.", False),
        ("Something nice in the morning.", False),
    ],
)
def test_is_sentence(text: str, expected: bool) -> None:
    assert is_sentence(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The user bought a car.", True),
        ("The user relocated to Oslo.", True),
        ("The user is happy.", False),
        ("Indeed, a hundred.", False),
    ],
)
def test_has_action(text: str, expected: bool) -> None:
    assert has_action(text) is expected
