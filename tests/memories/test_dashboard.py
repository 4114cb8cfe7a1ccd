"""The dashboard: staff only, full page or htmx fragment, stored text escaped."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from memories.write.services import memory_create
from tests.conftest import Actor

pytestmark = pytest.mark.django_db


def test_anonymous_visitors_are_sent_to_the_login(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_non_staff_users_are_sent_to_the_login(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    user = django_user_model.objects.create_user("agent-owner", password="pw-12345678")
    client.force_login(user)
    assert client.get("/").status_code == 302


def test_staff_see_memories_with_stored_text_escaped(staff_client: Client) -> None:
    memory_create(
        namespace="user:alice",
        kind="fact",
        content="<script>alert(1)</script> likes tea",
        actor="t",
    )
    page = staff_client.get("/").content.decode()
    assert "<html" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; likes tea" in page
    assert "<script>alert(1)</script>" not in page


def test_htmx_requests_get_only_the_list_fragment(staff_client: Client) -> None:
    memory_create(namespace="user:alice", kind="fact", content="Alice likes tea.", actor="t")
    memory_create(namespace="user:bob", kind="fact", content="Bob likes coffee.", actor="t")
    response = staff_client.get("/", {"namespace": "user:bob"}, headers={"HX-Request": "true"})
    fragment = response.content.decode()
    assert "<html" not in fragment
    assert fragment.strip().startswith('<section id="memory-list">')
    assert "Bob likes coffee." in fragment
    assert "Alice likes tea." not in fragment


def test_the_viewer_searches_with_recall_and_shows_why(staff_client: Client) -> None:
    memory_create(namespace="user:alice", kind="fact", content="Alice plays the oboe.", actor="t")
    memory_create(namespace="user:alice", kind="fact", content="Alice likes tea.", actor="t")
    memory_create(namespace="user:bob", kind="fact", content="Bob plays the oboe.", actor="t")
    response = staff_client.get(
        "/", {"namespace": "user:alice", "q": "oboe"}, headers={"HX-Request": "true"}
    )
    fragment = response.content.decode()
    assert fragment.strip().startswith('<section id="memory-list">')
    assert "Alice plays the oboe." in fragment
    assert "Bob plays the oboe." not in fragment  # recall stays in the namespace
    assert "<th>keyword</th><td>rank #1, BM25 " in fragment
    assert "<th>RRF</th>" in fragment
    assert "<th>\N{MULTIPLICATION SIGN} recency</th>" in fragment


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_why_shows_bm25_as_a_positive_score_and_what_the_second_stage_did(
    staff_client: Client, htmx: bool
) -> None:
    for content in ("Alice plays the oboe.", "Alice likes tea.", "Alice rides a bike."):
        memory_create(namespace="user:alice", kind="fact", content=content, actor="t")
    page = staff_client.get(
        "/",
        {"namespace": "user:alice", "q": "oboe"},
        headers={"HX-Request": "true"} if htmx else {},
    ).content.decode()
    bm25 = re.search(r"<th>keyword</th><td>rank #1, BM25 (-?[\d.]+)", page)
    assert bm25 is not None
    assert float(bm25.group(1)) > 0
    before = re.findall(r'data-rank="before">#(\d+)<', page)
    after = re.findall(r'data-rank="after">#(\d+)<', page)
    assert before
    assert len(before) == len(after)
    assert sorted(int(r) for r in after) == list(range(1, len(after) + 1))  # every hit ranked
    features = re.findall(r'<tr data-feature="(\w+)">', page)
    assert "in_keyword" in features  # the oboe memory matched the query word


def test_the_api_explains_the_second_stage_too(owner: Actor) -> None:
    memory_create(namespace="user:alice", kind="fact", content="Alice plays the oboe.", actor="t")
    memory_create(namespace="user:alice", kind="fact", content="Alice likes tea.", actor="t")
    found = owner.get(
        "/api/memories/search", {"namespace": "user:alice", "q": "oboe", "explain": "true"}
    ).json()["memories"]
    explanation = found[0]["explanation"]
    assert explanation["rank_after"] == 1
    assert explanation["rank_before"] >= 1
    assert any(f["name"] == "in_keyword" and f["value"] == 1.0 for f in explanation["features"])


def test_the_viewer_asks_for_a_namespace_before_recalling(staff_client: Client) -> None:
    memory_create(namespace="user:alice", kind="fact", content="Alice plays the oboe.", actor="t")
    fragment = staff_client.get("/", {"q": "oboe"}, headers={"HX-Request": "true"}).content.decode()
    assert "Pick a namespace" in fragment
    assert "Alice plays the oboe." not in fragment


def test_a_search_with_no_match_says_so_with_the_query_escaped(
    staff_client: Client, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.RECALL_SEMANTIC = False  # the vector list always has nearest neighbours
    memory_create(namespace="user:alice", kind="fact", content="Alice likes tea.", actor="t")
    page = staff_client.get("/", {"namespace": "user:alice", "q": "<i>zzz</i>"}).content.decode()
    assert "<html" in page
    assert "matches <q>&lt;i&gt;zzz&lt;/i&gt;</q>" in page


def test_the_viewer_shows_a_neighbour_bonus(staff_client: Client) -> None:
    from memories.models import Memory
    from memories.write.services import create_thread, save_message

    thread = create_thread("user:alice")
    asked = save_message(thread.pk, "user", "Where is the cello lesson?")
    answered = save_message(thread.pk, "assistant", "It is in Leeds.")
    question = memory_create(
        namespace="user:alice", kind="episode", content="Where is the cello lesson?", actor="t"
    )
    answer = memory_create(
        namespace="user:alice", kind="episode", content="The cello lesson is in Leeds.", actor="t"
    )
    Memory.objects.filter(pk=question.pk).update(source_message=asked, source_thread=thread)
    Memory.objects.filter(pk=answer.pk).update(source_message=answered, source_thread=thread)
    fragment = staff_client.get(
        "/", {"namespace": "user:alice", "q": "cello lesson"}, headers={"HX-Request": "true"}
    ).content.decode()
    assert f'<a href="/memories/{question.pk}/">#{question.pk}</a>' in fragment
    assert f'<a href="/memories/{answer.pk}/">#{answer.pk}</a>' in fragment


def candidate(content: str = "Alice might be vegetarian.") -> int:
    from memories.models import Memory

    memory = memory_create(namespace="user:alice", kind="fact", content=content, actor="t")
    Memory.objects.filter(pk=memory.pk).update(status="candidate")
    return memory.pk


def test_the_viewer_filters_by_status_and_offers_the_gate_for_candidates(
    staff_client: Client,
) -> None:
    pk = candidate()
    memory_create(namespace="user:alice", kind="fact", content="Alice likes tea.", actor="t")
    fragment = staff_client.get(
        "/", {"status": "candidate"}, headers={"HX-Request": "true"}
    ).content.decode()
    assert "Alice might be vegetarian." in fragment
    assert "Alice likes tea." not in fragment
    assert f'hx-post="/memories/{pk}/decision/"' in fragment
    assert f'action="/memories/{pk}/decision/"' in fragment  # works without JavaScript too


def test_staff_approve_a_candidate_and_history_names_them(staff_client: Client) -> None:
    from memories.models import Memory, MemoryEvent

    pk = candidate()
    response = staff_client.post(
        f"/memories/{pk}/decision/", {"status": "active"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert response.content.decode().strip().startswith(f'<tr id="memory-{pk}"')
    assert "status-active" in response.content.decode()
    assert Memory.objects.get(pk=pk).status == "active"
    event = MemoryEvent.objects.filter(memory_id=pk).last()
    assert (event.event, event.actor) == ("promoted", "staff:staff")


def test_staff_archive_a_candidate(staff_client: Client) -> None:
    from memories.models import Memory

    pk = candidate()
    # Without htmx: a plain form POST, answered by a redirect back to the viewer.
    response = staff_client.post(
        f"/memories/{pk}/decision/", {"status": "archived", "next": "/?status=candidate"}
    )
    assert (response.status_code, response["Location"]) == (302, "/?status=candidate")
    assert Memory.objects.get(pk=pk).status == "archived"
    assert f"Memory {pk} is archived." in staff_client.get("/").content.decode()


def test_memory_decisions_refuse_bad_input(client: Client, staff_client: Client) -> None:
    from memories.models import Memory

    pk = candidate()
    bad = staff_client.post(f"/memories/{pk}/decision/", {"status": "deleted"})
    assert bad.status_code == 422
    assert "active (approve/restore) or archived" in bad.content.decode()
    missing = staff_client.post("/memories/999999/decision/", {"status": "active"})
    assert missing.status_code == 404
    assert "memory 999999 not found" in missing.content.decode()
    assert 'id="error-page"' in missing.content.decode()  # styled, with the navigation
    assert staff_client.get(f"/memories/{pk}/decision/").status_code == 405
    assert client.post(f"/memories/{pk}/decision/", {"status": "active"}).status_code == 302
    assert Memory.objects.get(pk=pk).status == "candidate"
