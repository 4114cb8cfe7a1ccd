"""Introductions read piece by piece: "Hi, I'm Farah, a pharmacist at Boots in Leeds."."""

from __future__ import annotations

import pytest

from memories.extraction import regex
from memories.extraction.pipeline import propose
from memories.extraction.spelling import read_chat
from memories.extraction.types import Source
from spaceduck.core.providers.chat.heuristic import HeuristicChat


def slots(text: str) -> dict[str, str]:
    """Slot -> content of every identity slot kept for a user message."""
    source = Source(role="user", text=text, source_type="user_message")
    kept, _ = propose(source, HeuristicChat())
    return {c.slot: c.content for c in kept if c.slot}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Hi there, I'm Farah, a pharmacist at Boots in Leeds.",
            {"name": "Farah", "role": "pharmacist", "employer": "Boots", "location": "Leeds"},
        ),
        (
            "About me: 31, data engineer at Spotify, living in Gothenburg.",
            {"age": "31", "role": "data engineer", "employer": "Spotify", "location": "Gothenburg"},
        ),
        (
            "Hello! I'm Tomasz, 45, a carpenter in Kraków.",
            {"name": "Tomasz", "age": "45", "role": "carpenter", "location": "Kraków"},
        ),
        (
            "Quick intro: I'm Mei, product designer at Figma, based in Toronto.",
            {"name": "Mei", "role": "product designer", "employer": "Figma", "location": "Toronto"},
        ),
        (
            "hey im priya, 29, nurse at the NHS",
            {"name": "Priya", "age": "29", "role": "nurse", "employer": "NHS"},
        ),
    ],
)
def test_every_piece_of_an_introduction_fills_its_slot(text: str, expected: dict[str, str]) -> None:
    found = slots(text)

    assert set(found) == set(expected)
    for slot, value in expected.items():
        assert value in found[slot], slot


def test_a_chat_introduction_title_cases_the_values() -> None:
    found = slots("yo im sam, 22, bartender in leeds")

    assert found["name"] == "The user's name is Sam."
    assert found["age"] == "The user is 22 years old."
    assert found["location"] == "The user lives in Leeds."
    assert "bartender" in found["role"]


def test_an_introduction_may_open_with_the_role_instead_of_a_name() -> None:
    found = slots("Currently a senior consultant at Deloitte, based in Chicago.")

    assert set(found) == {"role", "employer", "location"}
    assert "senior consultant" in found["role"]
    assert found["employer"] == "The user works at Deloitte."
    assert found["location"] == "The user lives in Chicago."


def test_from_after_a_name_is_where_the_user_comes_from_not_where_they_live() -> None:
    assert slots("I'm Ada from Paris.") == {"name": "The user's name is Ada."}


@pytest.mark.parametrize("text", ["I'm ADHD.", "im tired", "I'm OK.", "im bored lol"])
def test_a_state_after_i_am_is_no_name(text: str) -> None:
    assert "name" not in slots(text)


@pytest.mark.parametrize("text", ["I'm not based in Berlin.", "I'm not living in Madrid anymore."])
def test_a_denied_place_fills_no_slot(text: str) -> None:
    assert regex.extract(read_chat(text)) == []
    assert "location" not in slots(text)
