"""Direct writes, edits, status changes and history over HTTP."""

from __future__ import annotations

import pytest

from memories.models import Memory
from tests.conftest import Actor, make_actor

pytestmark = pytest.mark.django_db


def write(actor: Actor, content: str, **fields: object):  # type: ignore[no-untyped-def]
    return actor.post(
        "/api/memories", {"namespace": "user:alice", "kind": "fact", "content": content, **fields}
    )


def test_a_direct_write_goes_through_the_gate_and_dedup(owner: Actor) -> None:
    stored = write(owner, "The user prefers aisle seats.", importance="significant")
    assert stored.status_code == 201
    assert stored.json()["decision"] == "stored"
    assert stored.json()["memory"]["importance"] == 0.7
    duplicate = write(owner, "the user prefers aisle seats")
    assert duplicate.status_code == 200
    assert duplicate.json()["decision"] == "duplicate"
    rejected = write(owner, "ok")
    assert rejected.json()["decision"] == "rejected"
    question = write(owner, "Does the user prefer aisle seats?")
    assert question.json()["decision"] == "rejected"


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "fact"},
        {"kind": "fact", "content": 5},
        {"kind": "fact", "content": "x y z w", "importance": "huge"},
        {"kind": "fact", "content": "The user is tall.", "confidence": 2},
        {"kind": "fact", "content": "The user is tall.", "surprise": 1},
    ],
)
def test_bad_writes_are_4xx_with_a_message(owner: Actor, body: dict[str, object]) -> None:
    response = owner.post("/api/memories", {"namespace": "user:alice", **body})
    assert 400 <= response.status_code < 500
    assert response.json()["detail"]


def test_low_confidence_writes_wait_as_candidates_until_someone_approves(owner: Actor) -> None:
    memory = write(owner, "The user may adopt a cat soon.", confidence="likely").json()["memory"]
    assert memory["status"] == "candidate"
    denied = owner.patch(f"/api/memories/{memory['id']}", {"status": "active"})
    assert denied.status_code == 403
    approver = make_actor(["user:alice"], ["read", "write", "approve"], name="human")
    approved = approver.patch(f"/api/memories/{memory['id']}", {"status": "active"})
    assert approved.status_code == 200
    assert approved.json()["status"] == "active"
    history = owner.get(f"/api/memories/{memory['id']}/history").json()["events"]
    assert [(e["event"], e["actor"]) for e in history] == [
        ("created", "token:owner"),
        ("promoted", "token:human"),
    ]


def test_editing_content_re_embeds_and_re_indexes(owner: Actor) -> None:
    memory = write(owner, "The user likes green tea.").json()["memory"]
    response = owner.patch(
        f"/api/memories/{memory['id']}", {"content": "The user likes oolong tea."}
    )
    assert response.status_code == 200
    from memories.store.keyword_index import matching_ids

    assert matching_ids("user:alice", "oolong") == [memory["id"]]
    assert matching_ids("user:alice", "green") == []
    history = owner.get(f"/api/memories/{memory['id']}/history").json()["events"]
    assert history[-1]["event"] == "edited"
    assert history[-1]["data"]["before"]["content"] == "The user likes green tea."


def test_archive_restore_and_reversing_a_supersession(owner: Actor) -> None:
    paris = write(owner, "The user lives in Paris.", slot="location").json()["memory"]
    tokyo = write(owner, "The user lives in Tokyo.", slot="location").json()["memory"]
    assert Memory.objects.get(pk=paris["id"]).status == "superseded"
    restored = owner.patch(f"/api/memories/{paris['id']}", {"status": "active"})
    assert restored.json()["status"] == "active"
    assert Memory.objects.get(pk=tokyo["id"]).status == "archived"
    events = [
        e["event"] for e in owner.get(f"/api/memories/{paris['id']}/history").json()["events"]
    ]
    assert events == ["created", "superseded", "restored"]
    archived = owner.patch(f"/api/memories/{paris['id']}", {"status": "archived"})
    assert archived.json()["status"] == "archived"
    assert (
        owner.patch(f"/api/memories/{paris['id']}", {"status": "active"}).json()["status"]
        == "active"
    )
    assert owner.patch(f"/api/memories/{paris['id']}", {"status": "stale"}).status_code == 422


def test_strangers_cannot_touch_alices_memories(owner: Actor, stranger: Actor) -> None:
    memory = write(owner, "The user is left-handed.").json()["memory"]
    assert (
        stranger.patch(f"/api/memories/{memory['id']}", {"status": "archived"}).status_code == 404
    )
    assert stranger.get(f"/api/memories/{memory['id']}/history").status_code == 404
    assert (
        stranger.post(
            "/api/memories",
            {"namespace": "user:alice", "kind": "fact", "content": "The user is evil."},
        ).status_code
        == 404
    )
