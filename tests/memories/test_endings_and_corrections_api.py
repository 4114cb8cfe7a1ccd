"""Endings, corrections and chat that says nothing (issue 39, items 2-4), through the HTTP
API: what the user ended or corrected leaves the active memories, the rest stays; a label
before a colon, talk about the conversation and someone else's doing are not the user's
facts. Each case failed on the main of 2026-12-05 (c6f9f62)."""

from __future__ import annotations

import pytest

from tests.conftest import Actor
from tests.memories.test_beliefs_api import active, contents, say

pytestmark = pytest.mark.django_db


def test_a_cancelled_membership_ends_the_membership(owner: Actor) -> None:
    say(
        owner,
        ["I teach geography at a secondary school and I'm a member of the local golf club."],
        ["fyi I cancelled my membership at the local golf club last month, barely went"],
    )
    now = contents(owner)
    assert "The user teaches geography at a secondary school." in now
    assert "The user is a member of the local golf club." not in now


def test_what_the_user_cannot_do_anymore_ends_what_named_it(owner: Actor) -> None:
    say(
        owner,
        ["my favourite show is Gilmore Girls, I rewatch it constantly"],
        ["can't watch Gilmore Girls anymore, it just annoys me now"],
    )
    now = contents(owner)
    assert "The user's favourite show is Gilmore Girls." not in now
    assert "The user cannot watch Gilmore Girls anymore." in now


def test_a_birthplace_corrected_in_a_later_turn_replaces_the_old_one(owner: Actor) -> None:
    say(
        owner,
        ["I was born in Bremen, moved around a lot as a kid"],
        ["ah I got that wrong earlier - I was born in Hanover. Bremen is where I went to school"],
    )
    born = [m for m in active(owner) if m["claim"] and m["claim"]["attribute"] == "birthplace"]
    assert [m["content"] for m in born] == ["The user was born in Hanover."]
    assert born[0]["claim"]["value"] == "hanover"


def test_wait_no_then_the_value_corrects_the_turn_before(owner: Actor) -> None:
    said = ["we live on the third floor, no lift", "wait no, fourth floor. I always mix those up"]
    say(owner, said)
    now = [c for c in contents(owner) if "floor" in c]
    assert now == ["The user and their family live on the fourth floor."]


def test_a_label_before_a_colon_and_talk_about_the_talk_are_not_facts(owner: Actor) -> None:
    say(owner, ["hi! bit of background before we start: I teach chemistry at a school."])
    say(owner, ["honest answer: I smoke. I know, I know."])
    assert sorted(contents(owner)) == [
        "The user smokes.",
        "The user teaches chemistry at a school.",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "I've got a rabbit called Thumper, and I work from home so he's never alone",
        "doctor has me on a low-fibre diet until my scan next Tuesday",
    ],
    ids=["work-from-home", "someone-elses-doing"],
)
def test_a_place_or_role_that_is_not_the_users_is_not_stored(owner: Actor, text: str) -> None:
    say(owner, [text])
    now = contents(owner)
    assert not any(c.startswith(("The user lives in", "The user works as")) for c in now), now


def test_stepping_down_from_a_role_ends_it_and_keeps_the_rest(owner: Actor) -> None:
    say(
        owner,
        ["I coach my daughter's netball team on Saturday mornings and I'm on the school PTA"],
        ["Stepped down from coaching the netball team, someone else has taken over."],
    )
    now = contents(owner)
    assert not any(c.startswith("The user coaches") for c in now), now
    assert "The user is on the school PTA." in now


def test_home_said_with_an_apostrophe_is_where_the_user_lives(owner: Actor) -> None:
    say(owner, ["home's Sheffield, been here about six years"])
    [home] = [m for m in active(owner) if m["claim"] and m["claim"]["attribute"] == "location"]
    assert home["claim"]["value"] == "sheffield"


def test_a_relatives_job_said_with_an_apostrophe_is_theirs(owner: Actor) -> None:
    say(owner, ["my brother's a firefighter at the city fire service, I work in software myself"])
    theirs = [m for m in active(owner) if m["claim"] and m["claim"]["subject"] == "user's brother"]
    assert [m["content"] for m in theirs] == [
        "The user's brother is a firefighter at the city fire service."
    ]
    assert not any("user works as" in m["content"].lower() for m in active(owner))


def test_home_now_after_a_past_home_is_where_the_user_lives(owner: Actor) -> None:
    say(owner, ["lived in Rome till 2019, these days home is Boston"])
    places = {
        (m["claim"]["value"], m["claim"]["polarity"])
        for m in active(owner)
        if m["claim"] and m["claim"]["attribute"] == "location"
    }
    assert places == {("rome", "past"), ("boston", "affirmed")}


def test_a_spelling_with_the_letters_named_corrects_the_name(owner: Actor) -> None:
    say(
        owner,
        ["My new manager's name is Micheal, seems nice so far"],
        ["ugh I spelled my manager's name wrong before - Michael, a before e"],
    )
    now = contents(owner)
    assert any("Michael" in c for c in now), now
    assert not any("Micheal" in c for c in now), now


def test_a_sector_said_beside_a_home_is_kept(owner: Actor) -> None:
    say(owner, ["quick intro: I'm Kwame, I live in Accra and I work in insurance"])
    now = contents(owner)
    assert "The user works in insurance." in now
    assert "The user lives in Accra." in now


def test_a_stay_over_the_holidays_keeps_the_home_said_with_it(owner: Actor) -> None:
    say(
        owner,
        ["Over the holidays I'm staying at my parents' in Tulsa, back home to Chicago on the 3rd"],
    )
    homes = [m for m in active(owner) if m["claim"] and m["claim"]["attribute"] == "location"]
    assert [m["claim"]["value"] for m in homes] == ["chicago"]
    [stay] = [m for m in active(owner) if "Tulsa" in m["content"]]
    assert stay["valid_until"] is not None  # the stay ends; the home does not


def test_a_place_of_work_said_with_a_car_outlives_the_car(owner: Actor) -> None:
    say(
        owner,
        ["I take the Volvo estate to work in Reading every day, about 25 mins each way"],
        ["sold the Volvo on saturday!! train from now on"],
    )
    now = contents(owner)
    assert "The user works in Reading." in now
    assert not any(c.startswith("The user takes the Volvo") for c in now), now


def test_what_the_user_says_in_a_role_play_they_set_up_is_the_roles(owner: Actor) -> None:
    from tests.memories.test_understanding_api import talk

    talk(
        owner,
        [
            "let's do a mock interview. pretend I'm a head chef applying to The Fat Duck, "
            "you ask the questions",
            ("assistant", "Sure. Tell me about yourself."),
            "I ran my own kitchen in Lyon for six years",
        ],
    )
    assert contents(owner) == []


def test_a_role_play_that_ended_leaves_the_user_speaking_for_themselves(owner: Actor) -> None:
    from tests.memories.test_understanding_api import talk

    talk(
        owner,
        [
            "pretend I'm a pilot, you ask the questions",
            ("assistant", "Tell me about your last flight."),
            "ok stop the game. for real: I play the cello.",
        ],
    )
    assert contents(owner) == ["The user plays the cello."]


def test_the_assistant_in_a_role_leaves_the_user_speaking_for_themselves(owner: Actor) -> None:
    from tests.memories.test_understanding_api import talk

    talk(
        owner,
        [
            "imagine you're my travel agent",
            ("assistant", "Happy to help! Where are you based?"),
            "I play the cello and I'm allergic to peanuts.",
        ],
    )
    assert sorted(contents(owner)) == [
        "The user is allergic to peanuts.",
        "The user plays the cello.",
    ]


def test_giving_up_on_a_language_ends_learning_it(owner: Actor) -> None:
    say(
        owner,
        ["I've been learning Portuguese on Duolingo"],
        ["Gave up on Portuguese, switched to Italian"],
    )
    now = contents(owner)
    assert not any(c.startswith("The user has been learning Portuguese") for c in now), now


def test_a_replaced_phone_ends_the_old_and_names_the_new(owner: Actor) -> None:
    say(owner, ["I use a Pixel 7"], ["Finally replaced my Pixel with an iPhone 15"])
    now = contents(owner)
    assert "The user uses a Pixel 7." not in now
    assert "The user has an iPhone 15." in now


def test_a_birthday_told_with_she_changes_the_relatives_age(owner: Actor) -> None:
    say(owner, ["My daughter is 7"], ["She turned 8 on Saturday!"])
    ages = [m for m in active(owner) if m["claim"] and m["claim"]["attribute"] == "age"]
    assert [(m["claim"]["subject"], m["claim"]["value"]) for m in ages] == [
        ("user's daughter", "8")
    ]


def test_a_name_the_tagger_misreads_is_not_the_user(owner: Actor) -> None:
    say(owner, ["Raj retired from dentistry last spring"])
    assert not any(c.startswith("The user retired") for c in contents(owner))
