"""Quoted, fictional, translated, hypothetical and retracted text never writes identity slots."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from memories.extraction import regex
from memories.extraction.pipeline import propose
from memories.extraction.reported import doubt_about, only_reported, reported_spans, strip_reported
from memories.extraction.types import Source
from spaceduck.core.providers.chat.heuristic import HeuristicChat
from tests.fakes.scripted_chat import ScriptedModel, memory_item

REPORTED = [
    # The three cases reported against the tuned extractor.
    "In my story the main character says: I am 35 years old and I live in Oslo",
    "translate to German: 'I live in Vienna and I work at Siemens'",
    "My name is Bond. James Bond. jk it's Steve",
    # The same shapes, phrased differently.
    "Can you translate this into Spanish: I am 42 years old and I live in Denver.",
    "My novel's narrator says: my name is Clara and I live in Lisbon.",
    "Hypothetically, if I lived in Paris, would I need a car?",
    "Imagine I am 80 years old and I live in a lighthouse.",
    "Pretend my name is Zed for this game.",
    "Proofread this sentence: I have been working at Google since 2019.",
    'My boss wrote "I live in Rome now and I am 50" in the chat.',
    "The template reads: My name is [NAME] and I live in [CITY].",
    "\u201cI live in Madrid and I work at Telefonica,\u201d she told me.",
    "I'm 29 lol jk I'm not telling you my age",
]


@pytest.mark.parametrize("text", REPORTED)
def test_no_identity_slot_comes_from_reported_text(text: str) -> None:
    chat = HeuristicChat()
    candidates, _ = propose(Source(role="user", text=text), chat)
    assert [c.slot for c in candidates if c.slot] == []
    assert [c.slot for c in regex.extract(text)] == []


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("No kidding, I moved to Berlin last month.", "location", "Berlin"),
        ("I live in Oslo. In my story the hero lives in Rome.", "location", "Oslo"),
        ("My name is Bond. jk, my name is Steve.", "name", "Steve"),
        ('I live in Leeds and my favourite quote is "carpe diem my friends".', "location", "Leeds"),
        ("Imagine a city with no cars. I live in Utrecht, which is close.", "location", "Utrecht"),
    ],
)
def test_the_users_own_statements_around_reported_text_still_count(
    text: str, slot: str, value: str
) -> None:
    found = {c.slot: c.content for c in regex.extract(text) if c.slot}
    assert value in found.get(slot, ""), found


def test_spans_cover_the_passage_after_a_framing_colon_to_the_end_of_its_paragraph() -> None:
    text = "Quick one. Translate to French: I live in Vienna.\n\nI live in Graz."
    stripped = strip_reported(text)
    assert "Vienna" not in stripped
    assert "I live in Graz." in stripped
    assert only_reported(text, "Vienna")
    assert not only_reported(text, "Graz")
    assert not only_reported(text, "Salzburg")  # not in the text at all


def test_spans_are_merged_and_ordered() -> None:
    text = 'jk. "one two three" and "four five six"'
    spans = reported_spans(text)
    assert spans == sorted(spans)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(spans))


class SlotCopyingChat(ScriptedModel):
    """A model that takes every first-person claim at face value, quoted or not."""

    def __init__(self, slots: list[tuple[str, str]]) -> None:
        self.slots = slots

    def memories(self, text: str, role: str) -> list[dict[str, Any]]:
        return [memory_item(content=content, slot=slot) for slot, content in self.slots]


@pytest.mark.parametrize(
    ("text", "slot", "content"),
    [
        (REPORTED[0], "age", "The user is 35 years old."),
        (REPORTED[0], "location", "The user lives in Oslo."),
        (REPORTED[1], "location", "The user lives in Vienna."),
        (REPORTED[1], "employer", "The user works at Siemens."),
        (REPORTED[2], "name", "The user's name is Bond."),
        (REPORTED[4], "name", "The user's name is Clara."),
    ],
)
def test_the_firewall_refuses_a_models_slot_taken_from_reported_text(
    text: str, slot: str, content: str
) -> None:
    chat = SlotCopyingChat([(slot, content)])
    candidates, verdicts = propose(Source(role="user", text=text), chat)
    assert candidates == []
    assert [v.reason for v in verdicts if v.candidate.slot == slot] == ["reported_text"]


def test_a_models_slot_the_user_states_outside_the_quote_is_kept() -> None:
    text = 'I live in Oslo. My novel opens with "I live in Rome and hate it".'
    chat = SlotCopyingChat([("location", "The user lives in Oslo.")])
    candidates, _ = propose(Source(role="user", text=text), chat)
    assert [c.content for c in candidates] == ["The user lives in Oslo."]


@pytest.mark.parametrize(
    "text",
    [
        "Oh sure, and I'm the Queen of England.",
        "Great, another Monday. I just LOVE Mondays. Not.",
        "Oh yes, I run a marathon every single day, said no one ever.",
        "Sure, I totally speak twelve languages fluently.",
        "Yeah right, I'm a billionaire astronaut.",
        "I love waiting in queues /s",
    ],
)
def test_sarcasm_is_reported_not_asserted(text: str) -> None:
    assert not re.search(r"\b(?:i|i'm)\b", strip_reported(text), re.IGNORECASE)


@pytest.mark.parametrize(
    "text",
    [
        "Sure, I live in Berlin.",  # an answer, not a joke
        "Yes, I have two cats. I do not.",  # "not" inside a sentence takes nothing back
        "Of course I remember: I work at Stripe.",
        "I wrote the /s flag into the script yesterday.",
    ],
)
def test_a_plain_answer_is_not_sarcasm(text: str) -> None:
    assert "I " in strip_reported(text)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("```python\nprint('I live in Oslo')\n```\nI live in Graz.", "Graz"),
        (
            'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
            "ValueError: I live in Oslo\n\nI live in Graz.",
            "Graz",
        ),
        ("2024-05-01 12:00:03 ERROR lookup failed: I live in Oslo\nI live in Graz.", "Graz"),
        ("[WARN] user said I live in Oslo\nI live in Graz.", "Graz"),
        ("ERROR:root:I live in Oslo\nI live in Graz.", "Graz"),
        ("import os\nfrom app import city\nprint('I live in Oslo')\nI live in Graz.", "Graz"),
        ("user.city = 'Oslo'\nI live in Graz.", "Graz"),
        ('{"name": "Ada", "city": "Oslo"}\nI live in Graz.', "Graz"),
    ],
)
def test_code_and_log_pastes_are_not_the_user_speaking(text: str, kept: str) -> None:
    assert only_reported(text, "Oslo")
    assert not only_reported(text, kept)


@pytest.mark.parametrize(
    "text",
    [
        "WARNING: I'm allergic to peanuts.",
        "let me know, I live in Graz.",
        "class starts at 9 and I live in Graz.",
        "Yes, I definitely live in Graz.",
        "Of course I live in Graz.",
    ],
)
def test_prose_that_looks_like_a_paste_or_a_joke_is_the_user(text: str) -> None:
    assert reported_spans(text) == []


@pytest.mark.parametrize(
    ("text", "content", "why"),
    [
        ("Great weather. I just LOVE Mondays.", "The user loves Mondays.", "sarcasm"),
        ("I'm the CEO of Google lol", "The user works as the CEO.", "joke"),
        ("I adore waiting in queues 🙄", "The user adores waiting in queues.", "joke"),
        ("I love Mondays.", "The user loves Mondays.", ""),
        ("I LOVE jazz. I live in Rome.", "The user lives in Rome.", ""),  # another sentence
        ("That is SO funny lol", "The user finds it funny.", ""),  # not the user's statement
    ],
)
def test_doubt_about_a_statement_read_from_a_doubtful_sentence(
    text: str, content: str, why: str
) -> None:
    doubt = doubt_about(content, text)
    assert (why in doubt) if why else doubt == ""


@pytest.mark.parametrize(
    ("text", "gone", "kept"),
    [
        ("My sister says I live in Rome, but I live in Oslo.", "Rome", "I live in Oslo"),
        ("John told me he's moving to Berlin. I work at Siemens.", "Berlin", "I work at Siemens"),
        ("I'm allergic to gluten, my doctor thinks it started last year.", "started", "allergic"),
    ],
)
def test_what_someone_else_says_is_reported_by_the_parse(text: str, gone: str, kept: str) -> None:
    stripped = strip_reported(text)
    assert gone not in stripped
    assert kept in stripped


def test_what_the_user_says_is_not_reported() -> None:
    assert strip_reported("I told my boss I'm moving to Lisbon.") == (
        "I told my boss I'm moving to Lisbon."
    )
