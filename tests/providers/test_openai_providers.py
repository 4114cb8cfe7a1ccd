"""The OpenAI providers against a real local HTTP server (tests/fakes/openai_server.py).

Nothing is monkeypatched in the client: requests go over HTTP to 127.0.0.1, so
URL building, headers, timeouts and error mapping are all exercised.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured

from spaceduck.core.providers import get_chat, get_embedder, reset_providers
from spaceduck.core.providers.chat.base import Arbitration
from spaceduck.core.providers.chat.heuristic import HeuristicChat
from spaceduck.core.providers.chat.openai import ARBITRATION_SCHEMA, SUMMARY_SCHEMA, OpenAIChat
from spaceduck.core.providers.embeddings.openai import OpenAIEmbedder
from spaceduck.core.providers.errors import ProviderError
from tests.fakes.openai_server import FakeOpenAI, fake_vector

DIMS = 16


def embedder_conf(fake: FakeOpenAI, **overrides: Any) -> dict[str, Any]:
    conf = {
        "provider": "openai",
        "model": "test-embed",
        "dimensions": DIMS,
        "base_url": fake.base_url,
        "api_key": "sk-test",
        "timeout": 5.0,
        "batch_size": 64,
    }
    return conf | overrides


def chat_conf(fake: FakeOpenAI, **overrides: Any) -> dict[str, Any]:
    conf = {
        "provider": "openai",
        "model": "test-chat",
        "base_url": fake.base_url,
        "api_key": "sk-test",
        "timeout": 5.0,
    }
    return conf | overrides


def make_embedder(fake: FakeOpenAI, **overrides: Any) -> OpenAIEmbedder:
    return OpenAIEmbedder.from_settings(embedder_conf(fake, **overrides))


def make_chat(fake: FakeOpenAI, **overrides: Any) -> OpenAIChat:
    return OpenAIChat.from_settings(chat_conf(fake, **overrides))


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# --- embeddings: happy path ------------------------------------------------------------
def test_embed_returns_normalised_float32_rows_in_input_order(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("embeddings", reverse=True)  # the data list arrives shuffled
    texts = ["alpha", "beta", "gamma"]

    vectors = make_embedder(fake_openai).embed(texts)

    assert vectors.shape == (3, DIMS)
    assert vectors.dtype == np.float32
    expected = np.array([fake_vector(t, DIMS) for t in texts], dtype=np.float32)
    assert np.allclose(vectors, expected, atol=1e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_embed_normalises_vectors_the_server_did_not_normalise(fake_openai: FakeOpenAI) -> None:
    data = [{"object": "embedding", "index": 0, "embedding": [3.0, 4.0] + [0.0] * (DIMS - 2)}]
    fake_openai.enqueue("embeddings", body={"object": "list", "data": data, "model": "m"})

    vectors = make_embedder(fake_openai).embed(["x"])

    assert np.allclose(vectors[0, :2], [0.6, 0.8])


def test_embed_splits_input_into_batches_of_batch_size(fake_openai: FakeOpenAI) -> None:
    texts = [f"text {i}" for i in range(5)]

    vectors = make_embedder(fake_openai, batch_size=2).embed(texts)

    sent = [r.json["input"] for r in fake_openai.requests_to("embeddings")]
    assert sent == [["text 0", "text 1"], ["text 2", "text 3"], ["text 4"]]
    expected = np.array([fake_vector(t, DIMS) for t in texts], dtype=np.float32)
    assert np.allclose(vectors, expected, atol=1e-6)


def test_embed_sends_model_dimensions_float_format_and_bearer_key(
    fake_openai: FakeOpenAI,
) -> None:
    make_embedder(fake_openai).embed(["hello"])

    (request,) = fake_openai.requests
    assert request.path == "/v1/embeddings"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.json["model"] == "test-embed"
    assert request.json["dimensions"] == DIMS
    assert request.json["encoding_format"] == "float"


def test_embed_without_api_key_sends_a_placeholder_key(fake_openai: FakeOpenAI) -> None:
    make_embedder(fake_openai, api_key=None).embed(["hello"])

    assert fake_openai.requests[0].headers["authorization"] == "Bearer not-needed"


def test_embed_sends_a_space_instead_of_an_empty_string(fake_openai: FakeOpenAI) -> None:
    make_embedder(fake_openai).embed(["", "x"])

    assert fake_openai.requests[0].json["input"] == [" ", "x"]


def test_embed_of_no_texts_returns_an_empty_matrix_without_a_request(
    fake_openai: FakeOpenAI,
) -> None:
    vectors = make_embedder(fake_openai).embed([])

    assert vectors.shape == (0, DIMS)
    assert fake_openai.requests == []


# --- embeddings: failures ----------------------------------------------------------------
def test_embed_rejects_vectors_of_another_length(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("embeddings", dims=8)

    with pytest.raises(ProviderError) as caught:
        make_embedder(fake_openai).embed(["hello"])

    assert "expected 16-dimensional" in str(caught.value)
    assert "received 8 dimensions" in str(caught.value)


def test_embed_http_500_raises_provider_error_naming_model_and_url(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.enqueue("embeddings", status=500, body={"error": {"message": "boom"}})

    with pytest.raises(ProviderError) as caught:
        make_embedder(fake_openai).embed(["hello"])

    message = str(caught.value)
    assert "HTTP 500: boom" in message
    assert "test-embed" in message
    assert fake_openai.base_url in message


def test_embed_timeout_raises_provider_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("embeddings", delay=2.0)

    with pytest.raises(ProviderError, match=r"timed out after 0\.5s"):
        make_embedder(fake_openai, timeout=0.5).embed(["hello"])


def test_embed_does_not_retry_a_failed_request(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("embeddings", status=503, body={"error": {"message": "busy"}})

    with pytest.raises(ProviderError):
        make_embedder(fake_openai).embed(["hello"])

    assert len(fake_openai.requests) == 1  # retries belong to the task queue


def test_embed_non_json_body_raises_provider_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("embeddings", raw="not json")

    with pytest.raises(ProviderError, match="not JSON"):
        make_embedder(fake_openai).embed(["hello"])


def test_embed_missing_rows_raise_provider_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("embeddings", body={"object": "list", "data": [], "model": "m"})

    with pytest.raises(ProviderError, match="expected 2 embeddings"):
        make_embedder(fake_openai).embed(["a", "b"])


def test_embed_payload_of_the_wrong_shape_raises_provider_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("embeddings", body={"data": "oops"})

    with pytest.raises(ProviderError, match="malformed response"):
        make_embedder(fake_openai).embed(["a"])


def test_embed_unreachable_server_raises_provider_error() -> None:
    embedder = OpenAIEmbedder(dimensions=DIMS, base_url=closed_port_url(), timeout=2.0)

    with pytest.raises(ProviderError, match="cannot connect"):
        embedder.embed(["hello"])


# --- embeddings: configuration -------------------------------------------------------------
def test_embedder_from_settings_without_dimensions_is_improperly_configured(
    fake_openai: FakeOpenAI,
) -> None:
    with pytest.raises(ImproperlyConfigured, match="SPACEDUCK_EMBEDDING_DIMENSIONS"):
        make_embedder(fake_openai, dimensions=None)


def test_embedder_from_settings_without_url_or_key_is_improperly_configured(
    fake_openai: FakeOpenAI,
) -> None:
    with pytest.raises(ImproperlyConfigured, match="SPACEDUCK_EMBEDDING_BASE_URL"):
        make_embedder(fake_openai, base_url=None, api_key=None)


@pytest.mark.django_db  # get_embedder reads Settings > Memory's embedder
def test_embedder_fingerprint_defaults_to_text_embedding_3_small(fake_openai: FakeOpenAI) -> None:
    embedder = make_embedder(fake_openai, model=None)

    assert str(embedder.fingerprint) == f"openai/text-embedding-3-small/{DIMS}d"


@pytest.mark.django_db  # get_embedder reads Settings > Memory's embedder
def test_get_embedder_builds_the_openai_embedder_from_settings(
    fake_openai: FakeOpenAI, settings: Any
) -> None:
    settings.SPACEDUCK_EMBEDDINGS = embedder_conf(fake_openai)
    reset_providers()
    try:
        embedder = get_embedder()
        assert isinstance(embedder, OpenAIEmbedder)
        assert embedder.embed(["hi"]).shape == (1, DIMS)
    finally:
        reset_providers()


# --- chat: happy path --------------------------------------------------------------------------
def test_arbitrate_asks_for_strict_json_schema_output(fake_openai: FakeOpenAI) -> None:
    make_chat(fake_openai).arbitrate(existing="I live in Paris", candidate="I live in Tokyo")

    (request,) = fake_openai.requests
    body = request.json
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert body["model"] == "test-chat"
    assert body["temperature"] == 0
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "arbitration", "schema": ARBITRATION_SCHEMA, "strict": True},
    }
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "I live in Paris" in body["messages"][1]["content"]
    assert "I live in Tokyo" in body["messages"][1]["content"]


def test_arbitrate_returns_the_models_verdict_and_reason(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("chat", content='{"verdict": "contradiction", "reason": " Two cities. "}')

    result = make_chat(fake_openai).arbitrate(
        existing="I live in Paris", candidate="I live in Rome"
    )

    assert result == Arbitration(verdict="contradiction", reason="Two cities.")


def test_summarize_sends_numbered_texts_and_returns_the_summary(fake_openai: FakeOpenAI) -> None:
    def echo(request: dict[str, Any]) -> str:
        return json.dumps({"summary": "Summary of: " + request["messages"][1]["content"]})

    fake_openai.set_chat_handler(echo)

    summary = make_chat(fake_openai).summarize(texts=["First.", "  ", "Second."], max_words=50)

    assert summary == "Summary of: 1. First.\n2. Second."
    body = fake_openai.requests[0].json
    assert body["response_format"]["json_schema"]["name"] == "summary"
    assert body["response_format"]["json_schema"]["schema"] == SUMMARY_SCHEMA
    assert "50 words" in body["messages"][0]["content"]


def test_summarize_of_no_texts_returns_empty_without_a_request(fake_openai: FakeOpenAI) -> None:
    assert make_chat(fake_openai).summarize(texts=[]) == ""
    assert fake_openai.requests == []


def test_complete_json_returns_an_object_matching_a_custom_schema(fake_openai: FakeOpenAI) -> None:
    schema = {
        "type": "object",
        "properties": {"count": {"type": "integer"}},
        "required": ["count"],
        "additionalProperties": False,
    }
    fake_openai.enqueue("chat", content='{"count": 3}')

    answer = make_chat(fake_openai).complete_json(
        system="Count.", user="a b c", schema_name="count", schema=schema
    )

    assert answer == {"count": 3}


# --- chat: failures ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "message"),
    [
        pytest.param({"content": "not json"}, "not valid JSON", id="malformed-json"),
        pytest.param({"content": '["a list"]'}, "not a JSON object", id="not-an-object"),
        pytest.param(
            {"content": '{"verdict": "consistent"}'},
            "missing the required key 'reason'",
            id="missing-key",
        ),
        pytest.param(
            {"content": '{"verdict": "maybe", "reason": "unsure"}'},
            "expected one of",
            id="bad-enum",
        ),
        pytest.param(
            {"content": '{"verdict": "consistent", "reason": 42}'},
            "'reason' of type int",
            id="wrong-type",
        ),
        pytest.param({"content": ""}, "empty", id="empty-content"),
        pytest.param({"refusal": "I cannot help with that."}, "refused", id="refusal"),
        pytest.param(
            {"content": '{"verdict": "cons', "finish_reason": "length"}, "cut off", id="truncated"
        ),
        pytest.param({"body": {"id": "x", "choices": []}}, "no choices", id="no-choices"),
        pytest.param({"raw": "<html>oops</html>"}, "not JSON", id="non-json-body"),
        pytest.param(
            {"status": 500, "body": {"error": {"message": "boom"}}}, "HTTP 500: boom", id="http-500"
        ),
    ],
)
def test_arbitrate_raises_provider_error_on_unusable_answers(
    fake_openai: FakeOpenAI, reply: dict[str, Any], message: str
) -> None:
    fake_openai.enqueue("chat", **reply)

    with pytest.raises(ProviderError) as caught:
        make_chat(fake_openai).arbitrate(existing="a", candidate="b")

    assert message in str(caught.value)
    assert "test-chat" in str(caught.value)


def test_summarize_rejects_a_summary_that_is_not_a_string(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("chat", content='{"summary": 3}')

    with pytest.raises(ProviderError, match="expected string"):
        make_chat(fake_openai).summarize(texts=["Something."])


def test_summarize_rejects_an_empty_summary(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("chat", content='{"summary": "  "}')

    with pytest.raises(ProviderError, match="summary is empty"):
        make_chat(fake_openai).summarize(texts=["Something."])


def test_chat_timeout_raises_provider_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("chat", delay=2.0)

    with pytest.raises(ProviderError, match=r"timed out after 0\.5s"):
        make_chat(fake_openai, timeout=0.5).arbitrate(existing="a", candidate="b")


def test_chat_unreachable_server_raises_provider_error() -> None:
    chat = OpenAIChat(base_url=closed_port_url(), timeout=2.0)

    with pytest.raises(ProviderError, match="cannot connect"):
        chat.summarize(texts=["Something."])


# --- chat: configuration -------------------------------------------------------------------------
def test_chat_from_settings_without_url_or_key_is_improperly_configured(
    fake_openai: FakeOpenAI,
) -> None:
    with pytest.raises(ImproperlyConfigured, match="SPACEDUCK_CHAT_BASE_URL"):
        make_chat(fake_openai, base_url=None, api_key=None)


def test_chat_model_defaults_to_gpt_4o_mini(fake_openai: FakeOpenAI) -> None:
    chat = make_chat(fake_openai, model=None)

    assert (chat.name, chat.model) == ("openai", "gpt-4o-mini")


def test_get_chat_builds_the_openai_chat_from_settings(
    fake_openai: FakeOpenAI, settings: Any
) -> None:
    settings.SPACEDUCK_CHAT = chat_conf(fake_openai)
    reset_providers()
    try:
        chat = get_chat()
        assert isinstance(chat, OpenAIChat)
        assert chat.arbitrate(existing="a", candidate="b").verdict == "consistent"
    finally:
        reset_providers()


def test_arbitrate_may_answer_unsure(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("chat", content='{"verdict": "unsure", "reason": "May be a joke."}')
    result = make_chat(fake_openai).arbitrate(
        existing="The user lives in Paris.", candidate="The user is the Queen of England."
    )
    assert result == Arbitration(verdict="unsure", reason="May be a joke.")
    assert "unsure" in ARBITRATION_SCHEMA["properties"]["verdict"]["enum"]


# --- chat: plain text ---------------------------------------------------------------------------
def test_complete_text_sends_a_plain_request_and_returns_the_stripped_reply(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.set_chat_handler(lambda request: "  To: " + request["messages"][-1]["content"])

    reply = make_chat(fake_openai).complete_text(user="What day is it?", system="Be brief.")

    assert reply == "To: What day is it?"
    (request,) = fake_openai.requests
    body = request.json
    assert request.path == "/v1/chat/completions"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What day is it?"},
    ]
    assert body["model"] == "test-chat"
    assert body["temperature"] == 0
    assert body["n"] == 1
    assert "response_format" not in body
    assert "max_tokens" not in body  # unset: left out, not sent as null


def test_complete_text_without_system_sends_only_the_user_message(fake_openai: FakeOpenAI) -> None:
    fake_openai.set_chat_handler(lambda request: "ok")

    make_chat(fake_openai).complete_text(user="Hello")

    assert fake_openai.requests[0].json["messages"] == [{"role": "user", "content": "Hello"}]


def test_complete_text_model_and_max_tokens_apply_to_that_call_only(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.set_chat_handler(lambda request: "yes")
    chat = make_chat(fake_openai)

    assert chat.complete_text(user="Judge this.", max_tokens=10, model="judge-model") == "yes"
    chat.complete_text(user="Again.")

    first, second = (r.json for r in fake_openai.requests)
    assert (first["model"], first["max_tokens"]) == ("judge-model", 10)
    assert second["model"] == "test-chat"
    assert "max_tokens" not in second
    assert chat.model == "test-chat"


def test_complete_text_accepts_a_reply_cut_at_the_max_tokens_it_asked_for(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.enqueue("chat", content="Yes, the response is cor", finish_reason="length")

    reply = make_chat(fake_openai).complete_text(user="Judge this.", max_tokens=10)

    assert reply == "Yes, the response is cor"


def test_complete_text_without_max_tokens_rejects_a_cut_reply(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue("chat", content="The answer is", finish_reason="length")

    with pytest.raises(ProviderError, match="cut off"):
        make_chat(fake_openai).complete_text(user="Question?")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        pytest.param(
            {"status": 500, "body": {"error": {"message": "boom"}}}, "HTTP 500: boom", id="http-500"
        ),
        pytest.param({"refusal": "I cannot help with that."}, "refused", id="refusal"),
        pytest.param({"content": "   "}, "the answer is empty", id="empty"),
        pytest.param(
            {"content": "", "finish_reason": "length"},
            "empty (cut off at max_tokens)",
            id="empty-and-cut",
        ),
        pytest.param(
            {"content": "x", "finish_reason": "content_filter"}, "content filter", id="filtered"
        ),
        pytest.param({"body": {"id": "x", "choices": []}}, "no choices", id="no-choices"),
    ],
)
def test_complete_text_raises_provider_error_naming_the_model_used(
    fake_openai: FakeOpenAI, reply: dict[str, Any], message: str
) -> None:
    fake_openai.enqueue("chat", **reply)

    with pytest.raises(ProviderError) as caught:
        make_chat(fake_openai).complete_text(user="Judge this.", max_tokens=10, model="judge-model")

    assert message in str(caught.value)
    assert "model judge-model at" in str(caught.value)


def test_heuristic_chat_has_no_model_for_plain_text() -> None:
    with pytest.raises(ProviderError, match="no model to answer in free text"):
        HeuristicChat().complete_text(user="What day is it?")
