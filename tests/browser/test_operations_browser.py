"""Running the service from the browser, in real Chromium (issue #12, "Must show").

A person switches memory off and on again on Settings > Memory while an agent talks to the
JSON API of the same live server; retries an extraction that failed because the OpenAI-compatible
server was down; and follows a thread's message to its extraction and on to the memory it made.
Each flow checks what the person sees and what was stored.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

import pytest

from memories.extraction.classify_contract import SCHEMA_NAME
from memories.models import Extraction, Memory, Message
from memories.write.ingest import message_ingest
from memories.write.services import create_thread, memory_create
from spaceduck.core import runtime
from spaceduck.core.providers import reset_providers
from spaceduck.core.tokens import token_create
from spaceduck.models import RuntimeSetting, SettingChange
from tests.browser.conftest import log_in
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.scripted_chat import memory_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NS = "user:alice"
PASSWORD = "analytical-engine"
# Straight to 127.0.0.1, whatever HTTP(S)_PROXY a developer has set.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Agent:
    """An agent with a real token, talking HTTP to the live server (the same database)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.secret = token_create(
            name="alice-agent", namespaces=[NS], permissions=["read", "write"]
        ).secret

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(
            self.base_url + path,
            data=json.dumps(body).encode("utf-8"),
            method="POST",
            headers={"Authorization": f"Bearer {self.secret}", "Content-Type": "application/json"},
        )
        try:
            with _OPENER.open(request, timeout=15) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def thread(self, title: str) -> str:
        status, thread = self.post("/api/threads", {"namespace": NS, "title": title})
        assert status == 201, thread
        return str(thread["id"])

    def say(self, thread_id: str, text: str) -> dict[str, Any]:
        status, saved = self.post(
            f"/api/threads/{thread_id}/messages", {"role": "user", "content": text}
        )
        assert status == 201, saved
        return saved

    def context(self, thread_id: str) -> dict[str, Any]:
        status, context = self.post("/api/context", {"namespace": NS, "thread_id": thread_id})
        assert status == 200, context
        return context


def _log_in_with_the_form(page, live_server, django_user_model) -> None:  # type: ignore[no-untyped-def]
    django_user_model.objects.create_user("ada", password=PASSWORD, is_staff=True)
    page.goto(f"{live_server.url}/settings/memory/")
    assert "/admin/login/" in page.url  # staff only
    page.fill("#id_username", "ada")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/settings/memory/")


def _switch_memory(page, *, on: bool) -> str:  # type: ignore[no-untyped-def]
    """Tick or untick "Memory on", save, and return the flash the page comes back with."""
    box = page.locator("#id_memory_enabled")
    assert box.is_checked() is not on  # the page shows the value in effect
    box.set_checked(on)
    with page.expect_navigation():  # a plain form: POST, redirect, the page again
        page.locator("#memory-settings").get_by_role("button", name="Save").click()
    page.wait_for_selector("#flash .flash-success")
    assert page.locator("#id_memory_enabled").is_checked() is on
    return page.locator("#flash").inner_text()


# --- 1. memory off and on again -----------------------------------------------------------------


def test_memory_switched_off_on_the_settings_page_stops_extraction_and_context(  # type: ignore[no-untyped-def]
    page, live_server, django_user_model
) -> None:
    agent = Agent(live_server.url)
    thread_id = agent.thread("Moving house")
    # Known before the switch: with memory off, context must not hand it out either.
    tea = memory_create(namespace=NS, kind="fact", content="The user drinks green tea.", actor="t")
    _log_in_with_the_form(page, live_server, django_user_model)
    memory_row = page.locator("#setting-memory_enabled")
    assert "default" in memory_row.locator("td.source").inner_text()

    flash = _switch_memory(page, on=False)

    assert "Saved. Memory: True -> False." in flash
    assert "this page (staff:ada" in memory_row.locator("td.source").inner_text()
    latest = page.locator("#setting-history tbody tr").first.locator("td")
    assert latest.all_inner_texts()[1:] == ["staff:ada", "Memory", "True", "False"]
    assert RuntimeSetting.objects.get(key="memory_enabled").value is False
    change = SettingChange.objects.get(key="memory_enabled")
    assert (change.old, change.new, change.changed_by) == (True, False, "staff:ada")

    saved = agent.say(thread_id, "I live in Lisbon.")
    assert (saved["memory"], saved["extraction"]) == ("disabled", None)
    context = agent.context(thread_id)
    assert (context["memory"], context["memories"], context["system"]) == ("disabled", [], "")
    assert [m["content"] for m in context["messages"]] == ["I live in Lisbon."]  # history still
    off_message = Message.objects.get(pk=saved["id"])
    assert not Extraction.objects.exists()
    assert list(Memory.objects.values_list("pk", flat=True)) == [tea.pk]  # nothing new written

    flash = _switch_memory(page, on=True)

    assert "Saved. Memory: False -> True." in flash
    assert RuntimeSetting.objects.get(key="memory_enabled").value is True
    assert SettingChange.objects.filter(key="memory_enabled").count() == 2
    latest = page.locator("#setting-history tbody tr").first.locator("td")
    assert latest.all_inner_texts()[1:] == ["staff:ada", "Memory", "False", "True"]
    assert page.locator("#setting-history tbody tr").count() == 2

    saved = agent.say(thread_id, "I work as a nurse in Porto.")
    assert saved["memory"] == "enabled"
    assert saved["extraction"]["status"] == "done"  # huey is immediate in tests
    record = Extraction.objects.get(pk=saved["extraction"]["id"])
    assert (record.status, record.message_id) == ("done", saved["id"])
    learnt = Memory.objects.get(source_message_id=saved["id"])
    assert (learnt.content, learnt.status, learnt.namespace) == (
        "The user works as a nurse.",
        "active",
        NS,
    )
    # The message saved while memory was off stays unextracted: switching on is not a backfill.
    assert not Extraction.objects.filter(message=off_message).exists()
    assert not Memory.objects.filter(content__icontains="Lisbon").exists()

    context = agent.context(thread_id)
    assert context["memory"] == "enabled"
    given = {m["id"]: m["content"] for m in context["memories"]}
    assert given.get(learnt.pk) == "The user works as a nurse."
    assert "The user works as a nurse." in context["system"]


# --- 2. a failed extraction retried to done -----------------------------------------------------


# Nothing the regex stage recognises: what is stored can only come from the model.
TOLD = "My sister Ana visits in May; she loves sardines."
SISTER = "The user's sister Ana loves sardines."


def _scripted_model(request: dict[str, Any]) -> str:
    """The fake model: one fact about the user's sister; other jobs get a valid answer."""
    if request["response_format"]["json_schema"]["name"] != SCHEMA_NAME:
        return json.dumps({"summary": "A summary.", "verdict": "consistent", "reason": "Fine."})
    return json.dumps({"memories": [memory_item(content=SISTER)]})


def test_an_extraction_failed_by_the_openai_server_is_retried_to_done(  # type: ignore[no-untyped-def]
    page, live_server, django_user_model, settings, fake_openai: FakeOpenAI
) -> None:
    settings.SPACEDUCK_CHAT = {
        "provider": "openai",
        "model": "fake-chat",
        "base_url": fake_openai.base_url,
        "api_key": "k",
        "timeout": 5,
    }
    reset_providers()
    runtime.settings_update(values={"extraction_retries": 0}, actor="test")  # fail at once
    fake_openai.set_chat_handler(_scripted_model)
    fake_openai.enqueue("chat", status=500, body={"error": {"message": "the model is overloaded"}})
    agent = Agent(live_server.url)
    thread_id = agent.thread("Moving house")

    saved = agent.say(thread_id, TOLD)

    assert saved["extraction"]["status"] == "failed"
    record = Extraction.objects.get(pk=saved["extraction"]["id"])
    assert (record.status, record.attempts, record.candidates) == ("failed", 1, [])
    (error,) = record.errors
    assert (error["attempt"], error["error"]) == (
        1,
        f"openai chat failed (model fake-chat at {fake_openai.base_url}/): "
        "HTTP 500: the model is overloaded",
    )
    assert not Memory.objects.exists()
    assert len(fake_openai.requests_to("chat")) == 1  # the failing answer; the server is fine now

    user = django_user_model.objects.create_user("ada", password=PASSWORD, is_staff=True)
    log_in(page.context, live_server.url, user)
    page.goto(f"{live_server.url}/extractions/?status=failed")
    page.click(f"#extraction-{record.pk} a.extraction-link")
    page.wait_for_url(f"**/extractions/{record.pk}/")
    status = page.locator("#extraction-status")
    assert status.locator(".status-badge").inner_text() == "failed"
    assert "HTTP 500: the model is overloaded" in status.locator("ol.errors").inner_text()
    assert "No decision: every attempt failed" in page.locator("#candidates").inner_text()
    assert "chat=openai/fake-chat" in page.locator(".extraction-page").inner_text()  # provider

    page.get_by_role("button", name="Retry extraction").click()
    page.wait_for_selector("#extraction-status .extraction-status-done")

    assert status.locator(".status-badge").inner_text() == "done"
    assert f"Extraction {record.pk} was retried: it is done." in page.locator("#flash").inner_text()
    history = status.locator("ol.errors").inner_text()
    assert "HTTP 500: the model is overloaded" in history  # the failure stays as history
    assert "retried by staff:ada after 1 attempt" in history
    assert page.get_by_role("button", name="Retry extraction").count() == 0
    candidate = page.locator("#candidates tr.candidate")
    assert candidate.count() == 1
    assert SISTER in candidate.inner_text()
    assert candidate.locator(".decision").inner_text() == "stored"

    record.refresh_from_db()
    assert (record.status, record.attempts) == ("done", 1)
    retried = record.errors[-1]
    assert (retried["retry"], retried["by"], retried["after_attempts"]) == (True, "staff:ada", 1)
    stored = Memory.objects.get()
    assert (stored.content, stored.status, stored.source_message_id) == (
        SISTER,
        "active",
        saved["id"],
    )
    assert record.candidates[0]["memory_id"] == stored.pk
    assert candidate.locator("a.memory-link").inner_text() == f"#{stored.pk}"
    asked = fake_openai.requests_to("chat")
    assert len(asked) == 2  # the failure, then the retry's answer
    assert TOLD in asked[1].json["messages"][-1]["content"]


# --- 3. from a thread to an extraction to a memory ----------------------------------------------


def test_a_thread_message_leads_to_its_extraction_and_on_to_the_memory(  # type: ignore[no-untyped-def]
    page, live_server, django_user_model
) -> None:
    thread = create_thread(NS, "Moving house")
    message_ingest(thread.pk, "system", "You are a helpful assistant.")
    told = message_ingest(thread.pk, "user", "I have a cat named Tom.")
    message_ingest(thread.pk, "assistant", "Tom is a fine name for a cat.")
    extraction = told.extraction
    assert extraction is not None
    record = Extraction.objects.get(pk=extraction.pk)
    assert record.status == "done"
    learnt = Memory.objects.get(source_message=told.message)
    assert learnt.content == "The user has a cat named Tom."

    user = django_user_model.objects.create_user("ada", password=PASSWORD, is_staff=True)
    log_in(page.context, live_server.url, user)
    page.goto(f"{live_server.url}/threads/?namespace={NS}")
    page.click("a.thread-link:has-text('Moving house')")
    page.wait_for_url(f"**/threads/{thread.pk}/")
    assert page.locator("h1").inner_text() == "Moving house"
    assert "3 messages." in page.locator("#messages .summary").inner_text()
    system = page.locator("li.message.role-system")
    assert "not extracted (system message)" in system.locator(".extraction-state").inner_text()
    said = page.locator("li.message.role-user", has_text="I have a cat named Tom.")
    state = said.locator(".extraction-state")
    assert state.locator(".status-badge").inner_text() == "done"
    assert state.locator("a.extraction-link").inner_text() == f"extraction #{record.pk}"

    state.locator("a.extraction-link").click()
    page.wait_for_url(f"**/extractions/{record.pk}/")

    assert page.locator("h1").inner_text() == f"Extraction #{record.pk}"
    assert page.locator("blockquote.message-text").inner_text() == "I have a cat named Tom."
    assert page.locator("#extraction-status .status-badge").inner_text() == "done"
    assert page.locator("a.thread-link").get_attribute("href") == f"/threads/{thread.pk}/"
    candidate = page.locator("#candidates tr.candidate", has_text="The user has a cat named Tom.")
    assert candidate.locator(".decision").inner_text() == "stored"
    link = candidate.locator("a.memory-link")
    assert link.inner_text() == f"#{learnt.pk}"

    link.click()
    page.wait_for_url(f"**/memories/{learnt.pk}/")

    assert page.locator("blockquote.memory-content").inner_text() == learnt.content
    shown = page.locator("main").inner_text()
    assert NS in shown
    assert re.search(r"\bfact\b", shown)
    learnt.refresh_from_db()
    assert (learnt.status, learnt.source_thread_id) == ("active", thread.pk)


# --- 4. the embedder: a dimension that does not fit is refused, one that fits switches ------------


@pytest.fixture
def vector_table_put_back(live_server):  # type: ignore[no-untyped-def]
    """The switch recreates the vec0 table: DDL that a live-server test's flush does not undo.

    Later tests expect the table at the test embedder's dimension, so it is rebuilt
    (empty, as the flush leaves the memories) at the dimension it had before.
    """
    from django.db import connection, transaction

    from memories.store import vector_index

    before = vector_index.table_dimensions()
    yield
    if before is not None and vector_index.table_dimensions() != before:
        with transaction.atomic(), connection.cursor() as cursor:
            vector_index.recreate_table(cursor, before)
        vector_index.cache_clear()


def test_a_wrong_embedding_dimension_is_refused_and_a_fitting_one_switches(  # type: ignore[no-untyped-def]
    page, live_server, django_user_model, settings, vector_table_put_back
) -> None:
    from memories.models import ReembedJob
    from memories.store import vector_index

    settings.SETTINGS_REFRESH_SECONDS = 0  # the switch's repair pass waits 2x this + 0.5 s
    memory_create(
        namespace="user:alice", kind="fact", content="The user drinks green tea.", actor="t"
    )
    user = django_user_model.objects.create_user("ada", password=PASSWORD, is_staff=True)
    log_in(page.context, live_server.url, user)
    page.goto(f"{live_server.url}/settings/memory/")
    form = page.locator("#embedder-settings")
    form.locator("#id_provider").select_option("local")
    form.locator("#id_dimensions").fill("512")
    form.get_by_role("button", name="Re-embed and switch").click()
    page.wait_for_selector("#embedder-settings .errorlist")
    assert "makes 384-dimensional vectors; 512 does not fit it" in form.inner_text()
    assert not ReembedJob.objects.exists()
    assert vector_index.table_dimensions() == 384

    form.locator("#id_provider").select_option("hash")
    form.locator("#id_model").fill("")
    form.locator("#id_dimensions").fill("64")
    with page.expect_navigation():
        form.get_by_role("button", name="Re-embed and switch").click()
    page.wait_for_selector("#flash .flash-success")
    assert "the current index serves until the switch" in page.locator("#flash").inner_text()
    # huey is immediate in tests: the job has run by the time the page comes back
    assert page.locator("#reembed-progress .status").inner_text() == "done"
    assert "/64d" in page.locator("#reembed-progress").inner_text()
    assert ReembedJob.objects.get().status == "done"
    assert vector_index.table_dimensions() == 64
