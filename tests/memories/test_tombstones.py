"""A tombstone, not a copy (issue 37, item 2).

Every delete path of a memory, a message, a thread and a fact: a distinctive string is
written through every text field of the row (and through the rows that quote it: history,
extraction records, the admin's log), deleted by that path, and then found in no table
(``tests.forgetting.tables_holding``). The tombstone says who, when, the kind and the id.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from io import StringIO
from unittest.mock import patch

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from memories.mcp.tools import forget
from memories.models import Deletion, Extraction, Fact, Memory, MemoryEvent, Message, Thread
from memories.store import keyword_index, selectors
from memories.upkeep.compaction import TokenLimiter
from memories.write import services
from memories.write.ingest import message_ingest
from memories.write.runner import run_extraction
from spaceduck.core.mcp_base import set_stdio_token
from tests.conftest import Actor, make_actor
from tests.forgetting import tables_holding

pytestmark = pytest.mark.django_db
NS = "user:alice"
HTMX = {"HX-Request": "true"}


def log_about(obj: object, text: str) -> None:
    """An admin change-log entry naming the row by its text, as the admin writes them."""
    LogEntry.objects.create(
        user_id=_admin_id(),
        content_type=ContentType.objects.get_for_model(type(obj)),
        object_id=str(obj.pk),  # type: ignore[attr-defined]
        object_repr=text,
        action_flag=CHANGE,
        change_message=f'[{{"changed": {{"fields": ["{text}"]}}}}]',
    )


def _admin_id() -> int:
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username="logger")
    return int(user.pk)


# --- The scan itself ---------------------------------------------------------------------


def test_the_scan_finds_text_in_any_table_and_column_whatever_its_case(owner: Actor) -> None:
    thread = services.create_thread(NS, title="Trip to QWERTZ-scan-title")
    services.save_message(thread.id, "user", {"note": "qwertz-scan-json"}, provenance={"a": "b"})
    services.set_fact(NS, "k", ["QWERTZ-SCAN-FACT"])
    found = tables_holding("qwertz-scan")
    assert found == {"memories_thread": 1, "memories_message": 1, "memories_fact": 1}
    assert tables_holding("qwertz_scan") == {}  # "_" and "%" are no wildcards
    assert tables_holding("nothing-like-this-anywhere") == {}


# --- Memories: every delete path ---------------------------------------------------------


def write_memory(owner: Actor, mark: str, **extra: object) -> int:
    """A memory holding ``mark`` in every text field, edited once (its history holds the
    text it replaced) and named in the admin's log."""
    response = owner.post(
        "/api/memories",
        {
            "namespace": NS,
            "kind": "fact",
            "content": f"The user keeps a {mark} telescope.",
            "title": f"{mark} title",
            "summary": f"About the {mark} telescope",
            "tags": [f"{mark}-tag"],
            "context": f"I said {mark} at night",
            **extra,
        },
    )
    assert response.status_code == 201, response.json()
    memory_id = int(response.json()["memory_id"])
    patched = owner.patch(
        f"/api/memories/{memory_id}", {"content": f"The user keeps a {mark} telescope at home."}
    )
    assert patched.status_code == 200, patched.json()
    log_about(Memory.objects.get(pk=memory_id), f"{mark} title")
    # searched once: PostgreSQL's keyword index holds its words from then on
    assert memory_id in keyword_index.matching_ids(NS, "zyxwvut")
    assert set(tables_holding(mark)) >= {"memories_memory", "memories_memoryevent"}
    return memory_id


def by_api(owner: Actor, memory_id: int, admin_client: Client, staff_client: Client) -> str:
    assert owner.delete(f"/api/memories/{memory_id}").status_code == 204
    return "token:owner"


def by_dashboard(owner: Actor, memory_id: int, admin_client: Client, staff: Client) -> str:
    response = staff.post(f"/memories/{memory_id}/delete/")
    assert response.status_code == 302
    return "staff:staff"


def by_dashboard_htmx(owner: Actor, memory_id: int, admin_client: Client, staff: Client) -> str:
    response = staff.post(f"/memories/{memory_id}/delete/", headers=HTMX)
    assert response.status_code == 200
    return "staff:staff"


def by_admin(owner: Actor, memory_id: int, admin_client: Client, staff: Client) -> str:
    response = admin_client.post(f"/admin/memories/memory/{memory_id}/delete/", {"post": "yes"})
    assert response.status_code == 302
    return "staff:admin"


def by_admin_action(owner: Actor, memory_id: int, admin_client: Client, staff: Client) -> str:
    response = admin_client.post(
        "/admin/memories/memory/",
        {"action": "delete_selected", "_selected_action": [memory_id], "post": "yes"},
    )
    assert response.status_code == 302
    return "staff:admin"


def by_mcp_forget(owner: Actor, memory_id: int, admin_client: Client, staff: Client) -> str:
    # In process, as a stdio session; the tool's connection handling (as around a request)
    # would close the test's transaction.
    with patch("spaceduck.core.mcp_base.close_old_connections"):
        set_stdio_token(owner.secret)
        try:
            assert forget(memory_id=memory_id) == {"deleted": memory_id}
        finally:
            set_stdio_token(None)
    return "token:owner"


def by_api_purge_skill(owner: Actor, memory_id: int, admin_client: Client, staff: Client) -> str:
    assert owner.delete("/api/skills/astronomy/memories").json() == {"deleted": 1}
    return "token:owner"


def by_cli_purge_skill(owner: Actor, memory_id: int, admin_client: Client, staff: Client) -> str:
    call_command("memory", "purge-skill", "astronomy", stdout=StringIO())
    return "cli"


PATHS: dict[str, Callable[[Actor, int, Client, Client], str]] = {
    "api": by_api,
    "dashboard": by_dashboard,
    "dashboard-htmx": by_dashboard_htmx,
    "admin": by_admin,
    "admin-action": by_admin_action,
    "mcp-forget": by_mcp_forget,
    "api-purge-skill": by_api_purge_skill,
    "cli-purge-skill": by_cli_purge_skill,
}


@pytest.mark.parametrize("path", list(PATHS))
def test_a_deleted_memory_leaves_a_tombstone_and_no_copy(
    path: str, owner: Actor, admin_client: Client, staff_client: Client
) -> None:
    mark = f"Zyxwvut-{path}"
    memory_id = write_memory(owner, mark, skill_id="astronomy")
    before = timezone.now()
    who = PATHS[path](owner, memory_id, admin_client, staff_client)
    assert not Memory.objects.filter(pk=memory_id).exists()
    assert tables_holding(mark) == {}
    assert tables_holding("zyxwvut") == {}  # nor a word of it (PostgreSQL: its lexemes)
    [tombstone] = MemoryEvent.objects.filter(memory_id=memory_id)  # the history is the tombstone
    assert tombstone.event == ("purged" if "purge" in path else "deleted")
    assert (tombstone.actor, tombstone.namespace, tombstone.data) == (who, NS, {"kind": "fact"})
    assert tombstone.created_at >= before
    assert not LogEntry.objects.filter(object_id=str(memory_id)).exists()


def say(thread_id: str, text: str) -> Extraction:
    ingested = message_ingest(thread_id, "user", text)
    assert ingested.extraction is not None
    record = run_extraction(ingested.extraction.pk)
    assert record is not None
    return record


def test_deleting_a_learnt_memory_scrubs_the_extraction_records_that_name_it(
    owner: Actor,
) -> None:
    first = say(services.create_thread(NS).id, "I live in Zyxwvutville.")
    [verdict] = first.candidates
    assert verdict["decision"] == "stored", verdict
    memory_id = verdict["memory_id"]
    # the same said again elsewhere: a duplicate whose record names the memory
    again = say(services.create_thread(NS).id, "I live in Zyxwvutville.")
    assert again.candidates[0]["matched_memory_id"] == memory_id
    assert owner.delete(f"/api/memories/{memory_id}").status_code == 204
    # the messages hold what the user said (deleted on their own); nothing else does
    assert tables_holding("zyxwvutville") == {"memories_message": 2}
    for record in (first, again):
        record.refresh_from_db()
        [scrubbed] = record.candidates
        assert scrubbed["forgotten"] is True
        assert scrubbed["candidate"]["kind"] == "fact"
        assert "content" not in scrubbed["candidate"]
    assert scrubbed["decision"] == "duplicate"


def test_a_reason_that_quotes_the_memory_is_not_kept(owner: Actor) -> None:
    memory_id = write_memory(owner, "Zyxwvut-reason")
    memory = Memory.objects.get(pk=memory_id)
    services.memory_delete(memory=memory, actor="t", reason=f"wrong: {memory.content}")
    assert MemoryEvent.objects.get(memory_id=memory_id).reason == ""
    assert tables_holding("Zyxwvut-reason") == {}
    other = write_memory(owner, "Zyxwvut-plain")
    services.memory_delete(memory=Memory.objects.get(pk=other), actor="t", reason="duplicate")
    assert MemoryEvent.objects.get(memory_id=other).reason == "duplicate"


# --- A deleted memory's page and its history through the API -----------------------------


def test_the_page_of_a_deleted_memory_says_who_deleted_it_and_nothing_it_said(
    owner: Actor, staff_client: Client
) -> None:
    memory_id = write_memory(owner, "Zyxwvut-page")
    assert owner.delete(f"/api/memories/{memory_id}").status_code == 204
    for headers in ({}, HTMX):
        response = staff_client.get(f"/memories/{memory_id}/", headers=headers)
        assert response.status_code == 404
        html = response.content.decode()
        assert "was deleted on" in html
        assert "<code>token:owner</code>" in html
        assert "It said" not in html
        assert "zyxwvut" not in html.lower()
    never = staff_client.get("/memories/999999/").content.decode()
    assert "No memory has this number." in never


def test_the_api_history_of_a_deleted_memory_is_its_tombstone(owner: Actor) -> None:
    memory_id = write_memory(owner, "Zyxwvut-history")
    assert owner.delete(f"/api/memories/{memory_id}").status_code == 204
    response = owner.get(f"/api/memories/{memory_id}/history")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["deleted"] is True
    [event] = body["events"]
    assert event["memory_id"] == memory_id
    assert (event["event"], event["actor"]) == ("deleted", "token:owner")
    assert event["data"] == {"kind": "fact"}
    assert event["created_at"]
    assert "zyxwvut" not in response.content.decode().lower()
    # the other routes of a deleted id stay 404
    assert owner.get(f"/api/memories/{memory_id}").status_code == 404
    assert owner.delete(f"/api/memories/{memory_id}").status_code == 404
    assert owner.get("/api/memories/999999/history").status_code == 404
    # a live memory's history is as before
    tea = {"namespace": NS, "kind": "fact", "content": "The user likes green tea."}
    live = owner.post("/api/memories", tea)
    history = owner.get(f"/api/memories/{live.json()['memory_id']}/history").json()
    assert history["deleted"] is False
    assert [e["event"] for e in history["events"]] == ["created"]


def test_a_tombstone_is_no_more_visible_than_its_memory_was(owner: Actor, stranger: Actor) -> None:
    memory_id = write_memory(owner, "Zyxwvut-grants")
    assert stranger.get(f"/api/memories/{memory_id}/history").status_code == 404
    assert owner.delete(f"/api/memories/{memory_id}").status_code == 204
    # another namespace's token: the same 404 as for an id that never existed
    response = stranger.get(f"/api/memories/{memory_id}/history")
    assert response.status_code == 404
    assert "zyxwvut" not in response.content.decode().lower()
    assert "token:owner" not in response.content.decode()
    # a token of the namespace without read: 403, as for a live memory
    writer = make_actor([NS], ["write"], name="writer")
    assert writer.get(f"/api/memories/{memory_id}/history").status_code == 403
    # a grant on every user namespace reads it
    every_user = make_actor(["user:*"], ["read"], name="every-user")
    assert every_user.get(f"/api/memories/{memory_id}/history").status_code == 200
    # no token at all: 401
    assert Client().get(f"/api/memories/{memory_id}/history").status_code == 401


# --- Messages and threads ------------------------------------------------------------------


def chat(mark: str) -> tuple[Thread, Message, Message]:
    """A thread whose first message holds ``mark`` (content and provenance), a memory learnt
    from it and one from the next message (whose context quotes the first)."""
    thread = services.create_thread(NS, title="Weekend plans")
    first = message_ingest(thread.id, "user", f"I live in {mark}ville.", provenance={"tool": mark})
    assert first.extraction is not None
    run_extraction(first.extraction.pk)
    second = message_ingest(thread.id, "user", "I work as a nurse.")
    assert second.extraction is not None
    run_extraction(second.extraction.pk)
    learnt = Memory.objects.get(source_message=first.message)
    assert mark.lower() in learnt.context.lower()
    after = Memory.objects.get(source_message=second.message)
    assert mark.lower() in after.context.lower()  # the previous message, quoted
    log_about(first.message, f"user: I live in {mark}ville.")
    return thread, first.message, second.message


def remaining(mark: str) -> dict[str, int]:
    """Where ``mark`` is still stored once the message is gone: only in the content of the
    memory learnt from it (a memory is deleted on its own)."""
    learnt = Memory.objects.filter(content__icontains=mark)
    assert learnt.count() == 1
    assert not Memory.objects.filter(context__icontains=mark).exists()
    return tables_holding(mark)


def test_deleting_a_message_through_the_api_leaves_a_tombstone_and_no_copy(owner: Actor) -> None:
    mark = "Zyxwvut-msg-api"
    thread, first, second = chat(mark)
    record = Extraction.objects.get(message=first)
    learnt = Memory.objects.get(source_message=first)
    nurse = Memory.objects.get(source_message=second)
    assert keyword_index.matching_ids(NS, "zyxwvut") == sorted([learnt.pk, nurse.pk])
    response = owner.post(f"/api/threads/{thread.id}/messages/delete", {"ids": [first.pk]})
    assert response.json() == {"deleted": 1}
    assert remaining(mark) == {"memories_memory": 1}
    if connection.vendor == "postgresql":  # re-indexed at once, not at the next search
        assert tables_holding("zyxwvut")["memories_fts"] == 1
    assert keyword_index.matching_ids(NS, "zyxwvut") == [learnt.pk]
    [tombstone] = Deletion.objects.all()
    assert (tombstone.kind, tombstone.object_id, tombstone.namespace) == ("message", first.pk, NS)
    assert tombstone.deleted_by == "token:owner"
    record.refresh_from_db()
    assert record.message_id is None
    assert record.status == "done"
    assert all(v["forgotten"] for v in record.candidates)
    assert [v["decision"] for v in record.candidates] == ["stored"]
    # the next message's memory lost the context that quoted it; its own record is intact
    assert Memory.objects.get(source_message=second).context == ""
    assert not LogEntry.objects.filter(object_id=first.pk).exists()


def test_deleting_messages_in_the_admin_leaves_tombstones(admin_client: Client) -> None:
    mark = "Zyxwvut-msg-admin"
    _, first, _ = chat(mark)
    response = admin_client.post(f"/admin/memories/message/{first.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert remaining(mark) == {"memories_memory": 1}
    assert Deletion.objects.get(kind="message").deleted_by == "staff:admin"


def test_deleting_a_thread_leaves_one_tombstone_and_no_copy(owner: Actor) -> None:
    mark = "Zyxwvut-thread-api"
    thread, _, _ = chat(mark)
    Thread.objects.filter(pk=thread.pk).update(title=f"{mark} plans")
    log_about(thread, f"{mark} plans")
    assert owner.delete(f"/api/threads/{thread.id}").status_code == 204
    assert remaining(mark) == {"memories_memory": 1}
    [tombstone] = Deletion.objects.all()
    assert (tombstone.kind, tombstone.object_id, tombstone.deleted_by) == (
        "thread",
        thread.pk,
        "token:owner",
    )
    assert tombstone.reason == "with its 2 messages"
    assert not Memory.objects.exclude(context="").exists()


def test_deleting_threads_in_the_admin_leaves_tombstones(admin_client: Client) -> None:
    mark = "Zyxwvut-thread-admin"
    thread, _, _ = chat(mark)
    Thread.objects.filter(pk=thread.pk).update(title=f"{mark} plans")
    response = admin_client.post(
        "/admin/memories/thread/",
        {"action": "delete_selected", "_selected_action": [thread.pk], "post": "yes"},
    )
    assert response.status_code == 302
    assert remaining(mark) == {"memories_memory": 1}
    assert Deletion.objects.get(kind="thread").deleted_by == "staff:admin"


def test_compaction_leaves_tombstones_of_the_messages_it_replaced() -> None:
    thread = services.create_thread(NS)
    ids = [services.save_message(thread.id, "user", "word " * 200).id for _ in range(4)]
    deleted = TokenLimiter(max_tokens=300).run([thread.id])
    assert deleted[thread.id] > 0
    tombstones = Deletion.objects.filter(kind="message")
    assert set(tombstones.values_list("object_id", flat=True)) <= set(ids)
    assert tombstones.count() == deleted[thread.id]
    assert set(tombstones.values_list("deleted_by", flat=True)) == {"compaction"}


def test_deleting_unknown_messages_leaves_no_tombstone(owner: Actor) -> None:
    thread = services.create_thread(NS)
    response = owner.post(f"/api/threads/{thread.id}/messages/delete", {"ids": ["nope"]})
    assert response.json() == {"deleted": 0}
    assert not Deletion.objects.exists()


# --- Facts -----------------------------------------------------------------------------------


def fact(mark: str, **kwargs: object) -> Fact:
    made = services.set_fact(NS, "travel/plan", {"city": mark}, provenance={"by": mark}, **kwargs)  # type: ignore[arg-type]
    log_about(made, f"{NS} travel/plan {mark}")
    return Fact.objects.get(pk=made.pk)


def assert_fact_tombstone(made: Fact, mark: str, who: str) -> None:
    assert tables_holding(mark) == {}
    [tombstone] = Deletion.objects.all()
    assert (tombstone.kind, tombstone.object_id, tombstone.namespace) == ("fact", str(made.pk), NS)
    assert tombstone.deleted_by == who
    assert tables_holding("travel/plan") == {}  # the key may name what it held: not kept


def test_deleting_a_fact_through_the_api_leaves_a_tombstone(owner: Actor) -> None:
    made = fact("Zyxwvut-fact-api")
    assert owner.delete(f"/api/facts/{NS}/travel/plan").status_code == 204
    assert_fact_tombstone(made, "Zyxwvut-fact-api", "token:owner")
    assert owner.delete(f"/api/facts/{NS}/travel/plan").status_code == 204  # idempotent
    assert Deletion.objects.count() == 1  # nothing deleted, no tombstone


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["plain", "htmx"])
def test_deleting_a_fact_in_the_dashboard_leaves_a_tombstone(
    staff_client: Client, headers: dict[str, str]
) -> None:
    made = fact("Zyxwvut-fact-page")
    response = staff_client.post(
        "/facts/delete/", {"namespace": NS, "key": "travel/plan"}, headers=headers
    )
    assert response.status_code in (200, 302)
    assert_fact_tombstone(made, "Zyxwvut-fact-page", "staff:staff")


def test_deleting_a_fact_in_the_admin_leaves_a_tombstone(admin_client: Client) -> None:
    made = fact("Zyxwvut-fact-admin")
    response = admin_client.post(f"/admin/memories/fact/{made.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert_fact_tombstone(made, "Zyxwvut-fact-admin", "staff:admin")


def test_the_cli_deletes_a_fact_with_a_tombstone() -> None:
    made = fact("Zyxwvut-fact-cli")
    call_command("memory", "rm", NS, "travel/plan", stdout=StringIO())
    assert_fact_tombstone(made, "Zyxwvut-fact-cli", "cli")


def test_an_expired_fact_leaves_a_tombstone_by_ttl() -> None:
    made = fact("Zyxwvut-fact-ttl", ttl_ms=1000)
    Fact.objects.filter(pk=made.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert services.delete_expired_facts() == 1
    assert_fact_tombstone(made, "Zyxwvut-fact-ttl", "ttl")
    assert Deletion.objects.get().reason == "its time to live ran out"
    assert services.delete_expired_facts() == 0


def test_an_erase_takes_the_namespaces_tombstones_with_it(owner: Actor) -> None:
    from spaceduck.ops.erasure import erase_namespace

    fact("Zyxwvut-erase")
    owner.delete(f"/api/facts/{NS}/travel/plan")
    services.set_fact(NS, "other", 1)
    services.set_fact("user:bob", "other", 1)
    services.delete_fact("user:bob", "other")
    erase_namespace(NS, by="test")
    assert list(Deletion.objects.values_list("namespace", flat=True)) == ["user:bob"]
    assert selectors.memory_tombstone(memory_id=1) is None


# --- Tombstones written before: the migration's data step ----------------------------------


def test_the_migration_strips_the_content_of_tombstones_written_before() -> None:
    from importlib import import_module

    from django.apps import apps

    step = import_module("memories.migrations.0028_tombstones").strip_tombstones
    old = {"content": "Zyxwvut-old said", "kind": "episode", "title": "Zyxwvut-old"}
    MemoryEvent.objects.create(memory_id=7, namespace=NS, event="created")
    MemoryEvent.objects.create(
        memory_id=7, namespace=NS, event="edited", data={"before": {"content": "Zyxwvut-old"}}
    )
    MemoryEvent.objects.create(memory_id=7, namespace=NS, event="deleted", actor="a", data=old)
    MemoryEvent.objects.create(memory_id=8, namespace=NS, event="purged", data={"content": "x"})
    live = Memory.objects.create(namespace=NS, kind="fact", content="Tea.", content_hash="h")
    MemoryEvent.objects.create(memory_id=live.pk, namespace=NS, event="created")
    step(apps, None)
    assert tables_holding("Zyxwvut-old") == {}
    [seven] = MemoryEvent.objects.filter(memory_id=7)
    assert (seven.event, seven.actor, seven.data) == ("deleted", "a", {"kind": "episode"})
    assert MemoryEvent.objects.get(memory_id=8).data == {}
    assert MemoryEvent.objects.filter(memory_id=live.pk).count() == 1  # live history stays


def test_the_admin_lists_tombstones_and_never_changes_them(admin_client: Client) -> None:
    made = fact("Zyxwvut-admin-list")
    services.delete_fact(NS, "travel/plan", actor="t")
    tombstone = Deletion.objects.get()
    listing = admin_client.get("/admin/memories/deletion/")
    assert listing.status_code == 200
    assert f'<td class="field-object_id">{made.pk}</td>' in listing.content.decode()
    for url in (
        f"/admin/memories/deletion/{tombstone.pk}/delete/",
        "/admin/memories/deletion/add/",
    ):
        assert admin_client.get(url).status_code == 403


def test_purging_more_memories_than_a_round_forgets_them_all(owner: Actor) -> None:
    from memories.extraction.types import Candidate
    from memories.write import forgetting
    from memories.write.ingest import memory_write

    for n in range(forgetting.MEMORY_CHUNK + 5):
        candidate = Candidate(kind="fact", content=f"The user owns Zyxwvut-{n} kites.", stage="api")
        assert memory_write(candidate, namespace=NS, actor="t", skill_id="kites").memory_id
    assert owner.delete("/api/skills/kites/memories").json() == {"deleted": 105}
    assert tables_holding("zyxwvut") == {}
    assert MemoryEvent.objects.filter(event="purged").count() == 105
    assert MemoryEvent.objects.count() == 105
