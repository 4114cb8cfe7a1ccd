"""The credential firewall: no secret is stored, whoever proposed the candidate.

The corpus (tests/data/firewall/credentials.json) holds credentials embedded in chat sentences,
each with its expected shape and the part that must never be stored, and benign sentences about
passwords, logins and numbers that must pass. Every write path is exercised from outside: the
extraction pipeline (heuristic classifier, and a chat model that copies what the user pasted),
POST /api/memories, and edits (lifecycle, dashboard form, PATCH).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from memories.extraction.pipeline import propose
from memories.extraction.types import Source
from memories.models import Memory, MemoryEvent
from memories.write import edits
from memories.write.ingest import message_ingest
from memories.write.runner import run_extraction
from memories.write.services import create_thread, memory_create
from spaceduck.core.credentials import find_secret
from spaceduck.core.errors import InvalidInput
from spaceduck.core.providers import get_chat, reset_providers
from tests.conftest import Actor
from tests.fakes.openai_server import FakeOpenAI

CORPUS = json.loads(
    (Path(__file__).parents[2] / "data" / "firewall" / "credentials.json").read_text("utf-8")
)
CREDENTIALS: list[dict[str, str]] = CORPUS["credentials"]
BENIGN: list[str] = CORPUS["benign"]
NS = "user:alice"


def _id(credential: dict[str, str]) -> str:
    return f"{credential['shape']}:{credential['text'][:40]}"


def _leaks(secret: str) -> list[str]:
    """Stored memories (any status) whose title, content or summary holds ``secret``."""
    return [
        f"{m.title} | {m.content} | {m.summary}"
        for m in Memory.objects.all()
        if secret in m.title or secret in m.content or secret in m.summary
    ]


def test_the_corpus_is_broad_enough() -> None:
    assert len(CREDENTIALS) >= 100
    assert len({c["shape"] for c in CREDENTIALS}) >= 10
    assert len(BENIGN) >= 60
    assert all(c["secret"] in c["text"] for c in CREDENTIALS)


# --- find_secret ------------------------------------------------------------------------------


@pytest.mark.parametrize("credential", CREDENTIALS, ids=_id)
def test_every_credential_is_found_with_its_shape(credential: dict[str, str]) -> None:
    assert find_secret(credential["text"]) == credential["shape"]


@pytest.mark.parametrize("text", BENIGN)
def test_talking_about_passwords_and_numbers_is_not_a_secret(text: str) -> None:
    assert find_secret(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "I use the same login everywhere, it's mike.t and Bluebird!77",
        "postgres://app:hunter2@db:5432/x",
        "My PIN is 4821.",
        "password Winter2024!",
        "Log in to the NAS as admin with Tr0ub4dor&3",
    ],
)
def test_the_reported_leaks_are_caught(text: str) -> None:
    assert find_secret(text) is not None


def test_empty_text_holds_no_secret() -> None:
    assert find_secret("") is None


# --- The extraction pipeline with the heuristic classifier ------------------------------------


@pytest.mark.parametrize("credential", CREDENTIALS, ids=_id)
def test_the_heuristic_pipeline_keeps_no_credential(credential: dict[str, str]) -> None:
    kept, _ = propose(Source(role="user", text=credential["text"]), get_chat())
    secret = credential["secret"]
    assert not [c.content for c in kept if secret in f"{c.title} {c.content} {c.summary}"]


@pytest.mark.django_db
def test_a_chat_about_logins_end_to_end_stores_no_credential() -> None:
    thread = create_thread(NS, title="logins").id
    for credential in CREDENTIALS[::7]:
        ingested = message_ingest(thread, "user", credential["text"])
        assert ingested.extraction is not None
        record = run_extraction(ingested.extraction.pk)
        assert record is not None
        assert record.status == "done"
        assert _leaks(credential["secret"]) == [], credential["text"]


# --- A chat model that copies what the user pasted --------------------------------------------


def _copying_model(request: dict[str, Any]) -> str:
    """The model stores the user's message verbatim, as title, content and summary."""
    user = request["messages"][-1]["content"]
    text = user.split("Message:\n", 1)[1]
    item = {
        "kind": "fact",
        "title": text[:60],
        "content": text,
        "summary": text,
        "importance": "significant",
        "confidence": "certain",
        "tags": ["credentials"],
        "procedure_subtype": "none",
        "slot": "none",
        "time_hint": "",
        "retention": "store",
        "reject_reason": "none",
    }
    return json.dumps({"memories": [item]})


def _use_copying_model(settings: Any, fake_openai: FakeOpenAI) -> None:
    """Extraction through the fake OpenAI server, answering with ``_copying_model``."""
    settings.SPACEDUCK_CHAT = {
        "provider": "openai",
        "model": "copycat",
        "base_url": fake_openai.base_url,
        "api_key": "k",
        "timeout": 5,
    }
    reset_providers()
    fake_openai.set_chat_handler(_copying_model)


@pytest.mark.django_db
def test_a_model_that_copies_secrets_stores_none_and_the_record_says_why(
    settings: Any, fake_openai: FakeOpenAI
) -> None:
    # Messages kept as sent (redaction off): the model sees each credential, and the
    # firewall alone must keep it out of memory.
    settings.REDACT_SECRETS = False
    _use_copying_model(settings, fake_openai)
    thread = create_thread(NS, title="pasted").id
    for credential in CREDENTIALS:
        ingested = message_ingest(thread, "user", credential["text"])
        assert ingested.extraction is not None
        record = run_extraction(ingested.extraction.pk)
        assert record is not None
        assert record.status == "done", record.errors
        assert _leaks(credential["secret"]) == [], credential["text"]
        copied = [
            c for c in record.candidates if c["candidate"]["content"] == credential["text"].strip()
        ]
        assert [(c["decision"], c["reason"]) for c in copied] == [
            ("rejected", f"secret: {credential['shape']}")
        ], credential["text"]
    assert len(fake_openai.requests_to("chat")) == len(CREDENTIALS)


@pytest.mark.django_db
def test_the_copying_model_still_stores_benign_sentences(
    settings: Any, fake_openai: FakeOpenAI
) -> None:
    _use_copying_model(settings, fake_openai)
    thread = create_thread(NS, title="topics").id
    text = "The user keeps passwords in a password manager."
    ingested = message_ingest(thread, "user", text)
    assert ingested.extraction is not None
    record = run_extraction(ingested.extraction.pk)
    assert record is not None
    assert Memory.objects.filter(content=text).exists()


# --- POST /api/memories -----------------------------------------------------------------------


@pytest.mark.django_db
def test_direct_writes_refuse_every_credential(owner: Actor) -> None:
    refused: dict[str, str] = {}
    for credential in CREDENTIALS:
        response = owner.post(
            "/api/memories", {"namespace": NS, "kind": "fact", "content": credential["text"]}
        )
        assert response.status_code == 200, credential["text"]
        body = response.json()
        assert body["decision"] == "rejected", credential["text"]
        refused[credential["text"]] = body["reason"]
    assert {text: r for text, r in refused.items() if not r.startswith("secret: ")} == {}
    assert not Memory.objects.exists()


@pytest.mark.django_db
def test_a_secret_in_the_title_or_summary_is_refused_too(owner: Actor) -> None:
    for field in ("title", "summary"):
        response = owner.post(
            "/api/memories",
            {
                "namespace": NS,
                "kind": "fact",
                "content": "The user has a home router.",
                field: "Router login: admin / admin123",
            },
        )
        assert response.json()["decision"] == "rejected"
        assert response.json()["reason"] == "secret: login_pair"
    assert not Memory.objects.exists()


@pytest.mark.django_db
def test_direct_writes_about_passwords_are_stored(owner: Actor) -> None:
    for text in ("The user keeps passwords in a password manager.", "My PIN is 4 digits long."):
        response = owner.post("/api/memories", {"namespace": NS, "kind": "fact", "content": text})
        assert not response.json()["reason"].startswith("secret"), text


# --- Edits: lifecycle, dashboard form, PATCH --------------------------------------------------


@pytest.fixture
def memory(db: None) -> Memory:
    return memory_create(
        namespace=NS, kind="fact", content="The user has a home router.", actor="t"
    )


def test_an_edit_may_not_bring_a_credential_in(memory: Memory) -> None:
    for credential in CREDENTIALS:
        for field in ("content", "title", "summary"):
            with pytest.raises(InvalidInput, match=r"secret: \w+"):
                edits.memory_edit(
                    memory=memory, changes={field: credential["text"]}, actor="staff:test"
                )
    memory.refresh_from_db()
    assert memory.content == "The user has a home router."
    assert not MemoryEvent.objects.filter(memory_id=memory.pk, event="edited").exists()
    assert _leaks("admin123") == []


def test_an_edit_about_passwords_is_saved(memory: Memory) -> None:
    text = "The user changed the router password yesterday."
    edits.memory_edit(memory=memory, changes={"content": text}, actor="staff:test")
    memory.refresh_from_db()
    assert memory.content == text


def test_the_dashboard_edit_form_shows_the_refusal(staff_client: Client, memory: Memory) -> None:
    data = {
        "title": memory.title,
        "content": "The router login is admin / admin123",
        "summary": memory.summary,
        "tags": "",
        "importance": memory.importance,
        "confidence": memory.confidence,
        "scope": memory.scope,
        "scope_id": memory.scope_id,
    }
    response = staff_client.post(f"/memories/{memory.pk}/edit/", data)
    assert 400 <= response.status_code < 500
    assert "secret: login_pair" in response.content.decode()
    memory.refresh_from_db()
    assert memory.content == "The user has a home router."


def test_patch_refuses_a_credential(owner: Actor, memory: Memory) -> None:
    response = owner.patch(f"/api/memories/{memory.pk}", {"content": "My PIN is 4821."})
    assert response.status_code == 422
    assert "secret: pin" in response.json()["detail"]
    memory.refresh_from_db()
    assert memory.content == "The user has a home router."
