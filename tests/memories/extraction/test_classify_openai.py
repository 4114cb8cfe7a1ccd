"""The classification stage with a model: OpenAIChat over real HTTP, and the answer reader."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memories.extraction.claims import MOODS
from memories.extraction.classify import candidates_from_json, date_phrase, resolve_time_hint
from memories.extraction.classify_contract import CLASSIFY_PROMPT, CLASSIFY_SCHEMA, SCHEMA_NAME
from memories.extraction.pipeline import classify
from memories.extraction.types import CONFIDENCE, IMPORTANCE
from spaceduck.core.providers.chat.openai import OpenAIChat
from spaceduck.core.providers.errors import ProviderError
from tests.fakes.openai_server import FakeOpenAI

NOW = datetime(2025, 6, 4, 15, 30, tzinfo=UTC)


def memory(**overrides: Any) -> dict[str, Any]:
    """One well-formed memory object, as a strict json_schema model returns it."""
    item: dict[str, Any] = {
        "kind": "fact",
        "title": "Prefers tea over coffee",
        "content": "The user prefers tea over coffee.",
        "summary": "Tea over coffee.",
        "importance": "standard",
        "confidence": "stated",
        "tags": ["preference", "food"],
        "procedure_subtype": "none",
        "slot": "none",
        "time_hint": "",
        "retention": "store",
        "reject_reason": "none",
    }
    return item | overrides


def answer(*memories: dict[str, Any]) -> str:
    return json.dumps({"memories": list(memories)})


def make_chat(fake: FakeOpenAI, timeout: float = 5.0) -> OpenAIChat:
    return OpenAIChat(model="test-chat", base_url=fake.base_url, api_key="sk-test", timeout=timeout)


# --- the request ---------------------------------------------------------------------------------
def test_classify_asks_for_the_classification_schema_in_strict_mode(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.enqueue("chat", content=answer())

    classify(make_chat(fake_openai), text="I prefer tea over coffee.", role="user")

    (request,) = fake_openai.requests
    body = request.json
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "schema": CLASSIFY_SCHEMA, "strict": True},
    }
    assert body["temperature"] == 0
    system, user = body["messages"]
    assert system == {"role": "system", "content": CLASSIFY_PROMPT}
    assert "Message role: user" in user["content"]
    assert "I prefer tea over coffee." in user["content"]


def test_classify_of_blank_text_sends_no_request(fake_openai: FakeOpenAI) -> None:
    assert classify(make_chat(fake_openai), text="  \n", role="user") == []
    assert fake_openai.requests == []


# --- reading the answer -
def test_classify_maps_buckets_to_floats_and_names_the_model_stage(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(
        "chat",
        content=answer(
            memory(),
            memory(
                kind="procedure",
                title="Never deploy on Fridays",
                content="Never deploy on Fridays.",
                importance="core",
                confidence="certain",
                tags=["Deploys", "deploys", " Work Rules "],
                procedure_subtype="constraint",
            ),
        ),
    )

    fact, rule = classify(make_chat(fake_openai), text="...", role="user")

    assert fact.kind == "fact"
    assert fact.content == "The user prefers tea over coffee."
    assert fact.importance == IMPORTANCE["standard"]
    assert fact.confidence == CONFIDENCE["stated"]
    assert (fact.procedure_subtype, fact.slot, fact.reject_reason) == ("", "", "")
    assert fact.stage == "model test-chat"  # the pages say which model proposed it
    assert rule.procedure_subtype == "constraint"
    assert (rule.importance, rule.confidence) == (0.85, 0.95)
    assert rule.tags == ["deploys", "work-rules"]


def test_an_empty_memories_list_means_nothing_to_remember(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("chat", content=answer())

    assert classify(make_chat(fake_openai), text="Thanks!", role="user") == []


def test_an_episode_time_hint_is_resolved() -> None:
    (episode,) = candidates_from_json(
        {"memories": [memory(kind="episode", content="The user quit.", time_hint="yesterday")]},
        now=NOW,
    )

    assert episode.time_hint == "yesterday"
    assert episode.occurred_at == NOW - timedelta(days=1)


def test_a_rejected_memory_keeps_its_reason() -> None:
    (noise,) = candidates_from_json(
        {"memories": [memory(retention="reject", reject_reason="ephemeral_noise")]}
    )

    assert (noise.retention, noise.reject_reason) == ("reject", "ephemeral_noise")


def test_an_identity_slot_is_kept() -> None:
    (fact,) = candidates_from_json(
        {"memories": [memory(content="The user lives in Tokyo.", slot="location")]}
    )

    assert fact.slot == "location"


def test_cosmetic_problems_are_repaired_not_fatal() -> None:
    (fact,) = candidates_from_json(
        {
            "memories": [
                memory(
                    title="x" * 100,
                    summary="",
                    tags=[],
                    procedure_subtype="",  # some servers send "" despite the enum
                    reject_reason="low_confidence",  # a stored memory has no reject reason
                )
            ]
        }
    )

    assert len(fact.title) <= 60
    assert fact.summary == fact.content
    assert fact.tags == ["fact"]
    assert fact.reject_reason == ""


# --- unusable answers are retryable failures, never "nothing to remember" -------------------------
@pytest.mark.parametrize(
    ("reply", "message"),
    [
        pytest.param({"content": "not json"}, "not valid JSON", id="malformed-json"),
        pytest.param({"content": "{}"}, "missing the required key 'memories'", id="no-memories"),
        pytest.param(
            {"content": '{"memories": {"kind": "fact"}}'},
            "type dict, expected array",
            id="not-a-list",
        ),
        pytest.param(
            {"content": answer({"kind": "fact"})}, "missing the required key", id="missing-key"
        ),
        pytest.param(
            {"content": answer(memory(kind="opinion"))}, "'kind' = 'opinion'", id="bad-kind"
        ),
        pytest.param(
            {"content": answer(memory(importance="huge"))}, "'importance' = 'huge'", id="bad-bucket"
        ),
        pytest.param(
            {"content": answer(memory(retention="maybe"))},
            "'retention' = 'maybe'",
            id="bad-retention",
        ),
        pytest.param({"content": answer(memory(tags="food"))}, "not a list of strings", id="tags"),
        pytest.param({"content": answer(memory(content=" "))}, "empty content", id="empty-content"),
        pytest.param(
            {"content": answer(memory(kind="procedure"))}, "without procedure_subtype", id="subtype"
        ),
        pytest.param(
            {"content": answer(memory(retention="reject"))}, "without reject_reason", id="reason"
        ),
        pytest.param({"content": '{"memories": ["a"]}'}, "is not an object", id="item-not-object"),
        pytest.param(
            {"status": 500, "body": {"error": {"message": "boom"}}}, "HTTP 500: boom", id="http-500"
        ),
        pytest.param(
            {"content": '{"memories": [', "finish_reason": "length"}, "cut off", id="truncated"
        ),
    ],
)
def test_classify_raises_provider_error_on_unusable_answers(
    fake_openai: FakeOpenAI, reply: dict[str, Any], message: str
) -> None:
    fake_openai.enqueue("chat", **reply)

    with pytest.raises(ProviderError) as caught:
        classify(make_chat(fake_openai), text="I prefer tea.", role="user")

    assert message in str(caught.value)
    assert "test-chat" in str(caught.value)


def test_classify_timeout_raises_provider_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("chat", delay=2.0)

    with pytest.raises(ProviderError, match=r"timed out after 0\.5s"):
        classify(make_chat(fake_openai, timeout=0.5), text="I prefer tea.", role="user")


# --- the schema -
def _objects(schema: dict[str, Any]) -> list[dict[str, Any]]:
    found = [schema] if schema.get("type") == "object" else []
    for child in [*schema.get("properties", {}).values(), *schema.get("anyOf", [])]:
        found += _objects(child)
    if "items" in schema:
        found += _objects(schema["items"])
    return found


def test_the_schema_is_strict_mode_compatible() -> None:
    objects = _objects(CLASSIFY_SCHEMA)

    assert len(objects) == 3  # the answer, one memory and its claim
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])


def test_optional_values_are_an_explicit_none_choice_or_null() -> None:
    props = CLASSIFY_SCHEMA["properties"]["memories"]["items"]["properties"]

    for key in ("procedure_subtype", "slot", "reject_reason"):
        assert props[key]["enum"][0] == "none"
    claim, null = props["claim"]["anyOf"]
    assert null == {"type": "null"}  # a fact with nothing a later fact could replace
    assert claim["properties"]["mood"]["enum"] == list(MOODS)
    for key in ("valid_from", "valid_until"):
        assert claim["properties"][key] == {"type": ["string", "null"]}


# --- time hints -
@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        ("today", NOW),
        ("last night", NOW - timedelta(days=1)),
        ("3 days ago", NOW - timedelta(days=3)),
        ("a week ago", NOW - timedelta(weeks=1)),
        ("last month", datetime(2025, 5, 4, 15, 30, tzinfo=UTC)),
        ("last year", datetime(2024, 6, 4, 15, 30, tzinfo=UTC)),
        ("last Wednesday", NOW - timedelta(weeks=1)),  # said on a Wednesday
        ("on the 2nd of February", datetime(2025, 2, 2, 15, 30, tzinfo=UTC)),
        ("December 24", datetime(2024, 12, 24, 15, 30, tzinfo=UTC)),  # the last one that passed
        ("in June", None),
        ("last summer", None),
        ("", None),
    ],
)
def test_resolve_time_hint(hint: str, expected: datetime | None) -> None:
    assert resolve_time_hint(hint, NOW) == expected


def test_date_phrase_keeps_the_precision_of_the_hint() -> None:
    assert date_phrase("yesterday", NOW) == "on 4 June 2025"
    assert date_phrase("last week", NOW) == "around 4 June 2025"
    assert date_phrase("last month", NOW) == "in June 2025"
    assert date_phrase("two years ago", NOW) == "in 2025"


def claim(**overrides: Any) -> dict[str, Any]:
    """One well-formed claim object, as a strict json_schema model returns it."""
    said: dict[str, Any] = {
        "holder": "user",
        "predicate": "live_in",
        "value": "ghent",
        "polarity": "affirmed",
        "mood": "asserted",
        "valid_from": None,
        "valid_until": None,
    }
    return said | overrides


def test_the_model_s_claim_is_kept_and_a_missing_or_none_claim_is_left_to_the_rules() -> None:
    said = claim(holder="The user", predicate="Live In", value="Ghent as well.")
    given, nothing, empty, omitted = candidates_from_json(
        {
            "memories": [
                memory(content="The user lives in Ghent.", claim=said),
                memory(content="The user likes long walks.", claim=None),
                memory(content="The user reads a lot.", claim=claim(predicate="")),
                memory(content="The user is vegetarian."),  # an older answer without the key
            ]
        }
    )
    assert given.claim is not None
    # In the vocabulary every reader shares (claims.folded): living in is "location".
    assert (given.claim.holder, given.claim.predicate, given.claim.value) == (
        "user",
        "location",
        "ghent",
    )
    assert (given.claim.polarity, given.claim.mood, given.doubt) == ("affirmed", "asserted", "")
    assert nothing.claim is None
    assert empty.claim is None  # a claim with no predicate is no claim
    assert omitted.claim is None  # memories.extraction.claims.claim_of reads it when written
    assert CLASSIFY_SCHEMA["properties"]["memories"]["items"]["required"][-1] == "claim"


def test_the_claim_reads_holder_predicate_and_value_as_the_rules_would() -> None:
    wife, likes, named = (
        c.claim
        for c in candidates_from_json(
            {
                "memories": [
                    memory(claim=claim(holder="My wife", value="Ghent, too")),
                    memory(claim=claim(predicate="love", value="Sushi these days")),
                    memory(claim=claim(holder="Priya", predicate="work-at", value="Arup")),
                ]
            }
        )
    )
    assert wife is not None
    assert (wife.holder, wife.value) == ("user's wife", "ghent")
    # Liked things are many at once: the thing is part of the predicate, a stance the value
    # (the rules' and the parse's "opinion:<thing>").
    assert likes is not None
    assert (likes.predicate, likes.value) == ("opinion:sushi", "positive")
    assert named is not None
    assert (named.holder, named.predicate) == ("priya", "employer")


@pytest.mark.parametrize("mood", ["hypothetical", "question", "reported"])
def test_a_claim_not_asserted_is_doubted(mood: str) -> None:
    (fact,) = candidates_from_json({"memories": [memory(claim=claim(mood=mood))]})

    assert fact.claim is not None

    assert fact.claim.mood == mood
    assert fact.doubt  # never active on its own (memories.write.dedup.store)
    assert fact.kind == "fact"


def test_a_former_state_is_an_episode_with_its_time_and_no_slot() -> None:
    (episode,) = candidates_from_json(
        {
            "memories": [
                memory(
                    content="The user used to live in Ghent.",
                    slot="location",
                    claim=claim(polarity="past", mood="past", valid_from="2015-09-01"),
                )
            ]
        },
        now=NOW,
    )

    assert (episode.kind, episode.slot, episode.doubt) == ("episode", "", "")
    assert episode.occurred_at == datetime(2015, 9, 1, tzinfo=UTC)


def test_the_validity_dates_are_read_as_iso_8601() -> None:
    (fact,) = candidates_from_json(
        {
            "memories": [
                memory(
                    claim=claim(valid_from="2026-01-12T09:30:00+01:00", valid_until="2026-03-31")
                )
            ]
        }
    )

    assert fact.valid_from == datetime(2026, 1, 12, 8, 30, tzinfo=UTC)
    # A bare date holds to its end.
    assert fact.valid_until == datetime(2026, 3, 31, 23, 59, 59, 999999, tzinfo=UTC)


@pytest.mark.parametrize(
    ("said", "claimed", "logged"),
    [
        ({"mood": "conditional"}, False, "mood 'conditional'"),
        ({"polarity": "maybe"}, False, "polarity 'maybe'"),
        ({"valid_until": "next Friday"}, True, "valid_until 'next Friday'"),
        ({"valid_from": 20260112}, True, "valid_from 20260112"),
        ({"valid_from": "2026-05-01", "valid_until": "2026-04-01"}, True, "before valid_from"),
        ({"holder": 7, "value": None}, False, "not a string"),
    ],
    ids=["unknown-mood", "unknown-polarity", "bad-date", "not-a-string", "reversed", "types"],
)
def test_a_malformed_claim_is_logged_and_left_out_never_a_failure(
    said: dict[str, Any], claimed: bool, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="memories.extraction.classify"):
        (fact,) = candidates_from_json({"memories": [memory(claim=claim(**said))]})

    assert (fact.claim is not None) is claimed
    assert fact.valid_until is None
    assert logged in caplog.text
    assert not fact.doubt


def test_the_request_names_the_message_date(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("chat", content=answer())

    classify(make_chat(fake_openai), text="I'm in Ghent until Friday.", role="user")

    user = fake_openai.requests[0].json["messages"][1]["content"]
    assert re.search(r"^Message date: \d{4}-\d\d-\d\d \(\w+day\)$", user, re.MULTILINE)
