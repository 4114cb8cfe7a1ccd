"""Size limits: settings with defaults, enforced by the services for every front end.

Over a limit is a 413 (sizes in bytes, checked by the services) or a 422 (lengths
the schema declares), with a message naming the limit, and nothing is written.
The message limit also bounds extraction: a message at the limit is extracted
in about a second whatever its shape.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings

from memories.extraction import pipeline
from memories.extraction.types import Source
from memories.models import Extraction, Fact, Memory, Message, Thread
from memories.write.services import create_thread, memory_create
from notes.models import Note
from spaceduck import store
from spaceduck.core.errors import TooLarge
from spaceduck.core.providers import get_chat
from tests.conftest import Actor

pytestmark = pytest.mark.django_db

KIB = 1024


@pytest.fixture
def thread() -> Thread:
    return create_thread("user:alice", title="Limits")


def assert_too_large(response: Any, *words: str) -> None:
    assert response.status_code == 413, response.content
    detail = response.json()["detail"]
    for word in ("over the limit", "nothing was saved", *words):
        assert word in detail, detail


def test_the_defaults() -> None:
    assert settings.MAX_MESSAGE_BYTES == 64 * KIB
    assert settings.MAX_NOTE_BODY_BYTES == 64 * KIB
    assert settings.MAX_FACT_VALUE_BYTES == 64 * KIB
    assert settings.MAX_REQUEST_BYTES == 1024 * KIB
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == settings.MAX_REQUEST_BYTES
    assert settings.MAX_MEMORY_CONTENT_CHARS == 1000
    assert settings.MAX_MEMORY_TITLE_CHARS == 200
    assert settings.MAX_MEMORY_TAGS == 20


# --- Messages ------------------------------------------------------------------------------


def test_a_message_at_the_limit_is_saved_one_byte_more_is_413(owner: Actor, thread: Thread) -> None:
    url = f"/api/threads/{thread.id}/messages"
    at_limit = "a" * (64 * KIB)
    assert owner.post(url, {"role": "user", "content": at_limit}).status_code == 201
    response = owner.post(url, {"role": "user", "content": at_limit + "b"})
    assert_too_large(response, "message content", "65,537", "SPACEDUCK_MAX_MESSAGE_BYTES")
    assert Message.objects.count() == 1
    assert Extraction.objects.count() == 1  # nothing queued for the refused one


def test_the_message_limit_counts_utf8_bytes_and_json(owner: Actor, thread: Thread) -> None:
    url = f"/api/threads/{thread.id}/messages"
    accents = "é" * (32 * KIB + 1)  # 32 Ki + 1 characters, 64 KiB + 2 bytes
    assert_too_large(owner.post(url, {"role": "user", "content": accents}), "message content")
    as_json = {"parts": ["x" * 1000] * 66}  # compact JSON over 64 KiB
    assert_too_large(owner.post(url, {"role": "tool", "content": as_json}), "message content")
    assert not Message.objects.exists()


def test_a_replacement_over_the_limit_leaves_the_message_as_it_was(
    owner: Actor, thread: Thread
) -> None:
    url = f"/api/threads/{thread.id}/messages"
    assert owner.post(url, {"role": "user", "content": "hi", "id": "m-1"}).status_code == 201
    big = {"role": "user", "content": "x" * (64 * KIB + 1), "id": "m-1"}
    assert owner.post(url, big).status_code == 413
    assert Message.objects.get(pk="m-1").content == "hi"


@override_settings(MAX_MESSAGE_BYTES=100)
def test_the_message_limit_is_a_setting(thread: Thread) -> None:
    store.save_message(thread.id, "user", "x" * 100)
    with pytest.raises(TooLarge, match="SPACEDUCK_MAX_MESSAGE_BYTES"):
        store.save_message(thread.id, "user", "x" * 101)


# --- Notes, facts, memories ------------------------------------------------------------------


def test_a_note_body_over_the_limit_is_413(owner: Actor) -> None:
    body = {"namespace": "user:alice", "body": "n" * (64 * KIB + 1)}
    assert_too_large(owner.post("/api/notes", body), "note body", "SPACEDUCK_MAX_NOTE_BODY_BYTES")
    assert not Note.objects.exists()
    with pytest.raises(TooLarge):
        store.save_note("user:alice", "n" * (64 * KIB + 1))
    assert store.save_note("user:alice", "n" * (64 * KIB)).body


def test_a_fact_value_over_the_limit_is_413(owner: Actor) -> None:
    big = {"value": {"blob": "v" * (64 * KIB)}}
    response = owner.put("/api/facts/user:alice/k", big)
    assert_too_large(response, "fact value", "SPACEDUCK_MAX_FACT_VALUE_BYTES")
    assert not Fact.objects.exists()
    with pytest.raises(TooLarge):
        store.set_fact("user:alice", "k", "v" * (64 * KIB + 1))


def test_an_upsert_over_the_limit_keeps_the_old_value(owner: Actor) -> None:
    assert owner.put("/api/facts/user:alice/k", {"value": "small"}).status_code == 200
    assert owner.put("/api/facts/user:alice/k", {"value": "v" * (64 * KIB + 1)}).status_code == 413
    assert owner.get("/api/facts/user:alice/k").json()["value"] == "small"


def memory_body(**fields: Any) -> dict[str, Any]:
    return {"namespace": "user:alice", "kind": "fact", "content": "Alice likes jazz.", **fields}


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"content": "The user likes " + "very " * 200 + "long walks."}, "content"),
        ({"title": "t" * 201}, "title"),
        ({"tags": [f"tag{i}" for i in range(21)]}, "tags"),
        ({"tags": ["t" * 101]}, "tags"),
        ({"summary": "s" * 1001}, "summary"),
        ({"scope": "thread", "scope_id": "s" * 256}, "scope_id"),
    ],
)
def test_a_memory_over_a_limit_is_422_naming_the_field(
    owner: Actor, fields: dict[str, Any], field: str
) -> None:
    response = owner.post("/api/memories", memory_body(**fields))
    assert response.status_code == 422, response.content
    assert f"body.{field}" in response.json()["detail"]
    assert not Memory.objects.exists()


def test_a_memory_edit_over_a_limit_is_422_and_changes_nothing(owner: Actor) -> None:
    memory = memory_create(
        namespace="user:alice", kind="fact", content="Alice likes jazz.", actor="t"
    )
    for change in ({"content": "x " * 501}, {"title": "t" * 201}, {"tags": ["t"] * 21}):
        response = owner.patch(f"/api/memories/{memory.pk}", change)
        assert response.status_code == 422, change
    memory.refresh_from_db()
    assert memory.content == "Alice likes jazz."


def test_the_gate_and_the_api_share_the_content_limit(owner: Actor) -> None:
    from memories.extraction import gate

    assert gate.MAX_CONTENT_CHARS == settings.MAX_MEMORY_CONTENT_CHARS
    at_limit = "The user likes " + "x" * (settings.MAX_MEMORY_CONTENT_CHARS - 16) + "."
    assert len(at_limit) == settings.MAX_MEMORY_CONTENT_CHARS
    assert owner.post("/api/memories", memory_body(content=at_limit)).status_code == 201


# --- Request bodies --------------------------------------------------------------------------


def test_a_request_body_over_the_limit_is_413(owner: Actor, thread: Thread) -> None:
    with override_settings(MAX_REQUEST_BYTES=2048, DATA_UPLOAD_MAX_MEMORY_SIZE=2048):
        response = owner.post(
            f"/api/threads/{thread.id}/messages", {"role": "user", "content": "x" * 3000}
        )
    assert_too_large(response, "request body", "2,048", "SPACEDUCK_MAX_REQUEST_BYTES")
    assert not Message.objects.exists()


def test_the_default_request_limit_leaves_room_for_a_message_at_its_limit(
    owner: Actor, thread: Thread
) -> None:
    # The worst case: every character of a 64 KiB message escaped as \\uXXXX in JSON.
    text = "\u0001" * (64 * KIB)
    raw = json.dumps({"role": "user", "content": text})
    assert len(raw.encode()) < settings.MAX_REQUEST_BYTES
    response = owner.client.post(
        f"/api/threads/{thread.id}/messages",
        raw,
        content_type="application/json",
        headers=owner._auth(),
    )
    assert response.status_code == 201


def test_a_bad_limit_setting_stops_start_up_with_a_message(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "SPACEDUCK_DATA_DIR": str(tmp_path),
        "SPACEDUCK_MAX_MEMORY_TITLE_CHARS": "500",
        "DJANGO_SETTINGS_MODULE": "spaceduck.settings",
    }
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode != 0
    assert "SPACEDUCK_MAX_MEMORY_TITLE_CHARS" in result.stderr


# --- Extraction time per message stays bounded ----------------------------------------------

# Shapes that made the regex stage quadratic in the length of a run-on sentence
# (64 KiB took 17-36 s before the clause look-around was bounded).
RUN_ONS = {
    "identity clauses": "My name is Bob and I live in Paris and I work at Acme as an engineer, ",
    "episodes": "yesterday I moved to Berlin with my wife and ",
    "dots": ". ",
}


@pytest.mark.parametrize("name", sorted(RUN_ONS))
def test_extracting_a_message_at_the_limit_takes_seconds_not_minutes(name: str) -> None:
    part = RUN_ONS[name]
    text = (part * (settings.MAX_MESSAGE_BYTES // len(part) + 1))[: settings.MAX_MESSAGE_BYTES]
    started = time.perf_counter()
    pipeline.propose(Source(role="user", text=text), get_chat())
    # ~1 s measured on 2 shared cores; the bound is loose to stay stable under load.
    assert time.perf_counter() - started < 10
