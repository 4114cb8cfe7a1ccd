"""The notes JSON API: grants on every route, the approval gate, 4xx (never 500) on junk."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from notes.models import Note
from notes.services import enable_note_search, save_note
from tests.conftest import Actor, make_actor
from tests.notes.test_note_search import HOSTILE_QUERIES

pytestmark = pytest.mark.django_db

NS = "user:alice"


@pytest.fixture
def approver() -> Actor:
    """A reviewer of Alice's notes: may approve."""
    return make_actor([NS], ["read", "write", "approve"], name="approver")


@pytest.fixture
def reader() -> Actor:
    return make_actor([NS], ["read"], name="reader")


def ids(response) -> list[str]:  # type: ignore[no-untyped-def]
    assert response.status_code == 200, response.content
    return [note["id"] for note in response.json()["notes"]]


def post_note(actor: Actor, **fields: object):  # type: ignore[no-untyped-def]
    return actor.post("/api/notes", {"namespace": NS, **fields})


# --- saving -------------------------------------------------------------------


def test_posting_a_note_saves_it_and_answers_201(owner: Actor) -> None:
    response = post_note(
        owner,
        body="Deploys happen on Tuesdays.",
        kind="decision",
        tags=["ops"],
        provenance={"thread": "t-1"},
        id="deploy-day",
    )
    assert response.status_code == 201
    note = response.json()
    assert note["id"] == "deploy-day"
    assert note["namespace"] == NS
    assert note["kind"] == "decision"
    assert note["tags"] == ["ops"]
    assert note["status"] == "accepted"
    assert note["author"] == "token:owner"  # defaults to the token that wrote it
    assert note["provenance"] == {"thread": "t-1"}
    assert note["supersedes"] == []
    assert Note.objects.get(uid="deploy-day").namespace_kind == "user"


def test_posting_an_existing_id_again_answers_200_with_the_stored_note(owner: Actor) -> None:
    first = post_note(owner, body="original", id="n1").json()
    again = post_note(owner, body="changed", tags=["x"], status="rejected", id="n1")
    assert again.status_code == 200
    assert again.json() == first
    assert Note.objects.count() == 1


def test_an_explicit_author_under_the_token_is_kept(owner: Actor) -> None:
    # A token writes as itself or a name under it; any other author is refused (issue 37).
    response = post_note(owner, body="x", author="token:owner/planner")
    assert response.json()["author"] == "token:owner/planner"
    assert post_note(owner, body="x", author="agent:planner").status_code == 403


def test_posting_outside_the_grants_is_404_and_without_write_is_403(
    stranger: Actor, reader: Actor
) -> None:
    assert post_note(stranger, body="x").status_code == 404
    refused = post_note(reader, body="x")
    assert refused.status_code == 403
    assert "write" in refused.json()["detail"]
    assert Note.objects.count() == 0


def test_a_write_only_token_saves_a_superseding_note_as_pending(owner: Actor) -> None:
    save_note(NS, "old", id="old")
    response = post_note(owner, body="new", supersedes=["old"], id="new")
    assert response.status_code == 201
    assert response.json()["status"] == "pending"
    assert response.json()["supersedes"] == ["old"]
    assert ids(owner.get("/api/notes", {"namespace": NS})) == ["old"]  # nothing hidden yet


@pytest.mark.parametrize("status", ["accepted", "rejected"])
def test_a_write_only_token_cannot_decide_a_superseding_note(owner: Actor, status: str) -> None:
    save_note(NS, "old", id="old")
    response = post_note(owner, body="new", supersedes=["old"], status=status)
    assert response.status_code == 403
    assert "approve" in response.json()["detail"]
    assert Note.objects.count() == 1


def test_a_write_only_token_may_propose_explicitly_as_pending(owner: Actor) -> None:
    save_note(NS, "old", id="old")
    response = post_note(owner, body="new", supersedes=["old"], status="pending")
    assert response.status_code == 201
    assert response.json()["status"] == "pending"


def test_a_write_only_token_saves_plain_notes_as_accepted(owner: Actor) -> None:
    assert post_note(owner, body="plain").json()["status"] == "accepted"


def test_an_approver_supersedes_directly(approver: Actor) -> None:
    save_note(NS, "old", id="old")
    response = post_note(approver, body="new", supersedes=["old"], id="new")
    assert response.json()["status"] == "accepted"
    assert ids(approver.get("/api/notes", {"namespace": NS})) == ["new"]


@pytest.mark.parametrize(
    ("payload", "status_code", "message"),
    [
        ({"namespace": NS}, 422, "body"),
        ({"namespace": NS, "body": 5}, 422, "body"),
        ({"namespace": NS, "body": ""}, 422, "body"),
        ({"namespace": NS, "body": "x", "tags": "ops"}, 422, "tags"),
        ({"namespace": NS, "body": "x", "tags": [1]}, 422, "tags"),
        ({"namespace": NS, "body": "x", "status": "approved"}, 422, "accepted, pending, rejected"),
        ({"namespace": NS, "body": "x", "status": 3}, 422, "status"),
        ({"namespace": NS, "body": "x", "supersedes": ["ghost"]}, 422, "ghost"),
        ({"namespace": NS, "body": "x", "supersedes": "ghost"}, 422, "supersedes"),
        ({"namespace": NS, "body": "x", "provenance": [1]}, 422, "provenance"),
        ({"namespace": NS, "body": "x", "id": ""}, 422, "id"),
        ({"namespace": NS, "body": "x", "id": "a/b"}, 422, "id"),
        ({"namespace": NS, "body": "x", "id": "i" * 200}, 422, "id"),
        ({"namespace": NS, "body": "x", "id": "me", "supersedes": ["me"]}, 422, "itself"),
        ({"namespace": "user:a:b", "body": "x"}, 422, "namespace"),
        ({"namespace": 5, "body": "x"}, 422, "namespace"),
        ({"body": "x"}, 422, "namespace"),
    ],
)
def test_invalid_notes_get_a_4xx_with_a_message(
    approver: Actor, payload: dict[str, object], status_code: int, message: str
) -> None:
    response = approver.post("/api/notes", payload)
    assert response.status_code == status_code, response.content
    assert message in json.dumps(response.json()["detail"])
    assert Note.objects.count() == 0


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "",
        "[1, 2]",
        "null",
        '{"namespace": "user:alice", "body": "\\ud800"}',
        '{"namespace": "user:alice", "body": "x", "provenance": {"a": NaN}}',
        '{"namespace": "user:alice", "body": "nul \\u0000 inside"}',
        b'{"namespace": "user:alice", "body": "\xff"}',
    ],
)
def test_junk_bodies_get_a_4xx_never_a_500(owner: Actor, raw: str | bytes) -> None:
    response = owner.client.post(
        "/api/notes", raw, content_type="application/json", headers=owner._auth()
    )
    assert 400 <= response.status_code < 500, response.content
    assert "detail" in response.json()


def test_null_supersedes_means_none(owner: Actor) -> None:
    assert post_note(owner, body="x", supersedes=None).status_code == 201


def test_superseding_another_namespaces_note_is_refused_like_a_missing_one() -> None:
    both = make_actor([NS, "user:bob"], ["read", "write", "approve"])
    save_note("user:bob", "bob's", id="bob-1")
    response = both.post("/api/notes", {"namespace": NS, "body": "x", "supersedes": ["bob-1"]})
    assert response.status_code == 422
    assert "own namespace" in response.json()["detail"]
    assert ids(both.get("/api/notes", {"namespace": "user:bob"})) == ["bob-1"]


def test_an_id_taken_in_another_namespace_is_ours_and_reveals_nothing(owner: Actor) -> None:
    # Issue 37: note ids belong to their namespace (was 409, which confirmed the id).
    save_note("user:bob", "bob's secret", id="taken")
    response = post_note(owner, body="mine", id="taken")
    assert response.status_code == 201
    assert (response.json()["id"], response.json()["namespace"]) == ("taken", NS)
    assert "secret" not in response.content.decode()
    assert "user:bob" not in response.content.decode()


# --- reading --------------------------------------------------------------------


def test_listing_applies_the_read_contract_and_filters(owner: Actor) -> None:
    save_note(NS, "a", kind="decision", id="a")
    save_note(NS, "b", supersedes=["a"], id="b")
    save_note(NS, "p", status="pending", id="p")
    save_note(NS, "r", kind="decision", status="rejected", id="r")
    save_note("user:bob", "bob", id="bob")
    listing = owner.get("/api/notes", {"namespace": NS})
    assert ids(listing) == ["b"]
    assert listing.json()["notes"][0]["supersedes"] == ["a"]
    assert ids(owner.get("/api/notes", {"namespace": NS, "status": "pending"})) == ["p"]
    assert ids(owner.get("/api/notes", {"namespace": NS, "status": "pending,rejected"})) == [
        "p",
        "r",
    ]
    assert ids(owner.get("/api/notes", {"namespace": NS, "status": "any"})) == ["b", "p", "r"]
    assert ids(owner.get("/api/notes", {"namespace": NS, "include_superseded": "true"})) == [
        "a",
        "b",
    ]
    assert ids(owner.get("/api/notes", {"namespace": NS, "kind": "decision", "status": "any"})) == [
        "r"
    ]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"namespace": "user:a:b"},
        {"namespace": NS, "status": "approved"},
        {"namespace": NS, "status": "accepted,"},
        {"namespace": NS, "include_superseded": "maybe"},
    ],
)
def test_listing_with_bad_parameters_is_422(owner: Actor, params: dict[str, str]) -> None:
    assert owner.get("/api/notes", params).status_code == 422


def test_listing_outside_the_grants_is_404(stranger: Actor) -> None:
    save_note(NS, "a")
    assert stranger.get("/api/notes", {"namespace": NS}).status_code == 404


def test_a_read_only_token_reads(reader: Actor) -> None:
    save_note(NS, "a", id="a")
    assert ids(reader.get("/api/notes", {"namespace": NS})) == ["a"]
    assert reader.get("/api/notes/a").json()["body"] == "a"


def test_getting_a_note_outside_the_grants_is_404_like_a_missing_one(
    owner: Actor, stranger: Actor
) -> None:
    save_note(NS, "a", id="a")
    save_note(NS, "b", supersedes=["a"], id="b")
    response = owner.get("/api/notes/b")
    assert response.status_code == 200
    assert response.json()["supersedes"] == ["a"]
    assert stranger.get("/api/notes/b").status_code == 404
    assert stranger.get("/api/notes/ghost").status_code == 404
    assert owner.get("/api/notes/ghost").status_code == 404


def test_every_route_needs_a_token(client: Client) -> None:
    save_note(NS, "a", id="a")
    assert client.get("/api/notes", {"namespace": NS}).status_code == 401
    assert client.get("/api/notes/a").status_code == 401
    assert client.post("/api/notes", {}, content_type="application/json").status_code == 401
    assert client.post("/api/notes/a/status", {"status": "rejected"}).status_code == 401
    assert client.post("/api/notes/search/user/enable").status_code == 401
    assert client.get("/api/notes/search", {"kind": "user", "q": "a"}).status_code == 401


# --- the status gate -------------------------------------------------------------


def post_status(actor: Actor, note_id: str, status: object):  # type: ignore[no-untyped-def]
    return actor.post(f"/api/notes/{note_id}/status", {"status": status})


@pytest.mark.parametrize("status", ["accepted", "rejected"])
def test_approving_or_rejecting_with_a_write_only_token_is_403(owner: Actor, status: str) -> None:
    save_note(NS, "p", status="pending", id="p")
    response = post_status(owner, "p", status)
    assert response.status_code == 403
    assert "approve" in response.json()["detail"]
    assert Note.objects.get(uid="p").status == "pending"


def test_an_approver_accepts_and_the_change_records_who_and_when(approver: Actor) -> None:
    save_note(NS, "old", id="old")
    save_note(NS, "new", supersedes=["old"], status="pending", id="new")
    response = post_status(approver, "new", "accepted")
    assert response.status_code == 200
    note = response.json()
    assert (note["status"], note["status_by"]) == ("accepted", "token:approver")
    assert note["status_at"] is not None
    assert ids(approver.get("/api/notes", {"namespace": NS})) == ["new"]


def test_an_approver_rejects(approver: Actor) -> None:
    save_note(NS, "p", status="pending", id="p")
    assert post_status(approver, "p", "rejected").json()["status"] == "rejected"


def test_a_write_only_token_may_set_a_pending_note_pending(owner: Actor) -> None:
    save_note(NS, "p", status="pending", id="p")
    response = post_status(owner, "p", "pending")
    assert response.status_code == 200
    assert response.json()["status_by"] == "token:owner"


@pytest.mark.parametrize("current", ["accepted", "rejected"])
def test_a_write_only_token_cannot_reopen_a_decided_note(owner: Actor, current: str) -> None:
    # Moving accepted knowledge back to pending would hide it without approval.
    save_note(NS, "decided", status=current, id="d")
    assert post_status(owner, "d", "pending").status_code == 403
    assert Note.objects.get(uid="d").status == current


def test_a_read_only_token_cannot_change_a_status(reader: Actor) -> None:
    save_note(NS, "p", status="pending", id="p")
    assert post_status(reader, "p", "pending").status_code == 403


def test_a_status_change_on_a_missing_or_foreign_note_is_404(
    approver: Actor, stranger: Actor
) -> None:
    save_note(NS, "p", status="pending", id="p")
    assert post_status(approver, "ghost", "accepted").status_code == 404
    assert post_status(stranger, "p", "pending").status_code == 404
    assert Note.objects.get(uid="p").status == "pending"


@pytest.mark.parametrize("status", ["approved", "", "any", 1, None])
def test_an_unknown_status_is_422(approver: Actor, status: object) -> None:
    save_note(NS, "p", status="pending", id="p")
    assert post_status(approver, "p", status).status_code == 422


def test_a_status_body_that_is_not_json_is_4xx(approver: Actor) -> None:
    save_note(NS, "p", status="pending", id="p")
    response = approver.client.post(
        "/api/notes/p/status", "{", content_type="application/json", headers=approver._auth()
    )
    assert 400 <= response.status_code < 500


# --- search ----------------------------------------------------------------------


@pytest.fixture
def user_kind_writer() -> Actor:
    """A token over every user namespace: it may switch on search for the kind."""
    return make_actor(["user:*"], ["read", "write"], name="users")


def test_enabling_search_needs_a_grant_on_the_whole_kind(
    owner: Actor, user_kind_writer: Actor
) -> None:
    save_note(NS, "restart the worker")
    refused = owner.post("/api/notes/search/user/enable")
    assert refused.status_code == 403
    assert "user:*" in refused.json()["detail"]
    response = user_kind_writer.post("/api/notes/search/user/enable")
    assert response.status_code == 200
    assert response.json() == {
        "kind": "user",
        "enabled": True,
        "newly_enabled": True,
        "backfilled": 1,
    }
    again = user_kind_writer.post("/api/notes/search/user/enable").json()
    assert (again["newly_enabled"], again["backfilled"]) == (False, 0)
    assert user_kind_writer.post("/api/notes/search/agent/enable").status_code == 403


def test_enabling_search_needs_write() -> None:
    assert make_actor(["user:*"], ["read"]).post("/api/notes/search/user/enable").status_code == 403
    assert make_actor(["*"], ["admin"]).post("/api/notes/search/agent/enable").status_code == 200


def test_enabling_search_for_an_unknown_kind_is_422(user_kind_writer: Actor) -> None:
    assert user_kind_writer.post("/api/notes/search/planet/enable").status_code == 422


def test_searching_a_kind_that_is_not_enabled_is_a_clear_4xx(owner: Actor) -> None:
    response = owner.get("/api/notes/search", {"kind": "user", "q": "worker"})
    assert response.status_code == 422
    assert "not enabled" in response.json()["detail"]


def test_search_returns_ranked_notes_with_scores(owner: Actor) -> None:
    enable_note_search("user")
    save_note(NS, "worker mentioned once among several other words", id="weak")
    save_note(NS, "worker worker", id="strong")
    response = owner.get("/api/notes/search", {"kind": "user", "q": "worker"})
    assert ids(response) == ["strong", "weak"]
    scores = [note["score"] for note in response.json()["notes"]]
    assert scores[0] > scores[1]


def test_search_without_a_namespace_covers_only_the_tokens_grants(
    owner: Actor, user_kind_writer: Actor
) -> None:
    enable_note_search("user")
    save_note(NS, "shared word", id="alice")
    save_note("user:bob", "shared word", id="bob")
    assert ids(owner.get("/api/notes/search", {"kind": "user", "q": "shared"})) == ["alice"]
    everyone = user_kind_writer.get("/api/notes/search", {"kind": "user", "q": "shared"})
    assert sorted(ids(everyone)) == ["alice", "bob"]
    agents = make_actor(["agent:*"], ["read"])
    assert ids(agents.get("/api/notes/search", {"kind": "user", "q": "shared"})) == []


def test_search_fills_a_page_from_the_tokens_namespaces(owner: Actor) -> None:
    enable_note_search("user")
    for _ in range(80):  # better matches the owner may not see
        save_note("user:bob", "gamma gamma gamma")
    mine = [save_note(NS, f"gamma note {n} " + "pad " * n).uid for n in range(12)]
    response = owner.get("/api/notes/search", {"kind": "user", "q": "gamma", "limit": 10})
    assert ids(response) == mine[:10]


def test_search_in_a_namespace_needs_a_grant_on_it(owner: Actor, stranger: Actor) -> None:
    enable_note_search("user")
    save_note(NS, "shared word", id="alice")
    params = {"kind": "user", "q": "shared", "namespace": NS}
    assert ids(owner.get("/api/notes/search", params)) == ["alice"]
    assert stranger.get("/api/notes/search", params).status_code == 404


def test_search_honours_the_read_contract_and_status_filter(owner: Actor) -> None:
    enable_note_search("user")
    save_note(NS, "deploy monday", id="old")
    save_note(NS, "deploy tuesday", supersedes=["old"], id="new")
    save_note(NS, "deploy friday", status="pending", id="proposal")
    assert ids(owner.get("/api/notes/search", {"kind": "user", "q": "deploy"})) == ["new"]
    pending = owner.get("/api/notes/search", {"kind": "user", "q": "deploy", "status": "pending"})
    assert ids(pending) == ["proposal"]
    both = owner.get(
        "/api/notes/search", {"kind": "user", "q": "deploy", "include_superseded": "true"}
    )
    assert sorted(ids(both)) == ["new", "old"]


@pytest.mark.parametrize("query", [q for q in HOSTILE_QUERIES if "\ud800" not in q])
def test_hostile_queries_over_http_are_literal_and_never_500(owner: Actor, query: str) -> None:
    enable_note_search("user")
    save_note(NS, "café au lait, not near the station")
    response = owner.get("/api/notes/search", {"kind": "user", "q": query})
    assert response.status_code == 200, response.content
    assert isinstance(response.json()["notes"], list)


@pytest.mark.parametrize("query", ["", "   ", "%00", "%ED%A0%80", "%FF"])
def test_empty_and_undecodable_queries_over_http_return_nothing(owner: Actor, query: str) -> None:
    enable_note_search("user")
    save_note(NS, "anything")
    response = owner.get(f"/api/notes/search?kind=user&q={query}")
    assert response.status_code == 200
    assert response.json()["notes"] == []


@pytest.mark.parametrize(
    "params",
    [
        {"kind": "user"},
        {"q": "x"},
        {"kind": "planet", "q": "x"},
        {"kind": "user", "q": "x", "limit": "0"},
        {"kind": "user", "q": "x", "limit": "201"},
        {"kind": "user", "q": "x", "limit": "99999999999999999999999999999"},
        {"kind": "user", "q": "x", "limit": "ten"},
        {"kind": "user", "q": "x", "namespace": "user:a:b"},
        {"kind": "user", "q": "x", "namespace": "agent:bot"},
        {"kind": "user", "q": "x", "status": "approved"},
    ],
)
def test_search_with_bad_parameters_is_4xx(owner: Actor, params: dict[str, str]) -> None:
    enable_note_search("user")
    response = owner.get("/api/notes/search", params)
    assert 400 <= response.status_code < 500, response.content
