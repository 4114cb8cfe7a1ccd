"""Message ids belong to their namespace (issue 37, item 6): the same client-chosen id in
two namespaces is two messages; neither answer tells of the other; reading, replacing,
paging and deleting by id stay within the namespace; export and import keep both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memories.models import Extraction, Message, Thread, client_message_id
from memories.write.services import save_message
from spaceduck.ops.transfer.export import export_to_path
from spaceduck.ops.transfer.importer import import_file
from tests.conftest import Actor, make_actor

pytestmark = pytest.mark.django_db

ID = "msg-1"


@pytest.fixture
def alice() -> Actor:
    return make_actor(["user:alice"], ["read", "write"], name="alice-agent")


@pytest.fixture
def bob() -> Actor:
    return make_actor(["user:bob"], ["read", "write"], name="bob-agent")


def new_thread(actor: Actor, namespace: str) -> str:
    response = actor.post("/api/threads", {"namespace": namespace})
    assert response.status_code == 201
    return str(response.json()["id"])


def post(actor: Actor, thread_id: str, content: str, id: str = ID, **extra: object):  # type: ignore[no-untyped-def]
    return actor.post(
        f"/api/threads/{thread_id}/messages",
        {"id": id, "role": "user", "content": content, **extra},
    )


def listed(actor: Actor, thread_id: str, **params: object) -> list[dict[str, object]]:
    response = actor.get(f"/api/threads/{thread_id}/messages", params)
    assert response.status_code == 200, response.content
    return list(response.json()["messages"])


@pytest.fixture
def both(alice: Actor, bob: Actor) -> tuple[str, str]:
    """Alice's and Bob's thread, each with a message of the same id."""
    a, b = new_thread(alice, "user:alice"), new_thread(bob, "user:bob")
    first = post(alice, a, "alice's words")
    assert first.status_code == 201, first.content
    second = post(bob, b, "bob's words")
    assert second.status_code == 201, second.content  # not 409: no sign of Alice's
    return a, b


def test_the_same_id_in_two_namespaces_is_two_messages(
    alice: Actor, bob: Actor, both: tuple[str, str]
) -> None:
    a, b = both
    assert Message.objects.count() == 2
    assert [(m["id"], m["content"]) for m in listed(alice, a)] == [(ID, "alice's words")]
    assert [(m["id"], m["content"]) for m in listed(bob, b)] == [(ID, "bob's words")]
    # The second is stored under its namespace's key; the client sees its own id.
    keys = set(Message.objects.values_list("id", flat=True))
    assert ID in keys
    assert {client_message_id(k) for k in keys} == {ID}


def test_the_answer_is_the_same_whether_or_not_another_namespace_holds_the_id(
    alice: Actor, bob: Actor
) -> None:
    b = new_thread(bob, "user:bob")
    alone = post(bob, b, "x", id="fresh").json()
    a = new_thread(alice, "user:alice")
    post(alice, a, "alice's", id="shared")
    shared = post(bob, b, "x", id="shared").json()
    assert set(alone) == set(shared)
    assert shared["id"] == "shared"
    assert "extraction" in shared


def test_replacing_by_id_stays_within_the_namespace(
    alice: Actor, bob: Actor, both: tuple[str, str]
) -> None:
    a, b = both
    again = post(bob, b, "bob, corrected")
    assert again.status_code == 201
    assert [m["content"] for m in listed(bob, b)] == ["bob, corrected"]
    assert [m["content"] for m in listed(alice, a)] == ["alice's words"]
    assert Message.objects.count() == 2


def test_another_thread_of_the_same_namespace_is_still_409(
    alice: Actor, both: tuple[str, str]
) -> None:
    other = new_thread(alice, "user:alice")
    response = post(alice, other, "x")
    assert response.status_code == 409
    assert "another thread" in response.json()["detail"]


def test_cursors_and_deletes_by_id_stay_within_the_namespace(
    alice: Actor, bob: Actor, both: tuple[str, str]
) -> None:
    a, b = both
    post(bob, b, "later", id="msg-2")
    assert [m["id"] for m in listed(bob, b, after=ID)] == ["msg-2"]
    assert [m["id"] for m in listed(bob, b, before="msg-2")] == [ID]
    deleted = bob.post(f"/api/threads/{b}/messages/delete", {"ids": [ID]})
    assert deleted.json() == {"deleted": 1}
    assert [m["id"] for m in listed(bob, b)] == ["msg-2"]
    assert [m["id"] for m in listed(alice, a)] == [ID]  # Alice's is untouched
    # Alice deleting it deletes hers only.
    assert alice.post(f"/api/threads/{a}/messages/delete", {"ids": [ID]}).json() == {"deleted": 1}
    assert Message.objects.count() == 1


def test_the_extraction_record_shows_the_clients_id(bob: Actor, both: tuple[str, str]) -> None:
    _, b = both
    record = Extraction.objects.filter(thread_id=b).first()
    if record is None:
        pytest.skip("no extraction record in this mode")
    assert record.message_id != ID  # the stored key
    shown = bob.get(f"/api/extractions/{record.pk}")
    assert shown.status_code == 200, shown.content
    assert shown.json()["message_id"] == ID


def test_the_dashboards_thread_page_shows_the_clients_id(
    staff_client, both: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    _, b = both
    for headers in ({}, {"HX-Request": "true"}):
        page = staff_client.get(f"/threads/{b}/", headers=headers).content.decode()
        assert f">{ID}</code>" in page
        assert "\x1f" not in page


def test_export_and_import_keep_both_messages(
    alice: Actor, bob: Actor, both: tuple[str, str], tmp_path: Path
) -> None:
    a, b = both
    path = tmp_path / "all.jsonl"
    export_to_path(path)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    messages = [r for r in records if r.get("type") == "message"]
    assert len(messages) == 2
    Extraction.objects.all().delete()
    Message.objects.all().delete()
    Thread.objects.all().delete()
    result = import_file(path)
    assert result.created["message"] == 2
    assert [(m["id"], m["content"]) for m in listed(alice, a)] == [(ID, "alice's words")]
    assert [(m["id"], m["content"]) for m in listed(bob, b)] == [(ID, "bob's words")]
    assert post(bob, b, "bob, again").status_code == 201
    assert Message.objects.count() == 2


def test_the_python_store_and_a_third_namespace(both: tuple[str, str]) -> None:
    carol = make_actor(["user:carol"], ["read", "write"], name="carol-agent")
    c = new_thread(carol, "user:carol")
    saved = save_message(c, "user", "carol's", id=ID)
    assert saved.client_id == ID
    assert Message.objects.count() == 3
    assert [m["content"] for m in listed(carol, c)] == ["carol's"]


def test_the_context_block_shows_the_clients_id(bob: Actor, both: tuple[str, str]) -> None:
    _, b = both
    response = bob.post("/api/context", {"thread_id": b, "query": "words"})
    assert response.status_code == 200, response.content
    assert [m["id"] for m in response.json()["messages"]] == [ID]


def test_the_admin_lists_and_deletes_a_namespaced_message(
    staff_client, django_user_model, both: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.admin.utils import quote

    django_user_model.objects.filter(username="staff").update(is_superuser=True)
    _, b = both
    key = Message.objects.get(thread_id=b).pk
    assert key != ID
    assert staff_client.get("/admin/memories/message/").status_code == 200
    page = staff_client.get(f"/admin/memories/message/{quote(key)}/change/")
    assert page.status_code == 200
    deleted = staff_client.post(f"/admin/memories/message/{quote(key)}/delete/", {"post": "yes"})
    assert deleted.status_code == 302
    assert Message.objects.get().thread_id != b  # Alice's stays
