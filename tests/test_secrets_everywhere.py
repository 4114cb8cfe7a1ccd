"""Credentials wherever a client writes text (issue 37, item 3; the policy is
spaceduck.core.credentials.screened): conversation (a message's content and provenance, a
thread's title) is stored with each credential marked while SPACEDUCK_REDACT_SECRETS is on;
knowledge (a memory's title, content, summary, tags and context, a note, a fact's value and
provenance) is refused with the reason, whatever the setting. Every front end: the API, the
dashboard, the admin, MCP, spaceduck.store and ``manage.py import``. Ordinary text with no
credential (a uuid, a date, an e-mail address) is stored as sent."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from mcp.server.mcpserver.exceptions import ToolError

import spaceduck.store as store
from memories.mcp.tools import remember, set_fact
from memories.models import Fact, Memory, Message, Thread
from memories.write import edits
from memories.write.services import create_thread, memory_create, save_message
from notes.mcp_tools import save_note as mcp_save_note
from notes.models import Note
from spaceduck.core.credentials import screened
from spaceduck.core.errors import InvalidInput
from spaceduck.core.mcp_base import set_stdio_token
from tests.conftest import Actor
from tests.test_secrets_redacted import SECRETS, leaked

pytestmark = pytest.mark.django_db
NS = "user:alice"
KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
PASSWORD = "Sw0rdf1sh!2024"
PIN = "4821"
# Ordinary text that must never be taken for a credential.
UUID = "550e8400-e29b-41d4-a716-446655440000"
WHEN = "2026-12-04T17:25:12.123456+00:00"
EMAIL = "ana.lopez@example.com"
PLAIN_PROVENANCE = {
    "run_id": UUID,
    "at": WHEN,
    "by": EMAIL,
    "iteration": 3,
    "tool_args": "--verbose --limit 20",
    "steps": [{"date": "2026-12-04", "note": "moved the meeting to Friday"}],
}
# A credential at every depth and in every place of a JSON object: a value, a key, a key
# and its value read together, a list item.
SECRET_PROVENANCE = {
    "tool_args": f"--api-key {KEY}",
    "steps": [{"password": PASSWORD}, {"pin": PIN}],
    f"token {KEY}": "the key above",
    "kept": "nothing secret here",
}


def _thread(owner: Actor, title: str | None = None) -> str:
    response = owner.post("/api/threads", {"namespace": NS, "title": title})
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def _reads(owner: Actor, thread: str, tmp_path: Path) -> list[str]:
    """Every read that shows a message or a thread: the API, context and an export."""
    answers = [
        owner.get(f"/api/threads/{thread}/messages"),
        owner.get(f"/api/threads/{thread}"),
        owner.get("/api/threads", {"namespace": NS}),
        owner.post("/api/context", {"namespace": NS, "thread_id": thread, "query": "key"}),
    ]
    for answer in answers:
        assert answer.status_code == 200, answer.content
    path = tmp_path / "export.jsonl"
    call_command("export", str(path), "--no-progress", stdout=StringIO())
    return [answer.content.decode() for answer in answers] + [path.read_text()]


def _secrets_in(text: str) -> list[str]:
    return leaked(text) + [s for s in (KEY, PASSWORD) if s in text]


# --- The policy, one place --------------------------------------------------------------------


def test_conversation_is_marked_and_knowledge_refused_with_one_wording() -> None:
    kept = screened("message", {"content": "hi", "provenance": SECRET_PROVENANCE})
    assert _secrets_in(json.dumps(kept)) == []
    assert kept["provenance"]["kept"] == "nothing secret here"
    assert kept["provenance"]["steps"] == [
        {"password": "[redacted: password_phrase]"},
        {"pin": "[redacted: pin]"},
    ]
    for record, field, value in [
        ("memory", "tags", ["home", KEY]),
        ("fact", "value", {"a": [{"b": f"my PIN is {PIN}"}]}),
        ("fact", "provenance", {"password": PASSWORD}),
        ("note", "body", f"The API key is {KEY}"),
    ]:
        with pytest.raises(InvalidInput) as refused:
            screened(record, {field: value})
        assert str(refused.value).startswith("rejected: secret: ")
        assert f" in {field} (credentials are never stored as " in str(refused.value)


@override_settings(REDACT_SECRETS=False)
def test_knowledge_is_refused_even_with_redaction_off(owner: Actor) -> None:
    kept = screened("message", {"content": f"my PIN is {PIN}", "provenance": None})
    assert kept["content"] == f"my PIN is {PIN}"  # conversation: as sent
    with pytest.raises(InvalidInput, match=r"rejected: secret: pin in value"):
        screened("fact", {"value": f"my PIN is {PIN}"})
    fact = owner.put(f"/api/facts/{NS}/door", {"value": f"my PIN is {PIN}"})
    assert fact.status_code == 422
    assert fact.json()["detail"].startswith("rejected: secret: pin in value")
    note = owner.post("/api/notes", {"namespace": NS, "body": f"The door PIN is {PIN}."})
    assert note.status_code == 422
    memory = {"namespace": NS, "kind": "fact", "content": "The user deploys.", "tags": [KEY]}
    assert owner.post("/api/memories", memory).json()["decision"] == "rejected"
    assert not Fact.objects.exists()
    assert not Note.objects.exists()
    assert not Memory.objects.exists()


# --- The API ----------------------------------------------------------------------------------


def test_message_provenance_is_redacted_in_what_is_stored_and_every_read(
    owner: Actor, tmp_path: Path
) -> None:
    thread = _thread(owner)
    for frame, secret in SECRETS:
        saved = owner.post(
            f"/api/threads/{thread}/messages",
            {
                "role": "tool",
                "content": "ran the tool",
                "provenance": {
                    "tool_args": frame.format(secret),
                    "deep": [{"x": frame.format(secret)}],
                },
            },
        )
        assert saved.status_code == 201, saved.content
        assert leaked(saved.content.decode()) == []
    saved = owner.post(
        f"/api/threads/{thread}/messages",
        {"role": "tool", "content": "ran it again", "provenance": SECRET_PROVENANCE},
    )
    assert saved.status_code == 201
    stored = json.dumps([m.provenance for m in Message.objects.all()])
    assert _secrets_in(stored) == []
    assert "[redacted: api_key]" in stored
    for read in _reads(owner, thread, tmp_path):
        assert _secrets_in(read) == []


def test_thread_titles_are_redacted(owner: Actor, tmp_path: Path) -> None:
    thread = _thread(owner, f"Deploy with key {KEY}")
    title = Thread.objects.get(pk=thread).title
    assert title == "Deploy with key [redacted: api_key]"
    for read in _reads(owner, thread, tmp_path):
        assert _secrets_in(read) == []


def test_a_redacted_title_keeps_within_the_limit(owner: Actor) -> None:
    title = "x" * 480 + f" my PIN is {PIN}"  # 495 characters; the mark is longer than 4821
    thread = _thread(owner, title)
    stored = Thread.objects.get(pk=thread).title
    assert len(stored) == 500
    assert stored.endswith("my PIN is [redacted")
    assert leaked(stored) == []


@override_settings(REDACT_SECRETS=False)
def test_with_redaction_off_conversation_is_kept_as_sent(owner: Actor) -> None:
    thread = _thread(owner, f"Deploy with key {KEY}")
    owner.post(
        f"/api/threads/{thread}/messages",
        {"role": "tool", "content": "ran", "provenance": {"tool_args": f"--api-key {KEY}"}},
    )
    assert Thread.objects.get(pk=thread).title == f"Deploy with key {KEY}"
    assert Message.objects.get().provenance == {"tool_args": f"--api-key {KEY}"}


def test_ordinary_conversation_is_stored_unchanged(owner: Actor) -> None:
    title = f"Trip on 2026-12-04 with {EMAIL} ({UUID})"
    thread = _thread(owner, title)
    saved = owner.post(
        f"/api/threads/{thread}/messages",
        {"role": "tool", "content": "done", "provenance": PLAIN_PROVENANCE},
    )
    assert saved.status_code == 201
    assert Thread.objects.get(pk=thread).title == title
    assert Message.objects.get().provenance == PLAIN_PROVENANCE
    listed = owner.get(f"/api/threads/{thread}/messages").json()["messages"]
    assert listed[0]["provenance"] == PLAIN_PROVENANCE


def test_a_memory_with_a_key_in_its_tags_is_refused_as_in_its_title(owner: Actor) -> None:
    base = {"namespace": NS, "kind": "fact", "content": "The user deploys on Mondays."}
    for field, value in (("title", f"key {KEY}"), ("tags", ["deploy", KEY])):
        response = owner.post("/api/memories", {**base, field: value})
        assert response.status_code == 200, response.content
        assert response.json()["decision"] == "rejected"
        assert response.json()["reason"] == "secret: api_key"
    context = owner.post("/api/memories", {**base, "context": f"use the key {KEY}"})
    assert context.status_code == 422
    assert "secret: api_key" in context.json()["detail"]
    assert not Memory.objects.exists()
    plain = owner.post("/api/memories", {**base, "tags": ["2026-12-04", UUID, EMAIL]})
    assert plain.status_code == 201
    assert Memory.objects.get().tags == ["2026-12-04", UUID, EMAIL]


def test_a_memory_edit_may_not_bring_a_key_in_its_tags(owner: Actor) -> None:
    memory = memory_create(namespace=NS, kind="fact", content="The user deploys.", actor="t")
    response = owner.patch(f"/api/memories/{memory.pk}", {"tags": ["deploy", KEY]})
    assert response.status_code == 422
    assert response.json()["detail"] == (
        "rejected: secret: api_key in tags (credentials are never stored as memories)"
    )
    memory.refresh_from_db()
    assert memory.tags == []
    assert owner.patch(f"/api/memories/{memory.pk}", {"tags": [UUID]}).status_code == 200


def test_fact_values_and_provenance_are_refused(owner: Actor) -> None:
    cases = [
        ({"value": f"my PIN is {PIN}"}, "pin in value"),
        ({"value": {"deploy": {"steps": [{"password": PASSWORD}]}}}, "password_phrase in value"),
        ({"value": "ok", "provenance": {"tool_args": f"--api-key {KEY}"}}, "api_key in provenance"),
    ]
    for body, where in cases:
        response = owner.put(f"/api/facts/{NS}/deploy", body)
        assert response.status_code == 422, response.content
        assert response.json()["detail"] == (
            f"rejected: secret: {where} (credentials are never stored as facts)"
        )
    assert not Fact.objects.exists()
    value = {"id": UUID, "when": WHEN, "mail": EMAIL, "count": 4821}
    stored = owner.put(f"/api/facts/{NS}/deploy", {"value": value, "provenance": PLAIN_PROVENANCE})
    assert stored.status_code == 200, stored.content
    assert Fact.objects.get().value == value


def test_note_body_tags_and_provenance_are_refused(owner: Actor) -> None:
    for body, where in [
        ({"body": f"The deploy key is {KEY}"}, "body"),
        ({"body": "Deploys", "tags": [KEY]}, "tags"),
        ({"body": "Deploys", "provenance": {"password": PASSWORD}}, "provenance"),
    ]:
        response = owner.post("/api/notes", {"namespace": NS, **body})
        assert response.status_code == 422, response.content
        assert response.json()["detail"].startswith("rejected: secret: ")
        assert f" in {where} (credentials are never stored as notes)" in response.json()["detail"]
    assert not Note.objects.exists()
    body = f"Met {EMAIL} on 2026-12-04 about ticket {UUID}."
    saved = owner.post("/api/notes", {"namespace": NS, "body": body, "tags": [UUID]})
    assert saved.status_code == 201, saved.content
    assert Note.objects.get().body == body


# --- Dashboard and admin ----------------------------------------------------------------------


@pytest.mark.parametrize("htmx", [False, True])
def test_the_dashboard_edit_form_refuses_a_key_in_the_tags(
    staff_client: Client, htmx: bool
) -> None:
    memory = memory_create(namespace=NS, kind="fact", content="The user deploys.", actor="t")
    data = {
        "title": memory.title,
        "content": memory.content,
        "summary": memory.summary,
        "tags": f"deploy, {KEY}",
        "importance": memory.importance,
        "confidence": memory.confidence,
        "scope": memory.scope,
        "scope_id": memory.scope_id,
    }
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = staff_client.post(f"/memories/{memory.pk}/edit/", data, **headers)
    assert 400 <= response.status_code < 500
    assert "rejected: secret: api_key in tags" in response.content.decode()
    memory.refresh_from_db()
    assert memory.tags == []
    data["tags"] = f"deploy, {EMAIL}"
    saved = staff_client.post(f"/memories/{memory.pk}/edit/", data, **headers)
    assert saved.status_code in (200, 302)
    memory.refresh_from_db()
    assert memory.tags == ["deploy", EMAIL]


def test_the_admin_refuses_a_memory_a_fact_and_a_note_with_a_key(admin_client: Client) -> None:
    memory = admin_client.post(
        "/admin/memories/memory/add/",
        {
            "namespace": NS,
            "kind": "fact",
            "content": "The user deploys on Mondays.",
            "tags": f"deploy, {KEY}",
            "importance": "standard",
            "confidence": "stated",
            "scope": "global",
        },
    )
    assert "secret: api_key" in memory.content.decode()
    assert not Memory.objects.exists()
    fact = admin_client.post(
        "/admin/memories/fact/add/",
        {"namespace": NS, "key": "deploy", "value": json.dumps({"password": PASSWORD})},
        follow=True,
    )
    assert "rejected: secret: password_phrase in value" in fact.content.decode()
    assert not Fact.objects.exists()
    note = admin_client.post(
        "/admin/notes/note/add/", {"namespace": NS, "body": "Deploys", "tags": f"ops, {KEY}"}
    )
    assert "rejected: secret: api_key in tags" in note.content.decode()
    assert not Note.objects.exists()
    plain = admin_client.post(
        "/admin/memories/fact/add/",
        {"namespace": NS, "key": "deploy", "value": json.dumps({"id": UUID, "mail": EMAIL})},
    )
    assert plain.status_code == 302
    assert Fact.objects.get().value == {"id": UUID, "mail": EMAIL}


# --- MCP tools, spaceduck.store ---------------------------------------------------------------


@pytest.fixture
def mcp_token(owner: Actor) -> Any:
    set_stdio_token(owner.secret)
    yield owner
    set_stdio_token(None)


# Each tool call closes the connection, as around a request: no test transaction to hold.
@pytest.mark.django_db(transaction=True)
def test_mcp_tools_redact_messages_and_refuse_knowledge(mcp_token: Actor) -> None:
    said = remember(content=f"My API key is {KEY} and I live in Lisbon.")
    stored = Message.objects.get(pk=said["id"])
    assert KEY not in json.dumps(stored.content)
    assert "I live in Lisbon" in stored.content
    decided = remember(content=f"The user's API key is {KEY}.", mode="memory")
    assert decided["decision"] == "rejected"
    assert decided["reason"] == "secret: api_key"
    with pytest.raises(ToolError, match=r"rejected: secret: pin in value \(credentials"):
        set_fact(key="door", value={"code": f"my PIN is {PIN}"}, namespace=NS)
    with pytest.raises(ToolError, match=r"rejected: secret: api_key in tags \(credentials"):
        mcp_save_note(body="Deploys", tags=[KEY], namespace=NS)
    assert not Fact.objects.exists()
    assert not Note.objects.exists()
    assert set_fact(key="trip", value={"id": UUID, "mail": EMAIL}, namespace=NS)["value"] == {
        "id": UUID,
        "mail": EMAIL,
    }
    assert mcp_save_note(body=f"Met {EMAIL}.", namespace=NS)["body"] == f"Met {EMAIL}."


def test_spaceduck_store_applies_the_same_policy() -> None:
    thread = store.create_thread(NS, title=f"key {KEY}")
    assert thread.title == "key [redacted: api_key]"
    message = store.save_message(
        thread.id, "tool", "ok", provenance={"tool_args": f"--api-key {KEY}"}
    )
    assert message.provenance == {"tool_args": "--api-key [redacted: api_key]"}
    assert Message.objects.get().provenance == message.provenance
    with pytest.raises(InvalidInput, match=r"^rejected: secret: api_key in value \(credentials"):
        store.set_fact(NS, "deploy", {"key": KEY})
    with pytest.raises(InvalidInput, match=r"^rejected: secret: pin in body \(credentials"):
        store.save_note(NS, f"The door PIN is {PIN}.")
    assert not Fact.objects.exists()
    assert not Note.objects.exists()
    plain = store.save_message(thread.id, "tool", "ok", provenance=PLAIN_PROVENANCE)
    assert plain.provenance == PLAIN_PROVENANCE
    assert store.set_fact(NS, "trip", {"id": UUID}).value == {"id": UUID}


# --- Import -----------------------------------------------------------------------------------


def _export(tmp_path: Path) -> Path:
    path = tmp_path / "export.jsonl"
    call_command("export", str(path), "--no-progress", stdout=StringIO())
    return path


def test_import_redacts_conversation_stored_before(tmp_path: Path) -> None:
    with override_settings(REDACT_SECRETS=False):
        thread = create_thread(NS, title=f"key {KEY}")
        save_message(thread.id, "user", f"my PIN is {PIN}", provenance={"password": PASSWORD})
        save_message(thread.id, "tool", "ok", provenance=PLAIN_PROVENANCE)
    path = _export(tmp_path)
    assert _secrets_in(path.read_text())
    Thread.objects.all().delete()
    call_command("import", str(path), "--no-progress", stdout=StringIO())
    assert Thread.objects.get().title == "key [redacted: api_key]"
    contents = json.dumps([[m.content, m.provenance] for m in Message.objects.all()])
    assert _secrets_in(contents) == []
    assert Message.objects.filter(provenance=PLAIN_PROVENANCE).count() == 1


@pytest.mark.parametrize(
    ("record", "field", "value", "where"),
    [
        ("memory", "tags", ["deploy", KEY], "api_key in tags"),
        ("memory", "context", f"use {KEY}", "api_key in context"),
        ("fact", "value", {"password": PASSWORD}, "password_phrase in value"),
        ("note", "body", f"The door PIN is {PIN}.", "pin in body"),
    ],
)
def test_import_refuses_knowledge_with_a_credential(
    tmp_path: Path, record: str, field: str, value: Any, where: str
) -> None:
    memory_create(namespace=NS, kind="fact", content="The user deploys on Mondays.", actor="t")
    store.set_fact(NS, "trip", {"id": UUID, "mail": EMAIL})
    store.save_note(NS, f"Met {EMAIL} on 2026-12-04.")
    path = _export(tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        if line["type"] == record:
            line[field] = value
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(CommandError) as refused:
        call_command("import", str(path), "--no-progress", stdout=StringIO())
    assert f"({record} " in str(refused.value)
    assert f"rejected: secret: {where} (credentials are never stored as " in str(refused.value)
    assert Memory.objects.get().tags == []  # nothing written


def test_import_of_ordinary_knowledge_is_unchanged(tmp_path: Path) -> None:
    memory_create(
        namespace=NS, kind="fact", content="The user deploys.", tags=[UUID, EMAIL], actor="t"
    )
    store.set_fact(NS, "trip", {"id": UUID, "when": WHEN, "mail": EMAIL})
    store.save_note(NS, f"Met {EMAIL} on 2026-12-04.")
    path = _export(tmp_path)
    out = StringIO()
    call_command("import", str(path), "--no-progress", stdout=out)  # all unchanged
    assert Fact.objects.get().value == {"id": UUID, "when": WHEN, "mail": EMAIL}


# --- The command for what was stored before ---------------------------------------------------


def test_redact_secrets_covers_provenance_and_thread_titles(owner: Actor) -> None:
    with override_settings(REDACT_SECRETS=False):
        thread = _thread(owner, f"Deploy with key {KEY}")
        _thread(owner, f"Trip with {EMAIL}")
        owner.post(
            f"/api/threads/{thread}/messages",
            {"role": "tool", "content": "ran", "provenance": SECRET_PROVENANCE},
        )
        owner.post(
            f"/api/threads/{thread}/messages",
            {"role": "tool", "content": "ran", "provenance": PLAIN_PROVENANCE},
        )
    out = StringIO()
    call_command("redact_secrets", "--dry-run", "--no-progress", stdout=out)
    assert "Would redact credentials in 1 messages" in out.getvalue()
    assert "and in 1 thread titles" in out.getvalue()
    assert Thread.objects.get(pk=thread).title == f"Deploy with key {KEY}"
    call_command("redact_secrets", "--no-progress", stdout=out)
    assert Thread.objects.get(pk=thread).title == "Deploy with key [redacted: api_key]"
    assert _secrets_in(json.dumps([m.provenance for m in Message.objects.all()])) == []
    assert Message.objects.filter(provenance=PLAIN_PROVENANCE).count() == 1
    assert Thread.objects.filter(title=f"Trip with {EMAIL}").count() == 1
    again = StringIO()
    call_command("redact_secrets", "--no-progress", stdout=again)
    assert "in 0 messages and 0 extraction records, and in 0 thread titles" in again.getvalue()


def test_a_memory_edit_through_lifecycle_refuses_a_secret_tag() -> None:
    memory = memory_create(namespace=NS, kind="fact", content="The user deploys.", actor="t")
    with pytest.raises(InvalidInput, match=r"^rejected: secret: api_key in tags"):
        edits.memory_edit(memory=memory, changes={"tags": [KEY]}, actor="staff:t")
