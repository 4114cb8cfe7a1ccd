"""Every /api/ error is JSON with a message; the inputs that used to answer 500 answer 4xx.

The issue's four causes of HTML 500s, each a regression test here: a lone
surrogate in any text field, datetimes out of range, integers beyond 64 bits,
and query words the keyword index could not look up. Then the error shapes
(400, 401, 403, 404 incl. unknown routes, 405, 409, 422, 500), the `kind:*`
namespace, and what the OpenAPI schema declares.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from unicodedata import decomposition

import pytest
from django.test import Client

from memories.models import Extraction, Fact, Memory, Message, Thread
from memories.write.services import create_thread, memory_create, save_message, set_fact
from notes.models import Note
from spaceduck import store
from spaceduck.core.errors import InvalidInput
from spaceduck.core.fts import index_words
from spaceduck.core.limits import MAX_JSON_DEPTH, MAX_SQL_INT
from tests.conftest import Actor, make_actor

pytestmark = pytest.mark.django_db

SURROGATE = "\\ud800"  # as JSON text: json.loads makes it a lone surrogate
TOO_BIG = MAX_SQL_INT + 1  # 9223372036854775808


@pytest.fixture
def admin(db: None) -> Actor:
    return make_actor(["*"], ["read", "write", "approve", "admin"], name="admin")


@pytest.fixture
def thread() -> Thread:
    return create_thread("user:alice", title="Planning")


@pytest.fixture
def memory() -> Memory:
    return memory_create(
        namespace="user:alice", kind="fact", content="Alice likes jazz music.", actor="test"
    )


def send(actor: Actor, method: str, path: str, raw: str) -> Any:
    """A request with ``raw`` as its JSON body, exactly as written."""
    call = getattr(actor.client, method)
    return call(path, raw, content_type="application/json", headers=actor._auth())


def assert_json_error(response: Any, status: int, *words: str) -> dict[str, Any]:
    """A JSON error of ``status`` whose message holds ``words``, encodable as strict UTF-8."""
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    text = response.content.decode("utf-8")  # strict: raises on anything undecodable
    body = json.loads(text)
    assert isinstance(body["detail"], str)
    assert body["detail"]
    body_text = json.dumps(body, ensure_ascii=False)
    body_text.encode("utf-8")  # no lone surrogate was echoed back
    for word in words:
        assert word in body["detail"], body["detail"]
    return body


# --- 1. Lone surrogates: one rule (422) for every text field, at the edge ---------------

MEMORY = '{"namespace": "user:alice", "kind": "fact", "content": "Alice likes jazz music a lot."'


@pytest.mark.parametrize(
    ("field", "raw"),
    [
        ("content", MEMORY.replace("jazz", SURROGATE) + "}"),
        ("title", MEMORY + f', "title": "{SURROGATE}"}}'),
        ("task_id", MEMORY + f', "task_id": "t{SURROGATE}"}}'),
        ("scope_id", MEMORY + f', "scope": "thread", "scope_id": "{SURROGATE}"}}'),
        ("namespace", MEMORY.replace("user:alice", f"user:{SURROGATE}") + "}"),
        ("tags", MEMORY + f', "tags": ["ok", "{SURROGATE}"]}}'),
    ],
)
def test_a_lone_surrogate_in_a_memory_is_422_and_writes_nothing(
    admin: Actor, field: str, raw: str
) -> None:
    response = send(admin, "post", "/api/memories", raw)
    assert_json_error(response, 422, field, "lone surrogate")
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    ("field", "raw"),
    [
        ("title", f'{{"namespace": "user:alice", "title": "{SURROGATE}"}}'),
        ("namespace", f'{{"namespace": "user:{SURROGATE}"}}'),
    ],
)
def test_a_lone_surrogate_in_a_thread_is_422(admin: Actor, field: str, raw: str) -> None:
    assert_json_error(send(admin, "post", "/api/threads", raw), 422, field)
    assert not Thread.objects.exists()


@pytest.mark.parametrize(
    ("field", "raw"),
    [
        ("id", f'{{"role": "user", "content": "hi", "id": "{SURROGATE}"}}'),
        ("content", f'{{"role": "user", "content": "hi {SURROGATE}"}}'),
        ("content", f'{{"role": "user", "content": {{"text": ["{SURROGATE}"]}}}}'),
        ("content", f'{{"role": "user", "content": {{"{SURROGATE}": 1}}}}'),
        (
            "provenance",
            f'{{"role": "user", "content": "hi", "provenance": {{"a": "{SURROGATE}"}}}}',
        ),
    ],
)
def test_a_lone_surrogate_in_a_message_is_422(
    admin: Actor, thread: Thread, field: str, raw: str
) -> None:
    response = send(admin, "post", f"/api/threads/{thread.id}/messages", raw)
    assert_json_error(response, 422, field)
    assert not Message.objects.exists()
    assert not Extraction.objects.exists()


@pytest.mark.parametrize("field", ["query", "project_id"])
def test_a_lone_surrogate_in_a_context_request_is_422(
    admin: Actor, thread: Thread, field: str
) -> None:
    raw = f'{{"namespace": "user:alice", "thread_id": "{thread.id}", "{field}": "{SURROGATE}"}}'
    assert_json_error(send(admin, "post", "/api/context", raw), 422, field)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", f'"{SURROGATE}"'),
        ("content", f'"The user likes {SURROGATE} a lot."'),
        ("summary", f'"{SURROGATE}"'),
        ("scope_id", f'"{SURROGATE}"'),
        ("tags", f'["{SURROGATE}"]'),
    ],
)
def test_a_lone_surrogate_in_a_memory_edit_is_422_and_changes_nothing(
    admin: Actor, memory: Memory, field: str, value: str
) -> None:
    response = send(admin, "patch", f"/api/memories/{memory.pk}", f'{{"{field}": {value}}}')
    assert_json_error(response, 422, field)
    memory.refresh_from_db()
    assert memory.content == "Alice likes jazz music."
    assert memory.title == ""


@pytest.mark.parametrize(
    ("method", "path", "raw"),
    [
        ("put", "/api/facts/user:alice/k", f'{{"value": "{SURROGATE}"}}'),
        ("post", "/api/notes", f'{{"namespace": "user:alice", "body": "{SURROGATE}"}}'),
        ("post", "/api/notes", f'{{"namespace": "user:alice", "body": "x", "id": "{SURROGATE}"}}'),
    ],
)
def test_a_lone_surrogate_in_facts_and_notes_is_422(
    admin: Actor, method: str, path: str, raw: str
) -> None:
    assert_json_error(send(admin, method, path, raw), 422, "lone surrogate")
    assert not Fact.objects.exists()
    assert not Note.objects.exists()


def test_the_python_api_refuses_lone_surrogates_with_the_same_rule(thread: Thread) -> None:
    for call in (
        lambda: store.create_thread("user:alice", title="\ud800"),
        lambda: store.create_thread("user:\ud800"),
        lambda: store.save_message(thread.id, "user", "hi \ud800"),
        lambda: store.save_message(thread.id, "user", "hi", id="\ud800"),
        lambda: store.set_fact("user:alice", "k\ud800", 1),
        lambda: store.set_fact("user:alice", "k", {"\ud800": 1}),
        lambda: store.save_note("user:alice", "\ud800"),
    ):
        with pytest.raises(InvalidInput):
            call()
    assert not Message.objects.exists()
    assert not Fact.objects.exists()


NUL = "\\u0000"  # as JSON text: json.loads makes it U+0000


@pytest.mark.parametrize(
    ("method", "path", "raw", "field"),
    [
        ("post", "/api/memories", MEMORY.replace("jazz", NUL) + "}", "content"),
        ("post", "/api/memories", MEMORY + f', "tags": ["ok", "a{NUL}b"]}}', "tags"),
        ("post", "/api/threads", f'{{"namespace": "user:alice", "title": "a{NUL}"}}', "title"),
        ("put", "/api/facts/user:alice/k", f'{{"value": {{"a": "b{NUL}"}}}}', "value"),
        ("put", "/api/facts/user:alice/k", f'{{"value": {{"a{NUL}": 1}}}}', "key"),
    ],
)
def test_a_nul_character_is_422_and_writes_nothing(
    admin: Actor, method: str, path: str, raw: str, field: str
) -> None:
    # PostgreSQL's text and JSON cannot hold U+0000; both databases refuse it alike.
    assert_json_error(send(admin, method, path, raw), 422, field)
    assert not Memory.objects.exists()
    assert not Fact.objects.exists()
    assert not Thread.objects.exists()


def test_a_nul_character_in_a_message_is_422(admin: Actor, thread: Thread) -> None:
    for raw in (
        f'{{"role": "user", "content": "hi {NUL} there"}}',
        f'{{"role": "user", "content": {{"text": ["{NUL}"]}}}}',
        f'{{"role": "user", "content": "hi", "provenance": {{"a": "{NUL}"}}}}',
    ):
        response = send(admin, "post", f"/api/threads/{thread.id}/messages", raw)
        assert_json_error(response, 422, "NUL" if "text" not in raw else "content")
    assert not Message.objects.exists()
    assert not Extraction.objects.exists()


def test_the_python_api_refuses_nul_characters_too(thread: Thread) -> None:
    for call in (
        lambda: store.save_message(thread.id, "user", "hi \x00"),
        lambda: store.set_fact("user:alice", "k", {"a": "\x00"}),
    ):
        with pytest.raises(InvalidInput):
            call()
    assert not Message.objects.exists()
    assert not Fact.objects.exists()


# --- 2. Datetimes out of range -----------------------------------------------------------

EARLY = "0001-01-01T00:00:00+14:00"  # before year 1 in UTC
LATE = "9999-12-31T23:59:59-14:00"  # after year 9999 in UTC


@pytest.mark.parametrize("value", [EARLY, LATE])
def test_a_message_dated_out_of_range_is_422(admin: Actor, thread: Thread, value: str) -> None:
    body = {"role": "user", "content": "hi", "created_at": value}
    response = admin.post(f"/api/threads/{thread.id}/messages", body)
    assert_json_error(response, 422, "created_at", "0001-01-03", "9999-12-29")
    assert not Message.objects.exists()


@pytest.mark.parametrize("value", [EARLY, LATE])
def test_a_memory_dated_out_of_range_is_422(admin: Actor, value: str) -> None:
    body = {
        "namespace": "user:alice",
        "kind": "episode",
        "content": "Alice moved to Paris last spring.",
        "occurred_at": value,
    }
    assert_json_error(admin.post("/api/memories", body), 422, "occurred_at")
    assert not Memory.objects.exists()


@pytest.mark.parametrize("field", ["occurred_at", "expires_at"])
@pytest.mark.parametrize("value", [EARLY, LATE])
def test_a_memory_edit_out_of_range_is_422(
    admin: Actor, memory: Memory, field: str, value: str
) -> None:
    assert_json_error(admin.patch(f"/api/memories/{memory.pk}", {field: value}), 422, field)


@pytest.mark.parametrize("value", ["2024-05-01", "2024-05-01T12:00:00", "1714564800", "May 1st"])
def test_a_datetime_must_be_rfc_3339_with_an_offset(
    admin: Actor, memory: Memory, value: str
) -> None:
    response = admin.patch(f"/api/memories/{memory.pk}", {"expires_at": value})
    assert_json_error(response, 422, "expires_at", "RFC 3339")


def test_the_edges_of_the_range_are_accepted(admin: Actor, thread: Thread) -> None:
    # The API states its range on the date as written (the schema's pattern says the
    # same), so any offset on the first and last day stays storable in UTC.
    for value in ("0001-01-03T00:00:00+23:59", "9999-12-29T23:59:59.999999-23:59"):
        body = {"role": "user", "content": "hi", "created_at": value}
        assert admin.post(f"/api/threads/{thread.id}/messages", body).status_code == 201
    # An append after a message dated at the end of the range still finds a place.
    appended = admin.post(f"/api/threads/{thread.id}/messages", {"role": "user", "content": "x"})
    assert appended.status_code == 201
    assert appended.json()["created_at"].startswith("9999-12-30")


@pytest.mark.parametrize("value", ["0001-01-02T12:00:00Z", "9999-12-30T00:00:00Z"])
def test_the_day_inside_each_edge_is_refused_as_the_schema_says(
    admin: Actor, thread: Thread, value: str
) -> None:
    body = {"role": "user", "content": "hi", "created_at": value}
    response = admin.post(f"/api/threads/{thread.id}/messages", body)
    assert_json_error(response, 422, "created_at", "0001-01-03", "9999-12-29")


def test_the_python_api_refuses_dates_out_of_range(thread: Thread) -> None:
    from datetime import datetime, timedelta, timezone

    early = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14)))
    with pytest.raises(InvalidInput, match="created_at"):
        store.save_message(thread.id, "user", "hi", created_at=early)


# --- 3. Integers beyond 64 bits ----------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        f"/api/memories?namespace=user:alice&limit={TOO_BIG}",
        f"/api/memories/{TOO_BIG}",
        f"/api/memories/{TOO_BIG}/history",
        f"/api/extractions/{TOO_BIG}",
        f"/api/notes/search?kind=user&q=x&limit={TOO_BIG}",
        f"/api/memories/search?namespace=user:alice&q=x&topK={TOO_BIG}",
    ],
)
def test_a_huge_integer_in_the_url_is_422(admin: Actor, path: str) -> None:
    assert_json_error(admin.get(path), 422)


def test_a_huge_message_limit_is_422(admin: Actor, thread: Thread) -> None:
    response = admin.get(f"/api/threads/{thread.id}/messages", {"limit": TOO_BIG})
    assert_json_error(response, 422, "limit")


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/api/memories",
            {
                "namespace": "user:alice",
                "kind": "fact",
                "content": "Alice likes jazz music.",
                "task_id": "t1",
                "max_memory_writes": TOO_BIG,
            },
        ),
        ("/api/facts/user:alice/k", {"value": 1, "ttl_ms": TOO_BIG}),
    ],
)
def test_a_huge_integer_in_a_body_is_422(admin: Actor, path: str, body: dict[str, Any]) -> None:
    call = admin.put if path.startswith("/api/facts") else admin.post
    field = "max_memory_writes" if "max_memory_writes" in body else "ttl_ms"
    assert_json_error(call(path, body), 422, field)
    assert not Memory.objects.exists()
    assert not Fact.objects.exists()


def test_a_huge_task_budget_on_a_message_is_422(admin: Actor, thread: Thread) -> None:
    body = {"role": "user", "content": "hi", "max_memory_writes": TOO_BIG}
    response = admin.post(f"/api/threads/{thread.id}/messages", body)
    assert_json_error(response, 422, "max_memory_writes")
    assert not Message.objects.exists()


def test_a_huge_context_budget_is_422(admin: Actor, thread: Thread) -> None:
    body = {"namespace": "user:alice", "thread_id": thread.id, "memory_budget": TOO_BIG}
    assert_json_error(admin.post("/api/context", body), 422, "memory_budget")


def test_the_python_api_refuses_a_huge_limit(thread: Thread) -> None:
    with pytest.raises(InvalidInput, match="limit"):
        store.list_messages(thread.id, limit=TOO_BIG)


def test_an_integral_float_counts_as_an_integer(admin: Actor) -> None:
    # JSON Schema says 60000.0 is an integer; so does the API.
    response = admin.put("/api/facts/user:alice/k", {"value": 1, "ttl_ms": 60000.0})
    assert response.status_code == 200
    assert response.json()["ttl_ms"] == 60000
    assert_json_error(admin.put("/api/facts/user:alice/k", {"value": 1, "ttl_ms": 0.5}), 422)


# --- 4. Query words the keyword index could not look up ------------------------------------

# NFKD turns caseless letters into capitals (MATHEMATICAL BOLD ITALIC CAPITAL T -> "T",
# BLACK-LETTER CAPITAL H -> "H"): such a query word was not an index word, and
# keyword_index.phrase raised. Escapes, as these letters look like plain ones.
ODD_QUERIES = [
    "\U0001d47b\U0001d489\U0001d486 \U0001d492\U0001d496\U0001d48a\U0001d484\U0001d48c",
    "\u210cello \u212dafe\u0301",
    "\u24b6\u24d1\u24d2 \uff21\uff22\uff23",
    "\u01c5emal \ufb01re",
]


@pytest.mark.parametrize("query", ODD_QUERIES)
def test_odd_letters_in_a_recall_query_are_searched_not_a_500(
    admin: Actor, memory: Memory, query: str
) -> None:
    memory_create(namespace="user:alice", kind="fact", content=f"Notes: {query}.", actor="t")
    response = admin.get("/api/memories/search", {"namespace": "user:alice", "q": query})
    assert response.status_code == 200, response.content
    assert response.json()["memories"]


@pytest.mark.parametrize("query", ODD_QUERIES)
def test_odd_letters_in_a_context_query_are_searched_not_a_500(
    admin: Actor, thread: Thread, query: str
) -> None:
    save_message(thread.id, "user", query)
    body = {"namespace": "user:alice", "thread_id": thread.id}
    assert admin.post("/api/context", body).status_code == 200
    assert admin.post("/api/context", {**body, "query": query}).status_code == 200


def test_every_index_word_is_its_own_index_word() -> None:
    # What keyword_index.phrase relies on, for every code point (and a word around it).
    for code in range(0x80, 0x110000):
        char = chr(code)
        if 0xD800 <= code <= 0xDFFF or not (decomposition(char) or char.casefold() != char):
            continue  # the others are their own index word already, or none
        for word in index_words(f"a{char}b"):
            assert index_words(word) == [word], hex(code)


# --- Error shapes: every /api/ error is JSON with a message ---------------------------------


def test_malformed_json_is_400(admin: Actor) -> None:
    for raw in ("not json", "{", '{"a": NaN}', '{"a": Infinity}'):
        assert_json_error(send(admin, "post", "/api/notes", raw), 400, "not valid JSON")
    body = b'{"namespace": "user:alice", "body": "\xff"}'
    assert_json_error(send(admin, "post", "/api/notes", body), 400, "not valid JSON")


def test_json_nested_too_deep_is_422(admin: Actor, thread: Thread) -> None:
    content = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    raw = f'{{"role": "user", "content": {content}}}'
    response = send(admin, "post", f"/api/threads/{thread.id}/messages", raw)
    assert_json_error(response, 422, "nested deeper")
    very_deep = "[" * 100_000 + "]" * 100_000  # beyond Python's own recursion limit
    response = send(admin, "post", f"/api/threads/{thread.id}/messages", very_deep)
    assert 400 <= response.status_code < 500
    assert not Message.objects.exists()


def test_a_missing_or_unknown_token_is_401_json(client: Client) -> None:
    assert_json_error(client.get("/api/memories"), 401, "Bearer")
    response = client.get("/api/tokens/me", headers={"Authorization": "Bearer sd_nope"})
    assert_json_error(response, 401, "Bearer")


def test_a_missing_permission_is_403_naming_it(memory: Memory) -> None:
    reader = make_actor(["user:alice"], ["read"])
    response = reader.delete(f"/api/memories/{memory.pk}")
    assert_json_error(response, 403, "'write'", "it has: read")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/nope"),
        ("get", "/api/"),
        ("get", "/api/memories/abc"),
        ("get", "/api/memories/"),
        ("post", "/api/memories/1/nothing"),
        ("delete", "/api/threads/"),
        ("patch", "/api/notes/a/b/c"),
    ],
)
def test_an_unknown_route_is_404_json(admin: Actor, method: str, path: str) -> None:
    assert_json_error(getattr(admin, method)(path), 404, "no API route")


def test_an_unknown_route_is_404_json_without_a_token_too(client: Client) -> None:
    assert_json_error(client.post("/api/nope", {}), 404, "no API route")


def test_a_known_route_with_another_method_is_405_json(admin: Actor) -> None:
    response = admin.put("/api/tokens/me", {})
    assert_json_error(response, 405, "PUT", "GET")
    assert response["Allow"] == "GET"
    assert_json_error(admin.put("/api/threads", {}), 405, "allowed")


def test_a_conflict_is_409_json(admin: Actor, thread: Thread) -> None:
    other = create_thread("user:alice")
    save_message(other.id, "user", "hi", id="m-1")
    response = admin.post(
        f"/api/threads/{thread.id}/messages", {"role": "user", "content": "x", "id": "m-1"}
    )
    assert_json_error(response, 409, "another thread")


def test_request_validation_is_422_with_one_entry_per_field(admin: Actor, thread: Thread) -> None:
    response = admin.post(f"/api/threads/{thread.id}/messages", {"content": None, "extra": 1})
    body = assert_json_error(response, 422, "body.role", "body.content", "body.extra")
    assert {tuple(error["loc"]) for error in body["errors"]} >= {
        ("body", "role"),
        ("body", "content"),
        ("body", "extra"),
    }


def test_an_unexpected_error_is_a_logged_500_json(
    admin: Actor, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr("memories.store.selectors.list_facts", boom)
    client = Client(raise_request_exception=False)
    with caplog.at_level(logging.ERROR, logger="spaceduck.ops.api"):
        response = client.get("/api/facts", {"namespace": "user:alice"}, headers=admin._auth())
    body = assert_json_error(response, 500, "internal error")
    assert "fire" not in body["detail"]  # details stay in the log
    assert any("the disk is on fire" in str(record.exc_info) for record in caplog.records)


# --- `kind:*` is a grant, not a namespace ---------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("put", "/api/facts/user:*/k", {"value": 1}),
        ("get", "/api/facts/user:*/k", None),
        ("get", "/api/facts?namespace=agent:*", None),
        ("post", "/api/threads", {"namespace": "user:*"}),
        ("post", "/api/notes", {"namespace": "workflow:*", "body": "x"}),
        (
            "post",
            "/api/memories",
            {"namespace": "global:*", "kind": "fact", "content": "Everyone likes jazz."},
        ),
        ("get", "/api/memories?namespace=user:*", None),
    ],
)
def test_the_wildcard_grant_is_not_a_namespace(
    admin: Actor, method: str, path: str, body: dict[str, Any] | None
) -> None:
    call = getattr(admin, method)
    response = call(path, body) if body is not None else call(path)
    assert_json_error(response, 422, "not a namespace")
    assert not Fact.objects.exists()
    assert not Thread.objects.exists()


def test_the_python_api_refuses_the_wildcard_namespace_too() -> None:
    with pytest.raises(InvalidInput, match="not a namespace"):
        set_fact("user:*", "k", 1)
    # An id that merely contains '*' is an ordinary namespace.
    assert set_fact("user:*bob", "k", 1).namespace == "user:*bob"


# --- What the OpenAPI schema declares ------------------------------------------------------


@pytest.fixture
def openapi(client: Client) -> dict[str, Any]:
    return client.get("/api/openapi.json").json()


def operations(openapi: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, item in openapi["paths"].items()
        for method, operation in item.items()
    ]


def test_every_operation_declares_its_errors_as_json(openapi: dict[str, Any]) -> None:
    error = {"$ref": "#/components/schemas/ErrorOut"}
    for method, path, operation in operations(openapi):
        if path == "/api/health":
            continue  # public, answers its own report
        responses = operation["responses"]
        assert "401" in responses, (method, path)
        for code, response in responses.items():
            if int(code) >= 400:
                assert response["content"]["application/json"]["schema"] == error, (method, path)
        has_body = "requestBody" in operation
        has_params = bool(operation.get("parameters")) or has_body
        assert ("422" in responses) == has_params, (method, path)
        assert ({"400", "413"} <= set(responses)) == has_body, (method, path)


def test_the_schema_says_the_real_constraints(openapi: dict[str, Any]) -> None:
    schemas = openapi["components"]["schemas"]
    content = schemas["MessageIn"]["properties"]["content"]
    assert {"type": "null"} not in content["anyOf"]
    assert "content" in schemas["MessageIn"]["required"]
    namespace = schemas["ThreadIn"]["properties"]["namespace"]
    assert namespace["maxLength"] == 255
    assert "pattern" in namespace
    memory = schemas["MemoryIn"]["properties"]
    assert memory["content"]["maxLength"] == 1000
    assert memory["title"]["maxLength"] == 200
    assert memory["tags"]["maxItems"] == 20
    assert schemas["NoteIn"]["properties"]["body"]["maxLength"] == 65536
    assert schemas["ErrorOut"]["required"] == ["detail"]
