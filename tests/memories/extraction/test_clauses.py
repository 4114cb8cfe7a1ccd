"""memories.extraction.clauses: the offline second pass, read through ``pipeline.propose``."""

from __future__ import annotations

import pytest

from memories.extraction.clauses import clauses
from memories.extraction.pipeline import propose
from memories.extraction.spelling import read_chat
from memories.extraction.types import CONFIDENCE, Candidate, Source
from spaceduck.core.providers.chat.heuristic import HeuristicChat


def kept(text: str) -> list[Candidate]:
    """The candidates the offline extractor keeps for a user message."""
    source = Source(role="user", text=text, source_type="user_message")
    candidates, _ = propose(source, HeuristicChat())
    return candidates


def only(text: str) -> Candidate:
    (candidate,) = kept(text)
    return candidate


# --- cutting a message into clauses ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I run. I swim.", ["I run", "I swim"]),
        (
            "I play the cello; my wife plays the viola",
            ["I play the cello", "my wife plays the viola"],
        ),
        ("- I walk the dog\n- I water the plants", ["I walk the dog", "I water the plants"]),
        ("I knit, mostly socks", ["I knit, mostly socks"]),
    ],
)
def test_a_message_is_cut_into_sentences_clauses_and_items(text: str, expected: list[str]) -> None:
    assert [c.text for c in clauses(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Since I'm vegan, what can I cook tonight?", "I am vegan"),
        ("Being lactose intolerant, can I still eat hard cheese?", "I am lactose intolerant"),
    ],
)
def test_the_statement_before_a_question_is_a_clause(text: str, expected: str) -> None:
    assert [c.text.strip() for c in clauses(text)] == [expected]


@pytest.mark.parametrize("text", ["what can I cook tonight?", "Should I learn Go or Rust?"])
def test_a_question_is_no_clause(text: str) -> None:
    assert list(clauses(text)) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("i might get a cat soon??", "I might get a cat soon"),
        ("ok so honestly I think I prefer mornings", "I prefer mornings"),
    ],
)
def test_an_unsure_statement_is_a_hedged_clause(text: str, expected: str) -> None:
    (clause,) = clauses(read_chat(text))  # propose repairs chat spelling before cutting

    assert (clause.text, clause.hedged) == (expected, True)


# --- statements about the user --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("I knit, mostly socks", "The user knits, mostly socks."),
        ("I brew my own kombucha", "The user brews their own kombucha."),
        ("I foster rescue greyhounds", "The user fosters rescue greyhounds."),
        ("I keep bees in my garden", "The user keeps bees in their garden."),
    ],
)
def test_a_plain_statement_no_rule_knows_is_a_third_person_fact(text: str, content: str) -> None:
    candidate = only(text)

    assert (candidate.kind, candidate.content) == ("fact", content)
    assert candidate.confidence == CONFIDENCE["stated"]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Since I'm vegan, what can I cook tonight?", "The user is vegan."),
        ("Because I work nights, when should I go to the gym?", "The user works nights."),
        ("Given that I'm diabetic, which desserts are safe?", "The user is diabetic."),
        (
            "Being lactose intolerant, can I still eat hard cheese?",
            "The user is lactose intolerant.",
        ),
        ("Being colourblind, how do I read these charts?", "The user is colourblind."),
    ],
)
def test_a_statement_before_a_question_is_kept(text: str, content: str) -> None:
    candidate = only(text)

    assert (candidate.kind, candidate.content) == ("fact", content)


@pytest.mark.parametrize(
    "text",
    [
        "what can I cook tonight?",
        "How do I renew my passport?",
        "Should I learn Go or Rust?",
        "Can you recommend a podcast?",
    ],
)
def test_a_pure_question_gives_nothing(text: str) -> None:
    assert kept(text) == []


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("i might get a cat soon??", "cat"),
        ("i may take up climbing??", "climbing"),
        ("I'm thinking of learning Rust", "Rust"),
        ("I may switch teams in the autumn", "switch teams"),
    ],
)
def test_a_hedged_statement_is_a_fact_held_loosely(text: str, word: str) -> None:
    candidate = only(text)

    assert candidate.kind == "fact"
    assert word in candidate.content
    assert candidate.confidence < 0.7


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("ran my first 10k this morning", "ran their first 10k"),
        ("climbed Ben Nevis last Saturday", "climbed Ben Nevis"),
        ("baked sourdough last weekend", "baked sourdough"),
    ],
)
def test_a_diary_line_without_its_subject_is_an_episode(text: str, word: str) -> None:
    candidate = only(text)

    assert candidate.kind == "episode"
    assert candidate.content.startswith("The user ")
    assert word in candidate.content


# --- what is not the user's to remember -----------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "I'm so tired today",
        "I'm out of office until the 14th",
        "I'm away until the 3rd",
        "I'm really stressed today",
        "I'm so sleepy right now",
    ],
)
def test_a_passing_state_is_not_kept(text: str) -> None:
    assert kept(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "I need help with my essay",
        "I'm looking for a recipe",
        "I need a hand with my tax return",
        "I'm trying to find a good dentist",
        "I want help planning a trip",
    ],
)
def test_a_request_is_not_a_fact(text: str) -> None:
    assert kept(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "My GP says my cholesterol is high",
        "My dentist says I grind my teeth",
        "My mum says I work too hard",
        "My boss thinks I should take leave",
    ],
)
def test_what_other_people_say_is_not_kept(text: str) -> None:
    assert kept(text) == []


@pytest.mark.parametrize("text", ["I take it every morning", "I keep it in the fridge"])
def test_a_statement_about_an_unnamed_it_is_not_kept(text: str) -> None:
    assert kept(text) == []


# --- instructions and rules -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "can u stop with the emojis",
        "give me the answer first then explain",
        "always reply in Spanish",
        "never use emojis in your answers",
        "don't use bullet points in your replies",
        "from now on keep replies short",
    ],
)
def test_a_standing_instruction_about_replies_is_a_behavioral_procedure(text: str) -> None:
    candidate = only(text)

    assert (candidate.kind, candidate.procedure_subtype) == ("procedure", "behavioral")


@pytest.mark.parametrize(
    "text",
    [
        "Write me a diary entry",
        "Draft an outline for a talk about observability",
        "Write me a limerick about cheese",
        "Summarise this article",
        "Write a cover letter for this job",
    ],
)
def test_a_one_off_task_is_no_procedure(text: str) -> None:
    assert [c for c in kept(text) if c.kind == "procedure"] == []


@pytest.mark.parametrize(
    "text",
    [
        "Every incident gets a written postmortem",
        "No deploys after 4pm on Fridays",
        "Every release gets a changelog entry",
        "No meetings on Wednesdays",
        "Every pull request needs two approvals",
    ],
)
def test_an_impersonal_rule_is_a_constraint(text: str) -> None:
    candidate = only(text)

    assert (candidate.kind, candidate.procedure_subtype) == ("procedure", "constraint")
    assert candidate.content == f"{text}."


# --- lists ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "items"),
    [
        (
            "Languages I speak: English, Hindi, Tamil, German",
            ["English", "Hindi", "Tamil", "German"],
        ),
        (
            "Tools I use daily: Raycast, Obsidian, Linear, Figma",
            ["Raycast", "Obsidian", "Linear", "Figma"],
        ),
    ],
)
def test_an_inline_list_under_a_heading_gives_one_fact_per_item(
    text: str, items: list[str]
) -> None:
    candidates = kept(text)

    assert [c.kind for c in candidates] == ["fact"] * len(items)
    assert [c.content.rstrip(".").rsplit(" ", 1)[-1] for c in candidates] == items


@pytest.mark.parametrize(
    ("text", "items"),
    [
        (
            "Rules for my calendar:\n1. No meetings before 10\n"
            "2. Lunch stays blocked from 12 to 1\n3. Fridays stay free for deep work",
            ["No meetings before 10", "Lunch stays blocked", "Fridays stay free"],
        ),
        (
            "Rules for my inbox:\n1. Newsletters go to a separate folder\n2. Never reply after 9pm",
            ["Newsletters go to a separate folder", "Never reply after 9pm"],
        ),
    ],
)
def test_a_list_of_rules_gives_one_constraint_per_item(text: str, items: list[str]) -> None:
    candidates = kept(text)

    assert len(candidates) == len(items)
    assert all((c.kind, c.procedure_subtype) == ("procedure", "constraint") for c in candidates)
    for item in items:
        assert any(item in c.content for c in candidates), item


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        (
            "Release checklist:\n- bump the version\n- tag the release\n- push",
            ["bump the version", "tag the release", "push"],
        ),
        (
            "Deploy steps:\n- run the migrations\n- restart the workers\n- clear the cache",
            ["run the migrations", "restart the workers", "clear the cache"],
        ),
    ],
)
def test_a_list_of_steps_stays_one_workflow(text: str, steps: list[str]) -> None:
    candidate = only(text)

    assert (candidate.kind, candidate.procedure_subtype) == ("procedure", "workflow")
    assert all(step in candidate.content for step in steps)


@pytest.mark.parametrize(
    "text",
    [
        "Here's my week: dentist on Monday, gym on Tuesday, dinner with Sam on Friday",
        "Here's my week:\n- dentist on Monday\n- gym on Tuesday\n- dinner with Sam on Friday",
    ],
)
def test_a_plan_for_the_week_gives_no_fact_per_item(text: str) -> None:
    assert kept(text) == []
