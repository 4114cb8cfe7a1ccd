"""The model's claim, end to end: a message saved over HTTP, the queued extraction asking the
fake OpenAI-compatible server on loopback (tests/fakes/openai_server.py), whose scripted model
answers each message with the memories written here, and the memories that come out.

What a model says of a fact (holder, predicate, value, polarity, mood, valid_from/valid_until)
decides what it replaces, whether it is one of the user's beliefs, and when it holds.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import pytest

from memories.extraction.classify_contract import SCHEMA_NAME
from memories.models import Memory
from spaceduck.core.providers import reset_providers
from tests.conftest import Actor
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.scripted_chat import memory_item

pytestmark = pytest.mark.django_db(transaction=True)  # commits, so the huey task runs

Answers = dict[str, list[dict[str, Any]]]
_MESSAGE = re.compile(r"\nMessage:\n(?P<text>.*)\Z", re.DOTALL)
# Any other job (arbitration, summaries) gets an answer valid for its schema.
_OTHER_JOBS = {"summary": "A summary.", "verdict": "consistent", "reason": "Fine.", "memories": []}


@pytest.fixture
def answers(settings: Any, fake_openai: FakeOpenAI) -> Answers:
    """Point extraction at the fake server; its model answers a message with answers[text]."""
    settings.SPACEDUCK_CHAT = {
        "provider": "openai",
        "model": "scripted",
        "base_url": fake_openai.base_url,
        "api_key": "k",
        "timeout": 5,
    }
    reset_providers()
    scripted: Answers = {}

    def reply(request: dict[str, Any]) -> str:
        if request["response_format"]["json_schema"]["name"] != SCHEMA_NAME:
            return json.dumps(_OTHER_JOBS)
        found = _MESSAGE.search(request["messages"][-1]["content"])
        assert found is not None
        return json.dumps({"memories": scripted[found["text"]]})

    fake_openai.set_chat_handler(reply)
    return scripted


@pytest.fixture
def say(owner: Actor, answers: Answers) -> Any:
    """say(text, *memories): the model answers ``text`` with ``memories``; the message goes
    in over HTTP and the extraction record comes back (it ran, and finished)."""
    thread = owner.post("/api/threads", {"namespace": "user:alice"}).json()

    def send(text: str, *memories: dict[str, Any]) -> dict[str, Any]:
        answers[text] = list(memories)
        saved = owner.post(
            f"/api/threads/{thread['id']}/messages", {"role": "user", "content": text}
        )
        assert saved.status_code == 201, saved.content
        record = owner.get(f"/api/extractions/{saved.json()['extraction']['id']}").json()
        assert record["status"] == "done", record["errors"]
        return record

    return send


def fact(content: str, claim: dict[str, Any] | None, **fields: Any) -> dict[str, Any]:
    return memory_item(content=content, claim=claim, **fields)


def claim(value: str, **fields: Any) -> dict[str, Any]:
    said: dict[str, Any] = {
        "holder": "user",
        "predicate": "drive",
        "value": value,
        "polarity": "affirmed",
        "mood": "asserted",
        "valid_from": None,
        "valid_until": None,
    }
    return said | fields


def active() -> dict[str, tuple[str, str, str, str]]:
    """The active memories' claim columns, by content."""
    return {
        m.content: (m.claim_subject, m.claim_attribute, m.claim_value, m.claim_polarity)
        for m in Memory.objects.filter(status="active")
    }


def candidate(record: dict[str, Any]) -> dict[str, Any]:
    (verdict,) = record["candidates"]
    return verdict


SKODA = "The user drives a Skoda."


def test_a_normalised_claim_is_stored_and_a_new_value_replaces_it(say: Any) -> None:
    say("I drive a Skoda as well.", fact(SKODA, claim("Skoda as well.")))
    assert active() == {SKODA: ("user", "drive", "skoda", "affirmed")}

    record = say(
        "Sold it, I drive a Volvo now.",
        fact("The user drives a Volvo.", claim("a Volvo now", predicate="Drive")),
    )

    assert active() == {"The user drives a Volvo.": ("user", "drive", "volvo", "affirmed")}
    assert candidate(record)["reason"] == "superseded older memory"
    assert Memory.objects.get(content=SKODA).status == "superseded"


def test_the_wife_s_claim_leaves_the_user_s_alone(say: Any) -> None:
    say("I drive a Skoda.", fact(SKODA, claim("skoda")))

    say(
        "My wife drives a Fiat.",
        fact("The user's wife drives a Fiat.", claim("fiat", holder="user's wife")),
    )

    assert active() == {
        SKODA: ("user", "drive", "skoda", "affirmed"),
        "The user's wife drives a Fiat.": ("user's wife", "drive", "fiat", "affirmed"),
    }


def test_a_hypothetical_claim_is_never_active_on_its_own(say: Any) -> None:
    say("I drive a Skoda.", fact(SKODA, claim("skoda")))

    record = say(
        "Maybe a Tesla next year, we will see.",
        fact("The user may drive a Tesla next year.", claim("tesla", mood="hypothetical")),
    )

    assert active() == {SKODA: ("user", "drive", "skoda", "affirmed")}
    verdict = candidate(record)
    assert verdict["decision"] == "stored"
    assert "hypothetical" in verdict["candidate"]["doubt"]
    assert verdict["candidate"]["claim"]["mood"] == "hypothetical"
    tesla = Memory.objects.get(pk=verdict["memory_id"])
    assert tesla.status == "candidate"


def test_an_omitted_claim_is_read_by_the_rules(say: Any) -> None:
    say("I drive a Skoda.", fact(SKODA, claim("skoda")))

    record = say("I have been vegetarian for years.", fact("The user is vegetarian.", claim=None))

    assert active() == {
        SKODA: ("user", "drive", "skoda", "affirmed"),
        "The user is vegetarian.": ("user", "diet", "vegetarian", "affirmed"),
    }
    assert candidate(record)["candidate"]["claim"] == {
        "subject": "user",
        "attribute": "diet",
        "value": "vegetarian",
        "polarity": "affirmed",
        "mood": "asserted",
    }


def test_a_malformed_claim_fails_nothing_and_is_logged(
    say: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="memories.extraction.classify"):
        say(
            "I have been vegetarian for years.",
            fact("The user is vegetarian.", claim("vegetarian", mood="wishful")),
        )
        record = say("I drive a Skoda.", fact(SKODA, claim("skoda", valid_until="when it breaks")))

    assert active() == {
        "The user is vegetarian.": ("user", "diet", "vegetarian", "affirmed"),  # the rules'
        SKODA: ("user", "drive", "skoda", "affirmed"),  # the model's, without the bad date
    }
    assert candidate(record)["candidate"]["valid_until"] is None
    assert "mood 'wishful' left to the rules" in caplog.text
    assert "valid_until 'when it breaks' is not an ISO 8601 date" in caplog.text


def test_the_validity_is_carried_on_the_candidate(say: Any) -> None:
    record = say(
        "I drive a Skoda, until March.",
        fact(SKODA, claim("skoda", valid_from="2026-01-12", valid_until="2026-03-31")),
    )

    # The Memory columns for them are another change; the record holds the candidate's.
    said = candidate(record)["candidate"]
    assert said["valid_from"] == "2026-01-12T00:00:00+00:00"
    assert said["valid_until"] == "2026-03-31T23:59:59.999999+00:00"
    assert active() == {SKODA: ("user", "drive", "skoda", "affirmed")}


def test_a_former_state_is_an_episode_and_replaces_nothing(say: Any) -> None:
    say("I drive a Skoda.", fact(SKODA, claim("skoda")))

    record = say(
        "I used to own a Lada.",
        fact(
            "The user used to own a Lada.",  # no event verb: the gate lets a former state by
            claim("lada", predicate="own", polarity="past", mood="past", valid_from="2009-05-01"),
        ),
    )

    lada = Memory.objects.get(pk=candidate(record)["memory_id"])
    # A past state keeps its claim (it ends "owns a Lada" if that were held), with its mood.
    assert (lada.kind, lada.status, lada.claim_attribute) == ("episode", "active", "about:lada")
    assert (lada.claim_polarity, lada.claim_mood) == ("past", "past")
    assert lada.occurred_at is not None
    assert lada.occurred_at.year == 2009
    assert active()[SKODA] == ("user", "drive", "skoda", "affirmed")


def test_an_event_that_ends_a_state_replaces_it_as_the_rules_would(say: Any) -> None:
    say("I drive a Skoda.", fact(SKODA, claim("skoda")))

    record = say(
        "Sold the Skoda last week.",
        fact(
            "The user sold their Skoda.",
            claim("skoda", polarity="negated"),
            kind="episode",
            time_hint="last week",
        ),
    )

    assert candidate(record)["reason"] == "superseded older memory"
    assert Memory.objects.get(content=SKODA).status == "superseded"
    sold = Memory.objects.get(pk=candidate(record)["memory_id"])
    assert (sold.kind, sold.claim_attribute, sold.claim_polarity) == ("episode", "drive", "negated")
