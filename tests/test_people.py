"""A person's data (issue 29 item 8): find it across namespaces, download it, erase it.

The same erase through the dashboard, ``manage.py erase`` and ``DELETE
/api/namespaces/{ns}``; afterwards nothing of the namespace is findable: no row, no
keyword entry, no vector, no admin log entry; another namespace is untouched.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client

from memories.models import Conflict, Extraction, Fact, Memory, MemoryEvent, Message, Thread
from memories.recall.hybrid import RecallQuery, recall
from memories.store import keyword_index, vector_index
from memories.write.ingest import message_ingest
from memories.write.services import create_thread, memory_create, set_fact
from notes.models import Note
from notes.selectors import search_notes
from notes.services import enable_note_search, save_note
from spaceduck.core.errors import NotFound
from spaceduck.models import NamespaceErasure
from spaceduck.ops.erasure import erase_namespace, stored_counts
from spaceduck.ops.people import PAGE
from tests.conftest import make_actor

pytestmark = pytest.mark.django_db

ALICE = "user:alice"
BOB = "user:bob"
HTMX = {"HX-Request": "true"}


def seed(namespace: str, name: str) -> dict[str, Any]:
    """Every kind of row a namespace can hold, each quoting ``name``'s e-mail address."""
    mail = f"{name}@example.com"
    thread = create_thread(namespace, title=f"{name}'s plans")
    ingested = message_ingest(thread.id, "user", f"Write to me at {mail} about the zeppelin.")
    old = memory_create(
        namespace=namespace, kind="fact", content=f"{name} likes zeppelin music.", actor="t"
    )
    new = memory_create(
        namespace=namespace,
        kind="fact",
        content=f"{name} can be reached at {mail}.",
        actor="t",
        status="candidate",
    )
    Conflict.objects.create(namespace=namespace, old=old, new=new, reason="test")
    set_fact(namespace, "contact/email", mail)
    enable_note_search("user")
    save_note(namespace, f"{name} prefers e-mail ({mail}) for zeppelin news.", id=f"note-{name}")
    LogEntry.objects.create(
        content_type=ContentType.objects.get_for_model(Memory),
        object_id=str(old.pk),
        object_repr=str(old)[:200],
        action_flag=CHANGE,
        change_message="edited",
        user_id=_admin_user_id(),
    )
    return {"thread": thread.id, "memories": [old.pk, new.pk], "extraction": ingested.extraction}


def _admin_user_id() -> int:
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username="log-writer")
    return int(user.pk)


def findable(namespace: str, name: str) -> list[str]:
    """Every place a trace of the namespace could be found; empty when none is."""
    traces = []
    for model in (Memory, MemoryEvent, Conflict, Extraction, Fact, Thread, Note):
        if model._default_manager.filter(namespace=namespace).exists():  # type: ignore[attr-defined]
            traces.append(model.__name__)
    if Message.objects.filter(thread__namespace=namespace).exists():
        traces.append("Message")
    if keyword_index.matching_ids(namespace, "zeppelin"):
        traces.append("keyword index")
    if recall(RecallQuery(namespace=namespace, text=f"{name} zeppelin music", top_k=5)):
        traces.append("recall")
    if search_notes("user", "zeppelin", namespace=namespace):
        traces.append("note search")
    if LogEntry.objects.filter(object_repr__icontains=name).exists():
        traces.append("admin log")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memories_namespace_count WHERE namespace = %s", [namespace]
        )
        if cursor.fetchone()[0]:
            traces.append("namespace counts")
    return traces


@pytest.fixture
def alice_and_bob() -> dict[str, Any]:
    return {"alice": seed(ALICE, "alice"), "bob": seed(BOB, "bob")}


# --- Search -----------------------------------------------------------------------------


def test_search_finds_every_kind_across_namespaces(staff_client: Client, alice_and_bob) -> None:
    page = staff_client.get("/people/", {"q": "alice@example.com"})
    assert page.status_code == 200
    html = page.content.decode()
    assert "<nav" in html  # the whole page
    for kind in ("memories", "facts", "messages", "notes"):
        assert f'id="people-{kind}"' in html
    assert "alice can be reached at alice@example.com." in html
    assert "Write to me at alice@example.com" in html
    assert "note-alice" in html
    assert "contact/email" in html
    assert "bob@example.com" not in html
    by_name = staff_client.get("/people/", {"q": "user:ali"})
    assert "?namespace=user%3Aalice" in by_name.content.decode()


def test_search_with_htmx_answers_only_the_results(staff_client: Client, alice_and_bob) -> None:
    page = staff_client.get("/people/", {"q": "zeppelin"}, headers=HTMX)
    html = page.content.decode()
    assert page.status_code == 200
    assert html.lstrip().startswith('<section id="people-results">')
    assert '<nav class="site-nav"' not in html
    assert "<html" not in html
    assert "alice likes zeppelin music." in html
    assert "bob likes zeppelin music." in html


def test_search_pages_each_kind(staff_client: Client) -> None:
    for i in range(PAGE + 5):
        memory_create(namespace=ALICE, kind="fact", content=f"Quokka fact number {i}.", actor="t")
    first = staff_client.get("/people/", {"q": "quokka"}).content.decode()
    assert first.count('class="people-hit"') == PAGE
    assert "kind=memories&amp;page=2" in first
    second = staff_client.get("/people/", {"q": "quokka", "kind": "memories", "page": "2"})
    assert second.content.decode().count('class="people-hit"') == 5
    assert "Quokka fact number 0." in second.content.decode()  # oldest last


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"q": "x" * 201}, "at most 200"),
        ({"q": "a", "kind": "secrets"}, "kind must be one of"),
        ({"q": "a", "page": "0"}, "page must be"),
        ({"namespace": "alice"}, "invalid namespace"),
    ],
)
def test_bad_searches_say_why_and_keep_the_page(
    staff_client: Client, query: dict[str, str], message: str
) -> None:
    plain = staff_client.get("/people/", query)
    assert plain.status_code == 422
    assert message in plain.content.decode()
    assert "<nav" in plain.content.decode()
    htmx = staff_client.get("/people/", query, headers=HTMX)
    assert htmx.status_code == 422
    assert htmx["HX-Retarget"] == "#flash"
    assert message in htmx.content.decode()


def test_people_pages_are_staff_only(client: Client, alice_and_bob) -> None:
    for response in (
        client.get("/people/", {"q": "alice"}),
        client.get("/people/export/", {"namespace": ALICE}),
        client.post("/people/erase/", {"namespace": ALICE, "confirm": ALICE}),
    ):
        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]
    assert Memory.objects.filter(namespace=ALICE).exists()


# --- One person ---------------------------------------------------------------------------


def test_person_page_counts_and_lists_what_the_namespace_holds(
    staff_client: Client, alice_and_bob
) -> None:
    page = staff_client.get("/people/", {"namespace": ALICE})
    html = page.content.decode()
    assert page.status_code == 200
    assert "2 memories" in html
    assert "1 fact," in html
    assert "1 thread," in html
    assert "plans (1 message)" in html  # its thread, with its size
    assert 'id="person-erase"' in html
    assert 'id="person-export"' in html
    assert "bob" not in html.split('id="person-rows"')[1]
    rows = staff_client.get("/people/", {"namespace": ALICE, "kind": "memories"}, headers=HTMX)
    assert rows.content.decode().lstrip().startswith('<section id="person-rows">')
    assert rows.content.decode().count('class="people-hit"') == 2


def test_export_downloads_the_namespace_in_the_export_format(
    staff_client: Client, alice_and_bob
) -> None:
    response = staff_client.get("/people/export/", {"namespace": ALICE})
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/x-ndjson"
    assert 'attachment; filename="spaceduck-user-alice-' in response["Content-Disposition"]
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    header, end = lines[0], lines[-1]
    assert header["format"] == "spaceduck-export"
    assert header["namespace"] == ALICE
    assert end["type"] == "end"
    records = lines[1:-1]
    assert {r["type"] for r in records} >= {"memory", "thread", "message", "fact", "note"}
    assert "bob" not in json.dumps(records)
    assert end["counts"]["memory"] == 2
    assert end["counts"]["message"] == 1


def test_export_of_a_malformed_namespace_is_a_422(staff_client: Client) -> None:
    response = staff_client.get("/people/export/", {"namespace": "alice"})
    assert response.status_code == 422
    assert "invalid namespace" in response.content.decode()


# --- Erase ---------------------------------------------------------------------------------


def test_erase_needs_the_name_typed_exactly(staff_client: Client, alice_and_bob) -> None:
    wrong = staff_client.post("/people/erase/", {"namespace": ALICE, "confirm": "user:alic"})
    assert wrong.status_code == 422
    assert "type the namespace" in wrong.content.decode()
    htmx = staff_client.post("/people/erase/", {"namespace": ALICE, "confirm": ""}, headers=HTMX)
    assert htmx.status_code == 422
    assert htmx["HX-Retarget"] == "#flash"
    assert findable(ALICE, "alice")  # nothing erased
    assert not NamespaceErasure.objects.exists()


def test_erase_from_the_page_leaves_nothing_findable_and_a_tombstone(
    staff_client: Client, alice_and_bob
) -> None:
    assert set(findable(ALICE, "alice")) >= {"Memory", "keyword index", "recall", "admin log"}
    response = staff_client.post("/people/erase/", {"namespace": ALICE, "confirm": ALICE})
    assert response.status_code == 302
    assert findable(ALICE, "alice") == []
    erasure = NamespaceErasure.objects.get()
    assert erasure.namespace == ALICE
    assert erasure.erased_by == "staff:staff"
    assert erasure.counts["memories"] == 2
    assert erasure.counts["messages"] == 1
    assert erasure.counts["notes"] == 1
    assert erasure.counts["conflicts"] == 1
    assert "alice@" not in json.dumps(erasure.counts)
    # Bob's data is all still there.
    assert set(findable(BOB, "bob")) >= {"Memory", "Message", "keyword index", "recall"}
    page = staff_client.get(response["Location"]).content.decode()
    assert f"Erased {ALICE}: 2 memories" in page
    assert (
        staff_client.get("/people/", {"q": "alice@example.com"})
        .content.decode()
        .count('class="people-hit"')
        == 0
    )


def test_erase_with_htmx_redirects_and_a_second_erase_is_a_404(
    staff_client: Client, alice_and_bob
) -> None:
    first = staff_client.post(
        "/people/erase/", {"namespace": ALICE, "confirm": ALICE}, headers=HTMX
    )
    assert first.status_code == 204
    assert first["HX-Redirect"].startswith("/people/")
    again = staff_client.post(
        "/people/erase/", {"namespace": ALICE, "confirm": ALICE}, headers=HTMX
    )
    assert again.status_code == 404
    assert "holds nothing to erase" in again.content.decode()


def test_a_warm_vector_cache_forgets_the_erased_namespace(alice_and_bob) -> None:
    query = RecallQuery(namespace=ALICE, text="alice zeppelin music", top_k=5)
    assert recall(query)  # the namespace's vectors are now cached in this process
    erase_namespace(ALICE, by="test")
    assert recall(query) == []
    assert vector_index.search(ALICE, _query_vector("alice zeppelin"), 5) == []


def _query_vector(text: str) -> Any:
    from spaceduck.core.providers import get_embedder

    return get_embedder().embed([text])[0]


def test_manage_py_erase(alice_and_bob, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("builtins.input", lambda prompt: "user:bob")
    with pytest.raises(CommandError, match="does not match"):
        call_command("erase", ALICE, stdout=io.StringIO())
    assert Memory.objects.filter(namespace=ALICE).exists()
    out = io.StringIO()
    call_command("erase", ALICE, "--yes", stdout=out)
    assert "Erased user:alice: 2 memories" in out.getvalue()
    assert findable(ALICE, "alice") == []
    assert NamespaceErasure.objects.get().erased_by == "cli"
    with pytest.raises(CommandError, match="holds nothing"):
        call_command("erase", ALICE, "--yes", stdout=io.StringIO())
    with pytest.raises(CommandError, match="invalid namespace"):
        call_command("erase", "alice", "--yes", stdout=io.StringIO())


def test_api_erase_needs_an_admin_token(alice_and_bob) -> None:
    writer = make_actor([ALICE], ["read", "write", "approve"], name="writer")
    refused = writer.delete(f"/api/namespaces/{ALICE}")
    assert refused.status_code == 403
    assert "'admin'" in refused.json()["detail"]
    bobs_admin = make_actor([BOB], ["admin"], name="bobs-admin")
    assert bobs_admin.delete(f"/api/namespaces/{ALICE}").status_code == 404
    assert stored_counts(ALICE)["memories"] == 2

    admin = make_actor(["*"], ["admin"], name="root")
    erased = admin.delete(f"/api/namespaces/{ALICE}")
    assert erased.status_code == 200
    body = erased.json()
    assert body["namespace"] == ALICE
    assert body["erased_by"] == "token:root"
    assert body["counts"]["memories"] == 2
    assert findable(ALICE, "alice") == []
    again = admin.delete(f"/api/namespaces/{ALICE}")
    assert again.status_code == 404
    assert "holds nothing" in again.json()["detail"]
    assert admin.delete("/api/namespaces/alice").status_code == 422
    # The agent's own reads find nothing either.
    reader = make_actor([ALICE], ["read"], name="reader")
    search = reader.get("/api/memories/search", {"namespace": ALICE, "q": "alice zeppelin"})
    assert search.status_code == 200
    assert search.json()["memories"] == []
    assert reader.get(f"/api/facts/{ALICE}/contact%2Femail").status_code == 404


def test_erase_service_refuses_an_empty_namespace() -> None:
    with pytest.raises(NotFound):
        erase_namespace("user:nobody", by="test")


def test_an_extraction_still_running_stores_nothing_once_its_namespace_is_erased() -> None:
    """The erase and every memory write of the namespace take one lock; a candidate whose
    message went with the erase is refused instead of bringing the namespace back."""
    from memories.extraction.types import candidate_from_api
    from memories.write.dedup import WriteContext, commit_candidate

    thread = create_thread(ALICE)
    message = message_ingest(thread.id, "user", "I keep bees.").message
    candidate = candidate_from_api({"kind": "fact", "content": "Alice keeps bees."})
    ctx = WriteContext(
        namespace=ALICE, actor="extraction:1", message_id=message.pk, thread_id=thread.id
    )
    erase_namespace(ALICE, by="test")
    verdict = commit_candidate(candidate, ctx)
    assert (verdict.decision, verdict.reason) == ("rejected", "source_erased")
    assert not Memory.objects.filter(namespace=ALICE).exists()


def test_search_finds_non_ascii_text_in_any_casing(staff_client: Client) -> None:
    """SQLite folds ASCII case only and stores JSON with escapes: "Zoë" and "café" must
    still be found in memories, string messages and JSON messages, facts and notes."""
    thread = create_thread("user:zoe")
    message_ingest(thread.id, "user", "We met at the café Zoë likes.")
    message_ingest(thread.id, "user", {"note": "café with ZOË"})
    memory_create(namespace="user:zoe", kind="fact", content="ZOË drinks café au lait.", actor="t")
    set_fact("user:zoe", "favourite/place", "Café Zoë")
    for query in ("café", "zoë", "Zoë"):
        html = staff_client.get("/people/", {"q": query}).content.decode()
        assert "We met at the café Zoë likes." in html, query
        assert "café with ZOË" in html, query
        assert "ZOË drinks café au lait." in html, query
        assert "favourite/place" in html, query
