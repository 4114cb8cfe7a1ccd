"""The parse reader (memories.extraction.understanding) and the conversation around a
message (memories.extraction.conversation), read without a database: what each statement
says, its claim, its validity, and what is left to the rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memories.extraction import conversation, understanding
from memories.extraction.pipeline import propose
from memories.extraction.types import Source
from spaceduck.core.providers import get_chat

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)  # a Sunday


def claims(text: str) -> list[tuple[str, str, str, str, str]]:
    reading = understanding.read_message(text, NOW)
    return [
        (s.claim.subject, s.claim.attribute, s.claim.value, s.claim.polarity, s.claim.mood)
        for s in reading.statements
        if s.claim is not None
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Any verb's claim, not a fixed list of attributes; an ending ends any verb's.
        ("I play the cello and the piano.", [
            ("user", "about:cello", "play", "affirmed", "asserted"),
            ("user", "about:piano", "play", "affirmed", "asserted"),
        ]),
        ("I stopped playing the piano.", [("user", "about:piano", "play", "negated", "asserted")]),
        ("I gave up the trumpet.", [("user", "about:trumpet", "*", "negated", "asserted")]),
        ("I don't swim anymore.", [("user", "about:swim", "swim", "negated", "asserted")]),
        # Love and like are one stance.
        ("I don't really like hiking anymore.", [
            ("user", "opinion:hiking", "positive", "negated", "asserted"),
        ]),
        # Other people keep their own claims; a loose value is normalised.
        ("My sister drinks rooibos too.", [
            ("user's sister", "about:rooibos", "drink", "affirmed", "asserted"),
        ]),
        # Past states are the past.
        ("I used to live in Cork.", [("user", "location", "cork", "past", "past")]),
        # Not asserted: nothing.
        ("If I moved to Rome I'd learn Italian.", []),
        ("My coach insists I'm a natural sprinter.", []),
    ],
)  # fmt: skip
def test_a_claim_is_read_from_the_parse(text: str, expected: list[tuple[str, ...]]) -> None:
    assert claims(text) == expected


def test_a_coordinated_statement_is_one_memory_per_fact() -> None:
    reading = understanding.read_message(
        "I live in Bristol with my cat and work at the library.", NOW
    )
    assert [s.content for s in reading.statements] == ["The user has a cat."]
    # Where the user lives and works: the slot readers, clause by clause.
    assert reading.rest == "I live in Bristol. I work at the library."


def test_a_bounded_statement_holds_until_its_end_and_is_not_where_the_user_lives() -> None:
    (stay,) = understanding.read_message("I'm in Madrid for the week.", NOW).statements
    assert stay.claim is not None
    assert stay.claim.attribute == "stay:location"
    assert stay.validity.valid_until == NOW + timedelta(days=7)
    (until,) = understanding.read_message("I'm staying in Lisbon until Sunday.", NOW).statements
    assert until.validity.valid_until == datetime(2026, 12, 13, 23, 59, 59, tzinfo=UTC)


def test_since_starts_a_validity() -> None:
    (vegetarian,) = understanding.read_message("I've been vegetarian since 2019.", NOW).statements
    assert vegetarian.validity.valid_from == datetime(2019, 1, 1, tzinfo=UTC)


def test_another_persons_address_is_not_given_to_the_rules() -> None:
    reading = understanding.read_message("My boss Tom (tom@corp.example) sent me the invoice.", NOW)
    assert "tom@corp.example" not in reading.rest


def test_a_parser_that_fails_leaves_the_message_to_the_rules_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(text: str) -> object:
        raise RuntimeError("no weights")

    monkeypatch.setattr("spaceduck.core.parse.parse", broken)
    # A sentence the reader parses ("I live in Paris." alone is the slot readers', unparsed).
    reading = understanding.read_message("I play the cello.", NOW)
    assert (reading.statements, reading.rest) == ([], "I play the cello.")
    assert reading.notes == ["parser failed (RuntimeError): rules"]
    kept, verdicts = propose(Source(role="user", text="I play the cello."), get_chat())
    assert [c.content for c in kept] == ["The user plays the cello."]  # the rules read it
    assert [(v.decision, v.reason) for v in verdicts] == [
        ("fallback", "parser failed (RuntimeError): rules")
    ]


def test_a_message_too_long_to_parse_goes_to_the_rules_with_its_reason() -> None:
    text = "I play the cello. " * 2_000
    reading = understanding.read_message(text, NOW)
    assert reading.rest == text
    assert reading.notes
    assert reading.notes[0].startswith("not parsed: 36000 characters")


def test_questions_and_introductions_are_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str) -> object:
        raise AssertionError(f"parsed {text!r}")

    monkeypatch.setattr("spaceduck.core.parse.parse", refuse)
    for text in (
        "Can you suggest some dinners?",
        "My name is Sam.",
        "I guess I like tea.",
        "I live in Paris. I work at CERN as a nurse.",  # identity slots only
    ):
        assert understanding.read_message(text, NOW).rest == text


@pytest.mark.parametrize(
    ("question", "reply", "said"),
    [
        ("Sure - which city are you in?", "Ghent", "I am in Ghent."),
        ("Which city are you in now?", "Porto.", "I am in Porto now."),
        ("Happy to help. How many kids, and how old?", "two. 4 and 9", "I have two kids."),
        ("Of course. Any dietary restrictions?", "coeliac so no gluten",
         "The user's dietary restrictions include coeliac."),
        ("Do you eat meat?", "nope", "I do not eat meat."),
        ("Do you have a car, or should it be public transport?", "no car", "I do not have a car."),
        ("Do you travel abroad much? Roaming might matter.", "hardly ever",
         "I rarely travel abroad."),
        ("Welcome back! Still in Leicester?", "nope, Nottingham since the spring",
         "I am in Nottingham now."),
        ("Which city do you call home these days?", "I moved to Tokyo last month.", None),
        ("Shall I go on?", "Ghent", None),
    ],
)  # fmt: skip
def test_a_short_answer_is_read_with_the_question(
    question: str, reply: str, said: str | None
) -> None:
    assert conversation.answer_to(question, reply) == said


@pytest.mark.parametrize(
    ("message", "memories", "rewritten"),
    [
        ("no wait sorry, it's Wednesday. same time",
         ["The user's dentist appointment is on Tuesday at 3:15."],
         "The user's dentist appointment is on Wednesday at 3:15."),
        ("sorry, brain fart - not Vienna but Venice",
         ["The user is flying to Vienna on the 14th."],
         "The user is flying to Venice on the 14th."),
        ("Correction, it's three cats, not two.", ["The user has two cats."],
         "The user has three cats."),
        ("Actually make it 10.", ["The user runs 5 km."], "The user runs 10 km."),
        ("Oops, I meant Jon with an h.", ["The user's manager is Jonh."],
         "The user's manager is Jon."),
        ("two more hatched this week, so six now!", ["The user keeps four chickens."],
         "The user keeps six chickens."),
        ("I moved to Tokyo.", ["The user lives in Paris."], None),
    ],
)  # fmt: skip
def test_a_correction_rewrites_the_memory_it_points_at(
    message: str, memories: list[str], rewritten: str | None
) -> None:
    correction = conversation.correction_in(message)
    rows = list(enumerate(memories, start=1))
    found = conversation.corrected(rows, correction) if correction else []
    assert [r.content for r in found] == ([rewritten] if rewritten else [])


def test_a_reader_bug_on_one_sentence_leaves_it_to_the_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: object) -> object:
        raise ValueError("a bug")

    monkeypatch.setattr(understanding, "_sentence", broken)
    reading = understanding.read_message("I play the cello.", NOW)
    assert (reading.statements, reading.rest) == ([], "I play the cello.")
    assert reading.notes == ["parse reader failed (ValueError): rules"]
