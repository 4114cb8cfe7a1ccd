"""The miss classes the fresh-phrasing review found, one example each, through the offline pipeline.

Each case is a message from that review and what a person would store from it: identity in
unusual phrasing, "About me:" lists, to-do lists that are not workflows, facts inside questions,
preferences not phrased as like/prefer, a team's habit that is a rule, full dates resolved.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memories.extraction.pipeline import propose
from memories.extraction.types import Candidate, Source
from spaceduck.core.providers.chat.heuristic import HeuristicChat


def kept(text: str) -> list[Candidate]:
    candidates, _ = propose(
        Source(role="user", text=text, source_type="user_message"), HeuristicChat()
    )
    return candidates


def slots(text: str) -> dict[str, str]:
    return {c.slot: c.content for c in kept(text) if c.slot}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "backend dev at Zalando",
            {"role": "The user works as backend dev.", "employer": "The user works at Zalando."},
        ),
        ("52 years old, retired teacher", {"age": "The user is 52 years old."}),
        ("been with Deloitte for six years", {"employer": "The user works at Deloitte."}),
        ("i liev in bristol", {"location": "The user lives in Bristol."}),
        (
            "Hi, I'm Tomasz (Tom is fine), backend at Allegro, living in Poznań",
            {
                "name": "The user's name is Tomasz.",
                "employer": "The user works at Allegro.",
                "location": "The user lives in Poznań.",
            },
        ),
    ],
)
def test_identity_in_unusual_phrasing_fills_the_slots(text: str, expected: dict[str, str]) -> None:
    assert slots(text) == expected


def test_an_about_me_list_is_read_item_by_item() -> None:
    found = kept("About me:\n- 34\n- product designer at Miro\n- live in Berlin\n- vegetarian")

    assert {c.slot for c in found if c.slot} == {"age", "role", "employer", "location"}
    assert [c.content for c in found if not c.slot] == ["The user is vegetarian."]


def test_a_to_do_list_is_no_workflow_and_no_memory() -> None:
    assert kept("To do:\n- buy milk\n- call the plumber\n- renew passport") == []


def test_a_list_of_steps_is_still_one_workflow() -> None:
    (workflow,) = kept("Release checklist:\n- bump the version\n- tag the release\n- push the tag")

    assert (workflow.kind, workflow.procedure_subtype) == ("procedure", "workflow")


def test_a_fact_before_a_question_is_kept() -> None:
    (fact,) = kept("Since I'm vegan, what can I cook tonight?")

    assert (fact.kind, fact.content) == ("fact", "The user is vegan.")


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("cilantro tastes like soap", "The user thinks cilantro tastes like soap."),
        ("my favourite band is Radiohead", "The user's favourite band is Radiohead."),
    ],
)
def test_preferences_not_phrased_as_like_or_prefer(text: str, content: str) -> None:
    (fact,) = kept(text)

    assert (fact.kind, fact.content) == ("fact", content)


def test_a_team_habit_said_with_only_is_a_constraint() -> None:
    (rule,) = kept("we don't use ORMs here, raw SQL only")

    assert (rule.kind, rule.procedure_subtype) == ("procedure", "constraint")
    assert "raw SQL only" in rule.content


def test_an_episode_with_a_full_date_gets_occurred_at() -> None:
    (episode,) = [c for c in kept("I started at Stripe on 3 March 2024.") if c.kind == "episode"]

    assert episode.occurred_at is not None
    assert episode.occurred_at.astimezone(UTC).date() == datetime(2024, 3, 3).date()


def test_a_clause_inside_an_introduction_is_not_worded_as_a_description() -> None:
    text = "hiya im chloe, 19, studying nursing in cardiff. and I cant stand olives"

    plain = [c.content for c in kept(text) if not c.slot]

    assert plain == ["The user cannot stand olives."]
    assert slots(text) == {
        "name": "The user's name is Chloe.",
        "age": "The user is 19 years old.",
        "location": "The user lives in Cardiff.",
    }


@pytest.mark.parametrize(
    "text",
    [
        "For a test: pretend my name is John Smith and I'm 50.",
        "For testing purposes: imagine I live in Oslo and I'm 35.",
    ],
)
def test_a_pretend_passage_after_a_label_writes_no_slot(text: str) -> None:
    assert slots(text) == {}


@pytest.mark.parametrize(
    ("text", "contents"),
    [
        (
            "I use Obsidian for notes and Todoist for tasks.",
            ["The user uses Obsidian for notes.", "The user uses Todoist for tasks."],
        ),
        (
            "i have a cat named Pixel and a rabbit named Bun",
            ["The user has a cat named Pixel.", "The user has a rabbit named Bun."],
        ),
    ],
)
def test_two_objects_in_one_frame_are_two_facts(text: str, contents: list[str]) -> None:
    assert [c.content for c in kept(text)] == contents
