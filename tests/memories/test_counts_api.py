"""A count said again (issue 39, item 4: "changed counts resolve against" the memories
before), through the HTTP API: a number in a short message changes the recent memory that
counts the same thing, and supersedes it; an age, a time, or a count of something no
memory counts changes nothing."""

from __future__ import annotations

import pytest

from tests.conftest import Actor
from tests.memories.test_beliefs_api import contents, say

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("first", "then", "now"),
    [
        (
            "I'm on six cups of tea a day, minimum.",
            "cut down to two a day, trying to sleep better",
            "The user is on two cups of tea a day, minimum.",
        ),
        (
            "I usually get about eight hours of sleep a night.",
            "honestly it's more like five",
            "The user usually gets about five hours of sleep a night.",
        ),
        (
            "My longest run so far is 8 km.",
            "did 14 km on sunday, new longest!",
            "The user's longest run so far is 14 km.",
        ),
    ],
    ids=["cut-down", "more-like", "same-unit"],
)
def test_a_count_said_again_changes_the_memory_that_counts_it(
    owner: Actor, first: str, then: str, now: str
) -> None:
    say(owner, [first], [then])
    assert now in contents(owner)
    old_counts = ("six", "eight", "8 km")
    assert not any(c != now and any(w in c for w in old_counts) for c in contents(owner))


@pytest.mark.parametrize(
    "then",
    ["I'm 34 by the way.", "Call me at 5 tomorrow.", "I adopted 2 cats last week."],
    ids=["age", "time", "other-thing"],
)
def test_a_number_that_counts_something_else_changes_nothing(owner: Actor, then: str) -> None:
    say(owner, ["I'm on six cups of tea a day, minimum."], [then])
    assert "The user is on six cups of tea a day, minimum." in contents(owner)


def test_a_count_said_again_after_a_clause_about_something_else(owner: Actor) -> None:
    say(
        owner,
        ["I usually get about nine hours of sleep a night."],
        ["since the puppy came home it's more like six"],
    )
    assert "The user usually gets about six hours of sleep a night." in contents(owner)


def test_a_bare_number_after_another_verb_changes_nothing(owner: Actor) -> None:
    say(owner, ["I usually get about nine hours of sleep a night."], ["I bought 3 yesterday"])
    assert "The user usually gets about nine hours of sleep a night." in contents(owner)
