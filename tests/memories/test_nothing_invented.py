"""Nothing invented (issue 28, item 4), through the HTTP API: sarcasm and jokes, hypotheticals
and wishes, quoted speech, other people's facts, passing states, code and log pastes and
sentence fragments are never stored as active memories of the user; a contact update and a
move said with "we" are learnt, and supersede what they replace."""

from __future__ import annotations

import pytest

from tests.conftest import Actor
from tests.memories.test_beliefs_api import NS, active, contents, say

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "text",
    [
        "Oh sure, and I'm the Queen of England.",
        "Great, another Monday. I just LOVE Mondays. Not.",
        "Oh yes, I run a marathon every single day, said no one ever.",
        "Sure, I totally speak twelve languages fluently.",
    ],
)
def test_sarcasm_is_not_taken_at_its_word(owner: Actor, text: str) -> None:
    say(owner, [text])
    assert contents(owner) == []


def test_a_sincere_answer_that_opens_with_sure_is_learnt(owner: Actor) -> None:
    say(owner, ["Sure, I live in Lisbon."])
    assert contents(owner) == ["The user lives in Lisbon."]


def test_an_elliptical_tail_is_not_stored_as_a_procedure(owner: Actor) -> None:
    say(owner, ["I live in Berlin."], ["I don't live in Berlin anymore, never did really."])
    assert contents(owner) == ["The user no longer lives in Berlin."]


def test_a_new_email_under_a_label_replaces_the_old_one(owner: Actor) -> None:
    say(
        owner,
        ["My email is ann@old.example."],
        ["New email: ann@new.example, please use that from now on."],
    )
    assert contents(owner) == ["The user's email is ann@new.example."]
    [memory] = active(owner)
    assert memory["claim"]["attribute"] == "email"
    assert memory["claim"]["value"] == "ann@new.example"


def test_home_for_me_is_a_place_to_live_and_a_move_with_we_replaces_it(owner: Actor) -> None:
    say(owner, ["Home for me is Lisbon."])
    [home] = active(owner)
    assert home["claim"]["attribute"] == "location"
    assert home["claim"]["value"] == "lisbon"
    say(owner, ["We just moved to Porto."])
    now = contents(owner)
    assert not any("Lisbon" in c for c in now), now
    assert "The user lives in Porto." in now
    assert not any("team" in c for c in now), now  # a household's "we", not a team's


def test_we_at_home_is_the_user_and_their_family(owner: Actor) -> None:
    say(owner, ["We have two cats."])
    assert contents(owner) == ["The user and their family have two cats."]


def test_we_at_work_is_still_the_team(owner: Actor) -> None:
    say(owner, ["We moved to Postgres last year."])
    [memory] = contents(owner)
    assert memory.startswith("The user's team moved to Postgres"), memory


def test_getting_married_replaces_being_engaged(owner: Actor) -> None:
    say(owner, ["I'm engaged to Sam."], ["Sam and I got married in June!"])
    now = contents(owner)
    assert "The user is married to Sam." in now
    assert not any("engaged" in c for c in now), now


def test_leaving_for_a_new_employer_replaces_the_old_one(owner: Actor) -> None:
    say(owner, ["I'm an engineer at Google."], ["I left Google and joined Stripe."])
    now = contents(owner)
    assert "The user works at Stripe." in now
    assert "The user works as an engineer." in now
    assert "The user works at Google." not in now


def test_a_count_said_as_there_are_replaces_the_old_count(owner: Actor) -> None:
    say(owner, ["We have two cats."], ["Now there are three cats in our house."])
    assert contents(owner) == ["The user and their family have three cats."]


def test_a_diet_word_is_no_name(owner: Actor) -> None:
    say(owner, ["I am pescatarian."])
    assert contents(owner) == ["The user is pescatarian."]


@pytest.mark.parametrize(
    "update",
    [
        "Use ann@new.example from now on.",
        "I've switched to a new address: ann@new.example.",
        "Please update my email to ann@new.example.",
    ],
)
def test_more_ways_to_give_a_new_email(owner: Actor, update: str) -> None:
    say(owner, ["My email is ann@old.example."], [update])
    now = contents(owner)
    assert "The user's email is ann@new.example." in now
    assert not any("ann@old.example" in c for c in now), now


def test_a_correction_names_the_old_value_without_denying_the_new(owner: Actor) -> None:
    say(owner, ["I'm 35."], ["Oops, I'm actually 36, not 35."])
    now = contents(owner)
    assert any("36" in c for c in now), now
    assert not any("35" in c and "36" not in c for c in now), now


def test_a_one_line_routine_is_a_habit_not_a_workflow(owner: Actor) -> None:
    say(owner, ["My routine: I run 5 km every morning."], ["Now I run 10 km instead of 5 km."])
    now = contents(owner)
    assert any("10 km" in c for c in now), now
    assert not any("5 km" in c and "10 km" not in c for c in now), now


@pytest.mark.parametrize(
    "text",
    [
        "If I lived in Oslo, I would cycle everywhere.",
        "If I won the lottery I'd move to Oslo.",
        "I wish I were a nurse.",
        "Maybe one day I'll move to Oslo.",
        "Suppose I worked at Google, would that help?",
    ],
)
def test_a_hypothetical_is_not_the_users_fact(owner: Actor, text: str) -> None:
    say(owner, [text])
    assert contents(owner) == []


@pytest.mark.parametrize(
    "text", ["I'd love to live in Oslo someday.", "I dream of living in Kyoto."]
)
def test_a_wish_waits_for_review_instead_of_being_believed(owner: Actor, text: str) -> None:
    say(owner, [text])
    assert contents(owner) == []
    pending = owner.get("/api/memories", {"namespace": NS, "status": "candidate"}).json()
    assert len(pending["memories"]) == 1


@pytest.mark.parametrize(
    "text",
    ['My boss always says "I love jazz".', "My friend told me she lives in Oslo."],
)
def test_other_peoples_sayings_are_not_the_users(owner: Actor, text: str) -> None:
    say(owner, [text])
    assert not any("user" in c.lower() and ("jazz" in c or "Oslo" in c) for c in contents(owner))


def test_another_persons_fact_is_stored_about_them(owner: Actor) -> None:
    say(owner, ["My sister is a vegetarian."])
    assert contents(owner) == ["The user's sister is a vegetarian."]


@pytest.mark.parametrize(
    "text",
    [
        "I'm so tired today.",
        "Ugh, feeling hungry right now.",
        "Kinda bored this afternoon tbh.",
        "I'm in a bad mood today.",
    ],
)
def test_a_passing_state_is_not_kept(owner: Actor, text: str) -> None:
    say(owner, [text])
    assert contents(owner) == []


@pytest.mark.parametrize(
    "text",
    [
        "```python\nuser.city = 'Oslo'\nprint('I live in Oslo')\n```",
        "2024-05-01 12:00:03 ERROR user_location=Oslo lookup failed: I live in Oslo not found",
        'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
        "ValueError: I live in Oslo is not a valid city",
        '{"name": "Ada", "city": "Oslo", "likes": ["jazz"]}',
    ],
)
def test_code_and_log_pastes_are_not_the_users_facts(owner: Actor, text: str) -> None:
    say(owner, [text])
    assert contents(owner) == []


@pytest.mark.parametrize(
    "update",
    [
        "We got another one, so I have three cats now.",
        "One more joined us, so three cats now.",
        "Correction, it's three cats, not two.",
        "Now I have three cats instead.",
    ],
)
def test_a_new_count_replaces_the_old_one_and_nothing_vague_is_kept(
    owner: Actor, update: str
) -> None:
    say(owner, ["I have two cats."], [update])
    now = contents(owner)
    assert any("three cats" in c for c in now), now
    assert not any("two cats" in c for c in now), now
    assert not any("another one" in c or "team" in c for c in now), now


def test_a_change_of_something_named_only_by_it_waits_for_review(owner: Actor) -> None:
    # "it" with a count of something no memory counts: nobody can tell what changed.
    say(owner, ["I run 5 km every morning."], ["I've increased it to 10 laps now."])
    pending = owner.get("/api/memories", {"namespace": NS, "status": "candidate"}).json()
    assert [m["content"] for m in pending["memories"]] == [
        "The user has increased it to 10 laps now."
    ]
    assert contents(owner) == ["The user runs 5 km every morning."]


def test_a_count_of_the_same_unit_changes_the_memory_that_counts_it(owner: Actor) -> None:
    # "it" is what counted km before: the count is rewritten, the old one superseded.
    say(owner, ["I run 5 km every morning."], ["I've increased it to 10 km now."])
    assert contents(owner) == ["The user runs 10 km every morning."]
    pending = owner.get("/api/memories", {"namespace": NS, "status": "candidate"}).json()
    assert pending["memories"] == []


def test_we_in_a_couple_is_the_user_and_their_partner(owner: Actor) -> None:
    say(owner, ["My boyfriend is Sam."], ["We broke up last month."])
    now = contents(owner)
    assert not any("boyfriend" in c for c in now), now
    [ended] = [c for c in now if "broke up" in c]
    assert ended.startswith("The user and their partner broke up"), ended


def test_someone_elses_account_of_the_user_is_not_the_users_fact(owner: Actor) -> None:
    say(owner, ["According to my sister, I'm a terrible cook."])
    assert contents(owner) == []


def test_an_age_said_on_a_birthday_is_the_age_not_a_passing_state(owner: Actor) -> None:
    say(owner, ["I'm 30 today!"])
    assert contents(owner) == ["The user is 30 years old."]


def test_quitting_a_job_ends_the_employer(owner: Actor) -> None:
    say(owner, ["I work at Google."], ["I quit my job at Google."])
    assert "The user works at Google." not in contents(owner)


def test_a_feeling_that_used_to_hold_is_kept_as_past(owner: Actor) -> None:
    say(owner, ["I used to love jazz."])
    [memory] = active(owner)
    assert memory["content"] == "The user used to love jazz."
    assert memory["claim"]["polarity"] == "past"
