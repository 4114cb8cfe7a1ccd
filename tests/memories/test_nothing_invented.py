"""Nothing invented (issue 28, item 4), through the HTTP API: sarcasm and jokes, hypotheticals
and wishes, quoted speech, other people's facts, passing states, code and log pastes and
sentence fragments are never stored as active memories of the user; a contact update and a
move said with "we" are learnt, and supersede what they replace."""

from __future__ import annotations

import pytest

from tests.conftest import Actor
from tests.memories.test_beliefs_api import active, contents, say

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
