"""Settings > Memory: staff change memory settings in the browser; every process follows within
seconds; every change is recorded; with memory off nothing is written and agents get no
memory."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from django.test import Client

from memories.models import Extraction, Memory, Message
from memories.write.runner import MEMORY_OFF, run_extraction
from memories.write.services import create_thread, memory_create
from spaceduck.core import runtime
from spaceduck.models import RuntimeSetting, SettingChange
from tests.conftest import Actor
from tests.processes import manage, service_env, start_manage

pytestmark = pytest.mark.django_db

PAGE = "/settings/memory/"
DEFAULTS = {
    "memory_enabled": "on",
    "recall_semantic": "on",
    "extraction_retries": "3",
    "task_max_memory_writes": "10",
}


def _switch_memory_off(staff_client: Client) -> None:
    form = {k: v for k, v in DEFAULTS.items() if k != "memory_enabled"}  # unchecked box
    response = staff_client.post(PAGE, form)
    assert response.status_code == 302
    assert runtime.memory_enabled() is False


def test_the_page_is_for_staff_only(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    assert "/admin/login/" in client.get(PAGE)["Location"]
    response = client.post(PAGE, DEFAULTS)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
    user = django_user_model.objects.create_user("agent-owner", password="pw-12345678")
    client.force_login(user)
    assert client.post(PAGE, {**DEFAULTS, "extraction_retries": "7"}).status_code == 302
    assert not RuntimeSetting.objects.exists()


def test_posts_need_the_csrf_token(django_user_model) -> None:  # type: ignore[no-untyped-def]
    user = django_user_model.objects.create_user("staff2", password="pw-staff-123", is_staff=True)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(PAGE, DEFAULTS).status_code == 403
    assert not RuntimeSetting.objects.exists()


def test_the_page_says_where_each_value_comes_from(staff_client: Client) -> None:
    page = staff_client.get(PAGE).content.decode()
    assert "default (<code>SPACEDUCK_MEMORY_ENABLED</code> unset)" in page
    # tests/settings.py sets the embedder by environment variable
    assert "environment: <code>SPACEDUCK_RECALL_SEMANTIC</code>" not in page
    staff_client.post(PAGE, {**DEFAULTS, "extraction_retries": "5"})
    page = staff_client.get(PAGE).content.decode()
    assert "this page (staff:staff," in page
    assert 'value="5"' in page


def test_a_change_is_saved_recorded_and_in_effect(staff_client: Client) -> None:
    response = staff_client.post(PAGE, {**DEFAULTS, "extraction_retries": "0"}, follow=True)
    assert "Saved. Extraction retries: 3 -&gt; 0." in response.content.decode()
    assert runtime.extraction_retries() == 0
    change = SettingChange.objects.get()
    assert (change.key, change.old, change.new, change.changed_by) == (
        "extraction_retries",
        3,
        0,
        "staff:staff",
    )
    history = staff_client.get(PAGE).content.decode()
    assert "Extraction retries" in history
    assert "staff:staff" in history


def test_saving_the_page_unchanged_pins_nothing(staff_client: Client) -> None:
    response = staff_client.post(PAGE, DEFAULTS, follow=True)
    assert "Nothing changed." in response.content.decode()
    assert not RuntimeSetting.objects.exists()
    assert not SettingChange.objects.exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("extraction_retries", "-1"),
        ("extraction_retries", "many"),
        ("task_max_memory_writes", "99999"),
    ],
)
def test_bad_values_are_refused_with_a_message_and_nothing_is_saved(
    staff_client: Client, field: str, value: str
) -> None:
    response = staff_client.post(PAGE, {**DEFAULTS, field: value})
    assert response.status_code == 400
    assert "errorlist" in response.content.decode()
    assert not RuntimeSetting.objects.exists()


def test_use_the_default_drops_the_saved_value_and_records_it(staff_client: Client) -> None:
    staff_client.post(PAGE, {**DEFAULTS, "task_max_memory_writes": "2"})
    assert runtime.task_max_memory_writes() == 2
    staff_client.post(PAGE, {"reset": "task_max_memory_writes"})
    assert runtime.task_max_memory_writes() == 10
    last = SettingChange.objects.first()
    assert last is not None
    assert (last.old, last.new, last.reset) == (2, 10, True)


def test_an_unknown_setting_is_a_clear_error(staff_client: Client) -> None:
    response = staff_client.post(PAGE, {"reset": "delete_everything"})
    assert response.status_code == 422
    assert "unknown setting" in response.content.decode()


def test_semantic_recall_follows_the_page(staff_client: Client) -> None:
    assert runtime.recall_semantic() is True
    staff_client.post(PAGE, {k: v for k, v in DEFAULTS.items() if k != "recall_semantic"})
    assert runtime.recall_semantic() is False


def test_with_memory_off_messages_are_not_extracted(staff_client: Client, owner: Actor) -> None:
    _switch_memory_off(staff_client)
    thread = owner.post("/api/threads", {"namespace": "user:alice"}).json()
    saved = owner.post(
        f"/api/threads/{thread['id']}/messages", {"role": "user", "content": "I live in Lisbon."}
    )
    assert saved.status_code == 201
    assert saved.json()["memory"] == "disabled"
    assert saved.json()["extraction"] is None
    assert not Memory.objects.exists()
    assert not Extraction.objects.exists()


def test_with_memory_off_direct_writes_are_refused(staff_client: Client, owner: Actor) -> None:
    _switch_memory_off(staff_client)
    response = owner.post(
        "/api/memories",
        {"namespace": "user:alice", "kind": "fact", "content": "The user likes tea."},
    )
    assert response.status_code == 409
    assert "memory is off" in response.json()["detail"]
    assert not Memory.objects.exists()


def _a_memory(owner: Actor) -> int:
    made = owner.post(
        "/api/memories",
        {"namespace": "user:alice", "kind": "fact", "content": "The user likes tea."},
    )
    assert made.status_code == 201, made.content
    return int(made.json()["memory"]["id"])


def test_with_memory_off_an_agents_edit_is_refused_and_nothing_changes(
    staff_client: Client, owner: Actor
) -> None:
    memory_id = _a_memory(owner)
    _switch_memory_off(staff_client)
    edited = owner.patch(f"/api/memories/{memory_id}", {"content": "The user likes coffee."})
    assert edited.status_code == 409
    assert "memory is off" in edited.json()["detail"]
    archived = owner.patch(f"/api/memories/{memory_id}", {"status": "archived"})
    assert archived.status_code == 409
    memory = Memory.objects.get(pk=memory_id)
    assert (memory.content, memory.status) == ("The user likes tea.", "active")


def test_with_memory_off_forgetting_still_works(staff_client: Client, owner: Actor) -> None:
    memory_id = _a_memory(owner)
    _switch_memory_off(staff_client)
    assert owner.delete(f"/api/memories/{memory_id}").status_code == 204
    assert not Memory.objects.filter(pk=memory_id).exists()


def test_with_memory_off_a_retried_extraction_is_refused(
    staff_client: Client, owner: Actor
) -> None:
    thread = create_thread("user:alice")
    message = Message.objects.create(thread=thread, role="user", content="I live in Lisbon.")
    record = Extraction.objects.create(
        message=message, namespace="user:alice", thread_id=thread.id, status="failed"
    )
    _switch_memory_off(staff_client)
    retried = owner.post(f"/api/extractions/{record.pk}/retry")
    assert retried.status_code == 409
    assert "memory is off" in retried.json()["detail"]
    record.refresh_from_db()
    assert record.status == "failed"


def test_with_memory_off_the_admin_shows_the_banner(staff_client: Client, admin_client) -> None:  # type: ignore[no-untyped-def]
    assert "memory-off-banner" not in admin_client.get("/admin/").content.decode()
    _switch_memory_off(staff_client)
    page = admin_client.get("/admin/").content.decode()
    assert 'id="memory-off-banner"' in page
    assert "Memory is <b>off</b>" in page


def test_with_memory_off_agents_get_no_memory(staff_client: Client, owner: Actor) -> None:
    memory_create(
        namespace="user:alice",
        kind="procedure",
        procedure_subtype="constraint",
        content="Never deploy on Fridays.",
        actor="t",
    )
    memory_create(
        namespace="user:alice", kind="fact", content="The user lives in Lisbon.", actor="t"
    )
    thread = create_thread("user:alice")
    before = owner.post(
        "/api/context", {"namespace": "user:alice", "thread_id": thread.id, "query": "Lisbon"}
    )
    assert "Never deploy on Fridays." in before.json()["system"]
    assert before.json()["memory"] == "enabled"

    _switch_memory_off(staff_client)
    context = owner.post(
        "/api/context", {"namespace": "user:alice", "thread_id": thread.id, "query": "Lisbon"}
    )
    assert context.status_code == 200
    assert context.json()["memory"] == "disabled"
    assert context.json()["system"] == ""
    assert context.json()["memories"] == []
    search = owner.get("/api/memories/search", {"q": "Lisbon", "namespace": "user:alice"})
    assert search.status_code == 200
    assert search.json() == {"memories": [], "memory": "disabled"}


def test_a_queued_extraction_writes_nothing_once_memory_is_off(staff_client: Client) -> None:
    thread = create_thread("user:alice")
    message = Message.objects.create(thread=thread, role="user", content="I live in Lisbon.")
    record = Extraction.objects.create(
        message=message, namespace="user:alice", thread_id=thread.id
    )  # queued while memory was on
    _switch_memory_off(staff_client)
    done = run_extraction(record.pk)
    assert done is not None
    assert done.status == "done"
    assert done.candidates[0]["reason"] == MEMORY_OFF
    assert not Memory.objects.exists()


WATCH = (
    "import sys, time; from spaceduck.core import runtime\n"
    "print('on' if runtime.memory_enabled() else 'off', flush=True)\n"
    "deadline = time.monotonic() + 30\n"
    "while runtime.memory_enabled() and time.monotonic() < deadline:\n"
    "    time.sleep(0.05)\n"
    "print('on' if runtime.memory_enabled() else 'off', flush=True)\n"
)
SWITCH_OFF = (
    "from spaceduck.core import runtime; "
    "runtime.settings_update(values={'memory_enabled': False}, actor='staff:ops')"
)


def _next_state(process: subprocess.Popen[str]) -> str:
    """The watcher's next "on"/"off" line (the shell prints its own lines first)."""
    assert process.stdout is not None
    for line in process.stdout:
        if line.strip() in {"on", "off"}:
            return line.strip()
    return "exited"


@pytest.mark.slow
def test_another_process_follows_a_change_within_seconds(tmp_path: Path) -> None:
    """A running process (a web worker, the huey worker) sees a change saved by another one
    within the refresh period, without a restart."""
    env = service_env(tmp_path, SPACEDUCK_SETTINGS_REFRESH_SECONDS="1")
    assert manage(env, "migrate", "--no-input").returncode == 0
    watcher = start_manage(env, "shell", "-c", WATCH)
    try:
        assert _next_state(watcher) == "on"
        changed = manage(env, "shell", "-c", SWITCH_OFF, timeout=60)
        assert changed.returncode == 0, changed.stderr
        saved_at = time.monotonic()
        assert _next_state(watcher) == "off"
        assert time.monotonic() - saved_at < 5
    finally:
        watcher.kill()
        watcher.wait(timeout=30)


WORKER_SEES_OFF = (
    "import json, time; from spaceduck.core import runtime\n"
    "from memories.write.services import create_thread\n"
    "from memories.write.ingest import message_ingest\n"
    "from memories.models import Extraction, Memory, Message\n"
    "from memories.tasks import extract_message\n"
    "def wait(pk):\n"
    "    deadline = time.time() + 60\n"
    "    while Extraction.objects.get(pk=pk).status != 'done' and time.time() < deadline:\n"
    "        time.sleep(0.1)\n"
    "    return Extraction.objects.get(pk=pk)\n"
    "t = create_thread('user:alice')\n"
    "first = wait(message_ingest(t.id, 'user', 'I live in Lisbon.').extraction.pk)\n"
    "runtime.settings_update(values={'memory_enabled': False}, actor='staff:ops')\n"
    "time.sleep(2.5)\n"  # the worker's refresh period is 1 s
    "m = Message.objects.create(thread=t, role='user', content='I work as a nurse.')\n"
    "r = Extraction.objects.create(message=m, namespace='user:alice', thread_id=t.id)\n"
    "extract_message(r.pk)\n"
    "second = wait(r.pk)\n"
    "print(json.dumps({'first': first.status, 'second': second.status,\n"
    "    'reason': second.candidates[0]['reason'],\n"
    "    'memories': sorted(Memory.objects.values_list('content', flat=True))}))"
)


@pytest.mark.slow
def test_a_running_worker_follows_the_memory_switch_without_a_restart(tmp_path: Path) -> None:
    env = service_env(tmp_path, SPACEDUCK_SETTINGS_REFRESH_SECONDS="1")
    assert manage(env, "migrate", "--no-input").returncode == 0
    consumer = start_manage(env, "run_huey", "--workers", "1", "--worker-type", "thread")
    try:
        result = manage(env, "shell", "-c", WORKER_SEES_OFF, timeout=120)
        assert result.returncode == 0, result.stderr
        answer = json.loads(result.stdout.strip().splitlines()[-1])
    finally:
        consumer.send_signal(signal.SIGINT)
        consumer.wait(timeout=30)
    assert answer["first"] == "done"
    assert answer["second"] == "done"
    assert answer["reason"] == MEMORY_OFF
    assert answer["memories"] == ["The user lives in Lisbon."]  # nothing from the second


def test_every_page_says_memory_is_off_and_the_recall_box_what_agents_get(
    staff_client: Client,
) -> None:
    from memories.write.services import memory_create

    memory_create(namespace="user:alice", kind="fact", content="Alice likes tea.", actor="t")
    viewer = staff_client.get("/", {"namespace": "user:alice", "q": "tea"}).content.decode()
    assert 'id="memory-off-banner"' not in viewer
    assert 'id="recall-off"' not in viewer
    _switch_memory_off(staff_client)
    for path in ("/", "/overview/", "/review/memories/", "/review/conflicts/", "/notes/", PAGE):
        page = staff_client.get(path)
        assert page.status_code == 200, path
        assert 'id="memory-off-banner"' in page.content.decode(), path
    hits = staff_client.get(
        "/", {"namespace": "user:alice", "q": "tea"}, headers={"HX-Request": "true"}
    ).content.decode()
    assert 'id="recall-off"' in hits
    assert "no memories" in hits
    assert "Alice likes tea." in hits  # what they would get when it is on


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_with_memory_off_a_person_still_edits_and_every_page_says_it_is_off(
    staff_client: Client, owner: Actor, htmx: bool
) -> None:
    """Memory off stops agents, not the people who review: an edit on the dashboard goes
    through (the same service), and the page it lands on carries the banner."""
    memory_id = _a_memory(owner)
    _switch_memory_off(staff_client)
    headers = {"HX-Request": "true"} if htmx else {}
    edited = staff_client.post(
        f"/memories/{memory_id}/edit/",
        {"content": "The user likes green tea.", "importance": "0.5", "confidence": "0.9",
         "scope": "global", "title": "", "summary": "", "tags": ""},
        headers=headers,
    )  # fmt: skip
    assert edited.status_code in (200, 302), edited.content[:300]
    assert Memory.objects.get(pk=memory_id).content == "The user likes green tea."
    page = staff_client.get(f"/memories/{memory_id}/").content.decode()
    assert 'id="memory-off-banner"' in page
    assert owner.patch(f"/api/memories/{memory_id}", {"title": "x"}).status_code == 409
