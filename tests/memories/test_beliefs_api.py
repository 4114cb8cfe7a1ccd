"""What the service believes is what the user said last (claims: memories.extraction.claims,
decided in memories.write.dedup), through the HTTP API. Each case is an example from the issue
that failed before claims: a change of mind kept beside the old belief, a paraphrase stored
twice, a near-identical sentence with a new value dropped as a duplicate."""

from __future__ import annotations

from typing import Any

import pytest

from memories.write.runner import run_extraction
from tests.conftest import Actor

pytestmark = pytest.mark.django_db
NS = "user:alice"


def say(owner: Actor, *sessions: list[str]) -> None:
    """Each session a thread, each message saved and its extraction run (the queue runs
    tasks inline in tests, on commit: the test's transaction never commits, so here)."""
    for session in sessions:
        thread = owner.post("/api/threads", {"namespace": NS}).json()["id"]
        for text in session:
            body = {"role": "user", "content": text}
            saved = owner.post(f"/api/threads/{thread}/messages", body)
            assert saved.status_code == 201
            assert run_extraction(saved.json()["extraction"]["id"]) is not None


def active(owner: Actor) -> list[dict[str, Any]]:
    response = owner.get("/api/memories", {"namespace": NS, "status": "active", "limit": 100})
    assert response.status_code == 200
    return response.json()["memories"]


def contents(owner: Actor) -> list[str]:
    return sorted(memory["content"] for memory in active(owner))


def test_a_change_of_mind_replaces_the_old_belief(owner: Actor) -> None:
    say(owner, ["I love jazz."], ["I don't like jazz anymore."])
    assert contents(owner) == ["The user no longer likes jazz."]
    [memory] = active(owner)
    assert memory["claim"] == {
        "subject": "user",
        "attribute": "opinion:jazz",
        "value": "positive",
        "polarity": "negated",
        "mood": "asserted",
    }


def test_a_new_quantity_replaces_the_old_one(owner: Actor) -> None:
    say(owner, ["I run 5 km every morning."], ["I've increased my morning run to 10 km now."])
    # The count said again rewrites the memory it changes (keeping "every morning").
    assert [c for c in contents(owner) if "km" in c] == ["The user runs 10 km every morning."]


def test_a_near_identical_sentence_with_a_new_value_is_an_update_not_a_duplicate(
    owner: Actor,
) -> None:
    say(owner, ["I prefer tea."], ["Actually, I prefer coffee over tea now."])
    assert contents(owner) == ["The user prefers coffee over tea now."]


def test_a_negated_memory_written_through_the_api_supersedes_the_affirmed_one(
    owner: Actor,
) -> None:
    first = owner.post(
        "/api/memories", {"namespace": NS, "kind": "fact", "content": "The user is vegetarian."}
    ).json()
    second = owner.post(
        "/api/memories", {"namespace": NS, "kind": "fact", "content": "The user is not vegetarian."}
    )
    assert second.status_code == 201, second.json()
    assert second.json()["decision"] == "stored"
    assert contents(owner) == ["The user is not vegetarian."]
    old = owner.get(f"/api/memories/{first['memory_id']}").json()
    assert old["status"] == "superseded"
    assert old["superseded_by_id"] == second.json()["memory_id"]


def test_a_move_retires_every_memory_of_the_old_home(owner: Actor) -> None:
    say(
        owner,
        ["I live in Berlin.", "My home is in Berlin, Germany."],
        ["I moved to Munich last week."],
    )
    facts = [c for c in contents(owner) if not c.startswith("The user moved")]
    assert facts == ["The user lives in Munich."]


@pytest.mark.parametrize(
    ("first", "second", "kept"),
    [
        ("I have two kids.", "I am a parent of two children.", "The user has two kids."),
        ("I live in Berlin.", "My home is in Berlin, Germany.", "The user lives in Berlin."),
    ],
)
def test_the_same_fact_in_other_words_is_one_memory(
    owner: Actor, first: str, second: str, kept: str
) -> None:
    say(owner, [first], [second])
    assert contents(owner) == [kept]


def test_the_same_attribute_of_different_people_is_never_merged(owner: Actor) -> None:
    say(owner, ["My sister's birthday is May 3."], ["My brother's birthday is June 9."])
    assert contents(owner) == [
        "The user's brother's birthday is June 9.",
        "The user's sister's birthday is May 3.",
    ]
