"""memories.extraction.spelling: chat spelling read as standard English, values left as typed."""

from __future__ import annotations

import pytest

from memories.extraction.pipeline import propose
from memories.extraction.spelling import read_chat
from memories.extraction.types import Source
from spaceduck.core.providers.chat.heuristic import HeuristicChat


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("im so done with this", "I'm so done with this"),
        ("can u check my maths", "can you check my maths"),
        ("pls keep it short", "please keep it short"),
        ("i dont drink coffee", "I don't drink coffee"),
        ("ive been there twice", "I've been there twice"),
        ("r u free later", "are you free later"),
    ],
)
def test_chat_spellings_of_function_words_are_read(text: str, expected: str) -> None:
    assert read_chat(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("im 23yo", "I'm 23 years old"),
        ("I am 34 y.o. and tired", "I am 34 years old and tired"),
        ("turned 41 y/o in May", "turned 41 years old in May"),
    ],
)
def test_an_age_in_chat_shorthand_reads_as_years_old(text: str, expected: str) -> None:
    assert read_chat(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my nmae is Gareth", "my name is Gareth"),
        ("i liev in Leeds", "I live in Leeds"),
        ("i wrk at a bakery", "I work at a bakery"),
        ("i wokr nights", "I work nights"),
    ],
)
def test_a_misspelt_trigger_word_is_repaired(text: str, expected: str) -> None:
    assert read_chat(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I work at Zalando",  # a name, as typed
        "I met Liev at the gym",  # one edit from "live", but capitalised: a name
        "I ate a lime with a fork",  # known words one edit from "live" and "work"
        "same game as last week",  # known words one edit from "name"
        "mail me at priya.r@x.com",  # the "r" of an address is no "are"
        "Yo, Dev here",  # a greeting, not "years old"
        "see https://u.example.com/r/im",  # a URL's parts are no chat spelling
        "ask u/spez about it",
    ],
)
def test_names_known_words_addresses_and_links_are_left_as_typed(text: str) -> None:
    assert read_chat(text) == text


def test_the_repaired_spelling_lets_a_slot_be_read_but_the_value_is_quoted() -> None:
    source = Source(role="user", text="my nmae is Gareth", source_type="user_message")

    kept, _ = propose(source, HeuristicChat())

    assert [(c.slot, c.content) for c in kept] == [("name", "The user's name is Gareth.")]


@pytest.mark.parametrize("said", ["we keep five quail", "I have nine cats", "five kids"])
def test_a_number_word_is_never_repaired_into_a_trigger(said: str) -> None:
    # "five" is one letter from "live": it was read as "we keep live quail".
    assert read_chat(said) == said
