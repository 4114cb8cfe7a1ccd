"""Whose fact it is (issue 39, item 2: "other people's claims stay theirs"), through the HTTP
API, with sentences written for this test: a named person's or a relative's contact is
theirs, never the user's slot; a pronoun after a name is that person; a comma between a
subject and its verb and a possession said with "got" are read. Each failed on the main of
2026-12-05 (c6f9f62)."""

from __future__ import annotations

import pytest

from tests.conftest import Actor
from tests.memories.test_beliefs_api import active, contents, say

pytestmark = pytest.mark.django_db


def holders(owner: Actor) -> dict[str, str]:
    return {m["content"]: m["claim"]["subject"] for m in active(owner) if m["claim"]}


@pytest.mark.parametrize(
    ("text", "holder"),
    [
        ("Sam's number is 555 0100.", "sam"),
        ("My wife's email is kim@x.example.", "user's wife"),
    ],
    ids=["named-persons-number", "wifes-email"],
)
def test_someone_elses_contact_is_theirs(owner: Actor, text: str, holder: str) -> None:
    say(owner, [text])
    now = contents(owner)
    assert not any(c.startswith(("The user's email", "The user's phone")) for c in now), now
    assert list(holders(owner).values()) == [holder]


def test_she_after_a_named_friend_is_the_friend(owner: Actor) -> None:
    say(owner, ["My friend Ana lives in Porto; she loves surfing."])
    assert holders(owner) == {
        "The user's friend Ana lives in Porto.": "user's friend",
        "The user's friend loves surfing.": "user's friend",
    }


def test_a_subject_set_off_by_commas_keeps_its_verb(owner: Actor) -> None:
    say(owner, ["Tom, my flatmate, works at Google."])
    assert holders(owner) == {"The user's flatmate works at Google.": "user's flatmate"}


def test_what_the_user_has_got_is_had_now_with_its_name(owner: Actor) -> None:
    say(owner, ["We've got one cat, Pickle."])
    [cat] = [m for m in active(owner) if "Pickle" in m["content"]]
    assert cat["claim"]["polarity"] == "affirmed"


def test_he_names_the_latest_man_not_the_latest_person(owner: Actor) -> None:
    say(owner, ["My daughter loves horses. My son hates them and he plays football."])
    found = holders(owner)
    assert found.get("The user's son plays football.") == "user's son", found
    assert "The user's daughter plays football." not in found


def test_a_clause_without_its_subject_after_someone_else_is_not_the_users(
    owner: Actor,
) -> None:
    say(
        owner,
        ["Our neighbour Jim works at the post office. Stepped down from the parish council "
         "last spring."],
    )  # fmt: skip
    now = contents(owner)
    assert "The user's neighbour Jim works at the post office." in now
    assert not any(c.startswith("The user stepped") for c in now), now


def test_a_count_the_user_says_leaves_a_relatives_count_alone(owner: Actor) -> None:
    say(owner, ["My brother runs about 10 km every morning."], ["did 14 km on sunday!"])
    assert "The user's brother runs about 10 km every morning." in contents(owner)


def test_a_drink_the_tagger_does_not_know_is_still_what_ends(owner: Actor) -> None:
    """ "oolong" is tagged as an adverb: the claim still names it, so giving it up ends it."""
    say(owner, ["My husband drinks oolong. He says it helps him sleep."])
    [drink] = [m for m in active(owner) if "oolong" in m["content"]]
    assert drink["claim"]["attribute"] == "about:oolong"
    say(owner, ["He gave up oolong last week."])
    assert "The user's husband drinks oolong." not in contents(owner)
