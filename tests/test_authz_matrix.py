"""Authorization matrix: every route of the OpenAPI schema x every kind of caller.

The routes come from /api/openapi.json, and every one of them must have an entry
in ROUTES (test_every_route_has_an_expectation): a new route without one fails
here. Each entry says which permission the route needs and how to call it on
user:alice's data; each caller then gets the answer its token deserves:

- no token, an unknown token, a revoked token: 401;
- a token on user:alice with read, write or approve only: 2xx with the needed
  permission, else 403 with a JSON message naming the missing permission;
- a token on user:bob only (every permission): 404 for alice's data, exactly as
  for data that does not exist;
- an admin token on every namespace: 2xx.

Every request runs in a savepoint that is rolled back, so each starts from the
same data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import transaction
from django.test import Client

from memories.models import Conflict, Extraction, Memory, MemoryStatus
from memories.write.ingest import message_ingest
from memories.write.services import create_thread, memory_create, set_fact
from notes.services import enable_note_search, save_note
from spaceduck.core.tokens import token_create
from spaceduck.models import ApiToken

pytestmark = pytest.mark.django_db

ALICE = "user:alice"
# Needs: a permission on alice's namespace ("admin": only admin tokens); "token" (any
# valid token); "public"; or "kind" (a grant on every user namespace, plus write).
NEEDS = ("public", "token", "read", "write", "approve", "admin", "kind")


@dataclass(frozen=True)
class Call:
    """One way to call a route: what it needs, and its query string and body."""

    need: str
    query: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | Callable[[dict[str, str]], dict[str, Any]] | None = None
    # How a caller without the namespace hears about it (bob): 404, or 200 for routes
    # whose answer is already limited to the caller's grants.
    stranger: int = 404


ROUTES: dict[tuple[str, str], list[Call]] = {
    ("GET", "/api/health"): [Call("public")],
    ("GET", "/api/tokens/me"): [Call("token", stranger=200)],
    ("GET", "/api/memories"): [Call("read", {"namespace": ALICE})],
    ("POST", "/api/memories"): [
        Call("write", body={"namespace": ALICE, "kind": "fact", "content": "Alice plays cello."})
    ],
    ("GET", "/api/memories/search"): [Call("read", {"namespace": ALICE, "q": "jazz"})],
    ("GET", "/api/memories/{memory_id}"): [Call("read")],
    ("DELETE", "/api/memories/{memory_id}"): [Call("write")],
    ("PATCH", "/api/memories/{memory_id}"): [
        Call("write", body={"title": "Music"}),
        # Approving a candidate is a reviewer's decision: approve alone is enough.
        Call("approve", body={"status": "active"}),
    ],
    ("GET", "/api/memories/{memory_id}/history"): [Call("read")],
    ("GET", "/api/facts"): [Call("read", {"namespace": ALICE})],
    ("GET", "/api/facts/{namespace}/{key}"): [Call("read")],
    ("PUT", "/api/facts/{namespace}/{key}"): [Call("write", body={"value": 2})],
    ("DELETE", "/api/facts/{namespace}/{key}"): [Call("write")],
    ("POST", "/api/threads"): [Call("write", body={"namespace": ALICE})],
    ("GET", "/api/threads"): [Call("read", {"namespace": ALICE})],
    ("GET", "/api/threads/{thread_id}"): [Call("read")],
    ("DELETE", "/api/threads/{thread_id}"): [Call("write")],
    ("GET", "/api/threads/{thread_id}/messages"): [Call("read")],
    ("POST", "/api/threads/{thread_id}/messages"): [
        Call("write", body={"role": "user", "content": "hello"})
    ],
    ("POST", "/api/threads/{thread_id}/messages/delete"): [Call("write", body={"ids": ["m-1"]})],
    ("POST", "/api/notes/search/{kind}/enable"): [Call("kind", stranger=403)],
    ("GET", "/api/notes/search"): [
        Call("read", {"kind": "user", "q": "worker", "namespace": ALICE}),
        # Without a namespace the search spans the caller's own grants.
        Call("read", {"kind": "user", "q": "worker"}, stranger=200),
    ],
    ("POST", "/api/notes"): [Call("write", body={"namespace": ALICE, "body": "A new note."})],
    ("GET", "/api/notes"): [Call("read", {"namespace": ALICE})],
    ("GET", "/api/notes/{note_id}"): [Call("read")],
    ("POST", "/api/notes/{note_id}/status"): [
        # Deciding a note (accepting, rejecting, reopening) needs approve, and only it.
        Call("approve", body={"status": "rejected"}),
    ],
    ("GET", "/api/extractions"): [
        Call("read", {"namespace": ALICE}),
        # Without a namespace the list spans the caller's own grants.
        Call("read", stranger=200),
    ],
    ("GET", "/api/extractions/{extraction_id}"): [Call("read")],
    # The fixture's extraction has failed, so retrying it is allowed.
    ("POST", "/api/extractions/{extraction_id}/retry"): [Call("write")],
    ("DELETE", "/api/skills/{skill_id}/memories"): [Call("write", stranger=200)],
    ("GET", "/api/conflicts"): [Call("read", {"namespace": ALICE})],
    ("DELETE", "/api/namespaces/{namespace}"): [Call("admin")],
    # Deciding a conflict is a reviewer's decision, as approving a candidate is.
    ("POST", "/api/conflicts/{conflict_id}/resolve"): [
        Call("approve", body={"decision": "keep_both"})
    ],
    ("POST", "/api/context"): [
        Call("read", body=lambda ids: {"namespace": ALICE, "thread_id": ids["thread_id"]})
    ],
}


@dataclass(frozen=True)
class Principal:
    name: str
    namespaces: list[str] | None = None  # None: no valid token
    permissions: list[str] = field(default_factory=list)
    header: str | None = None  # for the callers without a valid token


PRINCIPALS = [
    Principal("none"),
    Principal("unknown", header="Bearer sd_not-a-token-anyone-was-given"),
    Principal("revoked", ["user:alice"], ["read", "write", "approve"]),
    Principal("read-only", ["user:alice"], ["read"]),
    Principal("write-only", ["user:alice"], ["write"]),
    Principal("approve-only", ["user:alice"], ["approve"]),
    Principal("other-namespace", ["user:bob"], ["read", "write", "approve"]),
    Principal("admin", ["*"], ["admin"]),
]


def expected(principal: Principal, call: Call) -> tuple[int | str, str | None]:
    """(status or "2xx", a word the error message must hold)."""
    if call.need == "public":
        return "2xx", None
    if principal.name in ("none", "unknown", "revoked"):
        return 401, "Bearer"
    if principal.name == "admin" or call.need == "token":
        return "2xx", None
    if call.need == "kind":
        return 403, "'user:*'"
    if principal.name == "other-namespace":
        return ("2xx", None) if call.stranger == 200 else (call.stranger, "not found")
    held = principal.permissions
    return ("2xx", None) if call.need in held else (403, f"'{call.need}'")


@pytest.fixture
def ids() -> dict[str, str]:
    """user:alice's data; the path parameters point at it."""
    thread = create_thread(ALICE, title="Plans")
    ingested = message_ingest(thread.id, "user", "I live in Lisbon.", id="m-1")
    memory = memory_create(
        namespace=ALICE,
        kind="fact",
        content="Alice likes jazz.",
        actor="test",
        status=MemoryStatus.CANDIDATE,
    )
    Memory.objects.filter(pk=memory.pk).update(source_skill_id="skill-1")
    held = memory_create(namespace=ALICE, kind="fact", content="Alice hates jazz.", actor="test")
    conflict = Conflict.objects.create(namespace=ALICE, old=held, new=memory, reason="test")
    set_fact(ALICE, "prefs/theme", "dark")
    enable_note_search("user")
    save_note(ALICE, "Restart the worker when it hangs.", id="note-1")
    assert ingested.extraction is not None
    Extraction.objects.filter(pk=ingested.extraction.pk).update(status="failed")
    return {
        "memory_id": str(memory.pk),
        "conflict_id": str(conflict.pk),
        "extraction_id": str(ingested.extraction.pk),
        "thread_id": thread.id,
        "namespace": ALICE,
        "key": "prefs/theme",
        "note_id": "note-1",
        "skill_id": "skill-1",
        "kind": "user",
    }


def authorization(principal: Principal) -> dict[str, str]:
    if principal.namespaces is None:
        return {"Authorization": principal.header} if principal.header else {}
    created = token_create(
        name=principal.name, namespaces=principal.namespaces, permissions=principal.permissions
    )
    if principal.name == "revoked":
        ApiToken.objects.get(pk=created.token.pk).revoke()
    return {"Authorization": f"Bearer {created.secret}"}


def request(
    client: Client, method: str, path: str, call: Call, ids: dict[str, str], headers: Any
) -> Any:
    url = path.format(**ids)
    body = call.body(ids) if callable(call.body) else call.body
    if method == "GET":
        return client.get(url, call.query, headers=headers)
    if call.query:
        url += "?" + "&".join(f"{name}={value}" for name, value in call.query.items())
    send = getattr(client, method.lower())
    if body is None:
        return send(url, headers=headers)
    return send(url, body, content_type="application/json", headers=headers)


def schema_routes(client: Client) -> set[tuple[str, str]]:
    schema = client.get("/api/openapi.json").json()
    return {(method.upper(), path) for path, item in schema["paths"].items() for method in item}


def test_every_route_has_an_expectation(client: Client) -> None:
    routes = schema_routes(client)
    missing = sorted(routes - set(ROUTES))
    assert not missing, f"routes without an entry in ROUTES: {missing}"
    assert not sorted(set(ROUTES) - routes), "ROUTES names routes the API no longer has"
    assert all(call.need in NEEDS for calls in ROUTES.values() for call in calls)


@pytest.mark.parametrize("principal", PRINCIPALS, ids=lambda principal: principal.name)
def test_every_route_answers_each_caller_as_its_token_deserves(
    principal: Principal, ids: dict[str, str]
) -> None:
    client = Client()
    headers = authorization(principal)
    wrong: list[str] = []
    for (method, path), calls in sorted(ROUTES.items()):
        for call in calls:
            with transaction.atomic():
                response = request(client, method, path, call, ids, headers)
                transaction.set_rollback(True)  # the next request sees the same data
            status, word = expected(principal, call)
            got = response.status_code
            ok = 200 <= got < 300 if status == "2xx" else got == status
            if ok and got >= 400:
                detail = response.json().get("detail", "")
                ok = word is None or word in detail
            if not ok:
                wrong.append(f"{method} {path} {call.need}: {got} {response.content[:160]!r}")
    assert not wrong, f"{principal.name} (expected per expected()):\n" + "\n".join(wrong)


def test_a_stranger_changes_nothing_of_alices(ids: dict[str, str]) -> None:
    """The routes bob may call with alice's ids (a 200 limited to bob's grants)."""
    bob = Principal("other-namespace", ["user:bob"], ["read", "write", "approve"])
    client = Client()
    headers = authorization(bob)
    purge = client.delete(f"/api/skills/{ids['skill_id']}/memories", headers=headers)
    assert purge.json() == {"deleted": 0}
    assert Memory.objects.filter(pk=ids["memory_id"]).exists()
    search = client.get("/api/notes/search", {"kind": "user", "q": "worker"}, headers=headers)
    assert search.json() == {"notes": []}
    listed = client.get("/api/extractions", headers=headers)
    assert listed.json() == {"extractions": [], "next": None}
