"""JSON API for facts and threads: shapes, 4xx for bad input, token grants on every route."""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import Fact, Message, Thread
from memories.write.services import create_thread, save_message, set_fact
from tests.conftest import Actor, make_actor

pytestmark = pytest.mark.django_db
FACT = "/api/facts/user:alice/theme"


@pytest.fixture
def reader(db: None) -> Actor:
    """Reads user:alice, cannot write."""
    return make_actor(["user:alice"], ["read"], name="reader")


@pytest.fixture
def thread() -> Thread:
    return create_thread("user:alice", title="Planning")


def messages_url(thread: Thread) -> str:
    return f"/api/threads/{thread.id}/messages"


# --- Facts -------------------------------------------------------------------------


def test_put_get_and_delete_a_fact(owner: Actor) -> None:
    body = {"value": {"mode": "dark"}, "ttl_ms": 60_000, "provenance": {"run_id": "r1"}}
    response = owner.put(FACT, body)
    assert response.status_code == 200
    fact = response.json()
    assert fact["namespace"] == "user:alice"
    assert fact["key"] == "theme"
    assert fact["value"] == {"mode": "dark"}
    assert fact["ttl_ms"] == 60_000
    assert fact["expires_at"] is not None
    assert fact["provenance"] == {"run_id": "r1"}
    assert set(fact) >= {"created_at", "updated_at"}
    assert owner.get(FACT).json() == fact
    assert owner.delete(FACT).status_code == 204
    assert owner.get(FACT).status_code == 404
    assert owner.delete(FACT).status_code == 204  # deleting a missing key is a no-op


def test_an_upsert_replaces_the_value_and_clears_the_ttl(owner: Actor) -> None:
    owner.put(FACT, {"value": 1, "ttl_ms": 5000, "provenance": {"run_id": "r1"}})
    fact = owner.put(FACT, {"value": 2}).json()
    assert (fact["value"], fact["ttl_ms"], fact["expires_at"], fact["provenance"]) == (
        2,
        None,
        None,
        None,
    )
    assert Fact.objects.count() == 1


@pytest.mark.parametrize("value", [None, "text", 0, False, [], {"a": None}])
def test_null_and_every_other_json_value_can_be_stored(owner: Actor, value: Any) -> None:
    assert owner.put(FACT, {"value": value}).json()["value"] == value
    assert owner.get(FACT).json()["value"] == value


def test_a_key_may_contain_slashes(owner: Actor) -> None:
    url = "/api/facts/user:alice/prefs/ui/theme"
    assert owner.put(url, {"value": "dark"}).json()["key"] == "prefs/ui/theme"
    assert owner.get(url).json()["value"] == "dark"


def test_an_expired_fact_is_404(owner: Actor) -> None:
    assert owner.put(FACT, {"value": "brief", "ttl_ms": 0}).status_code == 200
    assert owner.get(FACT).status_code == 404
    assert owner.get("/api/facts", {"namespace": "user:alice"}).json() == {"facts": []}


def test_list_facts_of_a_namespace_by_key(owner: Actor) -> None:
    for key in ["b", "a", "c"]:
        set_fact("user:alice", key, key)
    set_fact("user:bob", "z", "bob's")
    response = owner.get("/api/facts", {"namespace": "user:alice"})
    assert response.status_code == 200
    assert [f["key"] for f in response.json()["facts"]] == ["a", "b", "c"]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"ttl_ms": 5},
        {"value": 1, "ttl_ms": "5"},
        {"value": 1, "ttl_ms": 1.5},
        {"value": 1, "ttl_ms": True},
        {"value": 1, "ttl_ms": -1},
        {"value": 1, "provenance": "r1"},
        {"value": 1, "provenance": {"iteration": -2}},
        {"value": 1, "ttl": 5},
        [1, 2],
    ],
)
def test_a_bad_fact_body_is_4xx_and_writes_nothing(owner: Actor, body: Any) -> None:
    response = owner.put(FACT, body)
    assert 400 <= response.status_code < 500
    assert response.json()["detail"]
    assert not Fact.objects.exists()


def test_a_body_that_is_not_json_is_4xx(owner: Actor) -> None:
    response = owner.client.put(
        FACT, "{not json", content_type="application/json", headers=owner._auth()
    )
    assert 400 <= response.status_code < 500
    assert not Fact.objects.exists()


def test_a_key_longer_than_255_characters_is_422(owner: Actor) -> None:
    response = owner.put(f"/api/facts/user:alice/{'k' * 256}", {"value": 1})
    assert response.status_code == 422
    assert "255" in response.json()["detail"]


@pytest.mark.parametrize("namespace", ["user:a:b", "nonsense", "planet:x"])
def test_a_bad_namespace_is_422_on_every_fact_route(owner: Actor, namespace: str) -> None:
    url = f"/api/facts/{namespace}/k"
    assert owner.put(url, {"value": 1}).status_code == 422
    assert owner.get(url).status_code == 422
    assert owner.delete(url).status_code == 422
    assert owner.get("/api/facts", {"namespace": namespace}).status_code == 422
    assert owner.get("/api/facts").status_code == 422  # namespace is required


def test_a_stranger_gets_404_on_every_fact_route(owner: Actor, stranger: Actor) -> None:
    set_fact("user:alice", "theme", "dark")
    assert stranger.get(FACT).status_code == 404
    assert stranger.put(FACT, {"value": "hacked"}).status_code == 404
    assert stranger.delete(FACT).status_code == 404
    assert stranger.get("/api/facts", {"namespace": "user:alice"}).status_code == 404
    assert owner.get(FACT).json()["value"] == "dark"


def test_a_read_only_token_reads_but_gets_403_on_writes(reader: Actor) -> None:
    set_fact("user:alice", "theme", "dark")
    assert reader.get(FACT).status_code == 200
    assert reader.get("/api/facts", {"namespace": "user:alice"}).status_code == 200
    response = reader.put(FACT, {"value": "light"})
    assert response.status_code == 403
    assert "write" in response.json()["detail"]
    assert reader.delete(FACT).status_code == 403
    assert Fact.objects.get().value == "dark"


def test_fact_routes_need_a_token(client) -> None:  # type: ignore[no-untyped-def]
    assert client.get(FACT).status_code == 401
    assert client.put(FACT, {"value": 1}, content_type="application/json").status_code == 401


# --- Threads -----------------------------------------------------------------------


def test_create_list_get_and_delete_threads(owner: Actor) -> None:
    response = owner.post("/api/threads", {"namespace": "user:alice", "title": "Trip"})
    assert response.status_code == 201
    created = response.json()
    assert (created["namespace"], created["title"]) == ("user:alice", "Trip")
    assert set(created) == {"id", "namespace", "title", "created_at", "updated_at"}
    second = owner.post("/api/threads", {"namespace": "user:alice"}).json()
    assert second["title"] == ""
    listing = owner.get("/api/threads", {"namespace": "user:alice"}).json()
    assert [t["id"] for t in listing["threads"]] == [created["id"], second["id"]]
    assert owner.get(f"/api/threads/{created['id']}").json() == created
    assert owner.delete(f"/api/threads/{created['id']}").status_code == 204
    assert owner.get(f"/api/threads/{created['id']}").status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"namespace": 5},
        {"namespace": "user:a:b"},
        {"namespace": "user:alice", "title": 7},
        {"namespace": "user:alice", "title": "x" * 501},
        {"namespace": "user:alice", "colour": "red"},
    ],
)
def test_a_bad_thread_body_is_4xx(owner: Actor, body: dict[str, Any]) -> None:
    response = owner.post("/api/threads", body)
    assert 400 <= response.status_code < 500
    assert response.json()["detail"]
    assert not Thread.objects.exists()


def test_a_stranger_sees_no_thread_of_alice(stranger: Actor, thread: Thread) -> None:
    save_message(thread.id, "user", "secret", id="m1")
    missing = stranger.get("/api/threads/does-not-exist")
    hidden = stranger.get(f"/api/threads/{thread.id}")
    # The same answer whether the thread is missing or someone else's.
    assert hidden.status_code == missing.status_code == 404
    assert "not found" in hidden.json()["detail"]
    assert stranger.delete(f"/api/threads/{thread.id}").status_code == 404
    assert stranger.get(messages_url(thread)).status_code == 404
    assert stranger.post(messages_url(thread), {"role": "user", "content": "x"}).status_code == 404
    deleted = stranger.post(f"{messages_url(thread)}/delete", {"ids": ["m1"]})
    assert deleted.status_code == 404
    assert stranger.get("/api/threads", {"namespace": "user:alice"}).status_code == 404
    created = stranger.post("/api/threads", {"namespace": "user:alice"})
    assert created.status_code == 404
    assert Message.objects.filter(thread=thread).count() == 1
    assert Thread.objects.count() == 1


def test_a_read_only_token_gets_403_on_thread_writes(reader: Actor, thread: Thread) -> None:
    save_message(thread.id, "user", "hello", id="m1")
    assert reader.get(f"/api/threads/{thread.id}").status_code == 200
    assert reader.get(messages_url(thread)).status_code == 200
    assert reader.post("/api/threads", {"namespace": "user:alice"}).status_code == 403
    assert reader.delete(f"/api/threads/{thread.id}").status_code == 403
    assert reader.post(messages_url(thread), {"role": "user", "content": "x"}).status_code == 403
    assert reader.post(f"{messages_url(thread)}/delete", {"ids": ["m1"]}).status_code == 403
    assert Message.objects.filter(thread=thread).count() == 1


# --- Messages --------------------------------------------------------------------


def test_post_a_message_returns_201_with_the_message(owner: Actor, thread: Thread) -> None:
    response = owner.post(
        messages_url(thread),
        {"role": "tool", "content": {"result": [1, 2]}, "provenance": {"run_id": "r"}},
    )
    assert response.status_code == 201
    message = response.json()
    assert message["thread_id"] == thread.id
    assert (message["role"], message["content"]) == ("tool", {"result": [1, 2]})
    assert message["provenance"] == {"run_id": "r"}
    assert {"id", "created_at", "updated_at"} <= set(message)
    listed = owner.get(messages_url(thread)).json()["messages"]
    assert [m["id"] for m in listed] == [message["id"]]


def test_posting_an_existing_id_replaces_it_and_keeps_created_at(
    owner: Actor, thread: Thread
) -> None:
    first = owner.post(
        messages_url(thread),
        {"id": "m1", "role": "user", "content": "draft", "created_at": "2024-05-01T12:00:00Z"},
    ).json()
    second = owner.post(messages_url(thread), {"id": "m1", "role": "user", "content": "final"})
    assert second.status_code == 201
    assert second.json()["created_at"] == first["created_at"]
    assert second.json()["content"] == "final"


def test_an_id_used_by_another_thread_is_409(owner: Actor, thread: Thread) -> None:
    other = create_thread("user:alice")
    save_message(other.id, "user", "theirs", id="taken")
    response = owner.post(messages_url(thread), {"id": "taken", "role": "user", "content": "x"})
    assert response.status_code == 409
    assert "another thread" in response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"role": "robot", "content": "x"}, "role must be one of user, assistant, system, tool"),
        ({"role": "user", "content": None}, "content"),
        ({"role": "user"}, None),
        ({"content": "x"}, None),
        ({"role": 1, "content": "x"}, None),
        ({"role": "user", "content": "x", "created_at": "2024-05-01T12:00:00"}, "timezone"),
        ({"role": "user", "content": "x", "created_at": "yesterday"}, None),
        ({"role": "user", "content": "x", "id": ""}, "message id"),
        ({"role": "user", "content": "x", "id": 5}, None),
        ({"role": "user", "content": "x", "provenance": [1]}, None),
    ],
)
def test_a_bad_message_is_4xx_and_writes_nothing(
    owner: Actor, thread: Thread, body: dict[str, Any], detail: str | None
) -> None:
    response = owner.post(messages_url(thread), body)
    assert 400 <= response.status_code < 500
    assert response.json()["detail"]
    if detail is not None:
        assert detail in response.json()["detail"]
    assert not Message.objects.exists()


def test_list_messages_with_limit_and_cursors(owner: Actor, thread: Thread) -> None:
    for i in range(6):
        save_message(thread.id, "user", f"t{i}", id=f"m{i}")
    url = messages_url(thread)

    def page(**params: Any) -> list[str]:
        response = owner.get(url, params)
        assert response.status_code == 200
        return [m["id"] for m in response.json()["messages"]]

    assert page() == [f"m{i}" for i in range(6)]
    assert page(limit=2) == ["m4", "m5"]
    assert page(limit=2, before="m4") == ["m2", "m3"]
    assert page(limit=2, after="m1") == ["m2", "m3"]
    assert page(limit=0) == []


@pytest.mark.parametrize(
    "params",
    [{"limit": -1}, {"limit": 1.5}, {"limit": "three"}, {"before": "nope"}, {"after": "nope"}],
)
def test_bad_listing_parameters_are_422(
    owner: Actor, thread: Thread, params: dict[str, Any]
) -> None:
    save_message(thread.id, "user", "hi", id="m1")
    response = owner.get(messages_url(thread), params)
    assert response.status_code == 422
    assert response.json()["detail"]


def test_delete_messages_by_ids(owner: Actor, thread: Thread) -> None:
    other = create_thread("user:alice")
    for i in range(3):
        save_message(thread.id, "user", f"t{i}", id=f"m{i}")
    save_message(other.id, "user", "theirs", id="theirs")
    response = owner.post(f"{messages_url(thread)}/delete", {"ids": ["m0", "m2", "theirs", "x"]})
    assert response.status_code == 200
    assert response.json() == {"deleted": 2}
    assert [m.id for m in Message.objects.filter(thread=thread)] == ["m1"]
    assert Message.objects.filter(thread=other).count() == 1


@pytest.mark.parametrize("body", [{}, {"ids": "m0"}, {"ids": [1]}, {"ids": None}])
def test_a_bad_delete_body_is_4xx(owner: Actor, thread: Thread, body: dict[str, Any]) -> None:
    save_message(thread.id, "user", "hi", id="m0")
    response = owner.post(f"{messages_url(thread)}/delete", body)
    assert 400 <= response.status_code < 500
    assert Message.objects.count() == 1


def test_deleting_a_thread_deletes_its_messages(owner: Actor, thread: Thread) -> None:
    save_message(thread.id, "user", "hi")
    assert owner.delete(f"/api/threads/{thread.id}").status_code == 204
    assert not Message.objects.exists()
    assert owner.get(messages_url(thread)).status_code == 404
