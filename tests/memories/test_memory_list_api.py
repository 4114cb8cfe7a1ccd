"""GET /api/memories: namespace default, filters, their 422s, limits and order."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import Memory
from memories.store.selectors import parse_choices
from memories.write.services import memory_create
from spaceduck.core.errors import InvalidInput
from tests.conftest import Actor, make_actor

pytestmark = pytest.mark.django_db


def remember(content: str, namespace: str = "user:alice", **fields: object) -> Memory:
    return memory_create(
        namespace=namespace,
        kind=str(fields.pop("kind", "fact")),
        content=content,
        actor="test",
        **fields,  # type: ignore[arg-type]
    )


def contents(response) -> list[str]:  # type: ignore[no-untyped-def]
    assert response.status_code == 200, response.content
    return [m["content"] for m in response.json()["memories"]]


def test_namespace_defaults_to_the_tokens_only_grant(owner: Actor) -> None:
    remember("Alice likes jazz.")
    remember("Bob likes polka.", namespace="user:bob")
    assert contents(owner.get("/api/memories")) == ["Alice likes jazz."]


def test_namespace_is_required_when_the_token_has_several_grants() -> None:
    remember("Alice likes jazz.")
    both = make_actor(["user:alice", "user:bob"], ["read"], name="both")
    response = both.get("/api/memories")
    assert response.status_code == 422
    assert "namespace is required" in response.json()["detail"]
    assert "user:alice, user:bob" in response.json()["detail"]
    assert contents(both.get("/api/memories", {"namespace": "user:alice"})) == ["Alice likes jazz."]


@pytest.mark.parametrize("grant", ["user:*", "*"])
def test_a_wildcard_grant_counts_as_several_namespaces(grant: str) -> None:
    remember("Alice likes jazz.")
    users = make_actor([grant], ["read"], name="users")
    assert users.get("/api/memories").status_code == 422
    assert contents(users.get("/api/memories", {"namespace": "user:alice"})) == [
        "Alice likes jazz."
    ]


def test_a_stranger_gets_404_for_someone_elses_namespace(stranger: Actor) -> None:
    remember("Alice likes jazz.")
    response = stranger.get("/api/memories", {"namespace": "user:alice"})
    assert response.status_code == 404
    assert contents(stranger.get("/api/memories")) == []  # defaults to its own user:bob


def test_it_filters_by_kind(owner: Actor) -> None:
    remember("Alice likes jazz.", kind="fact")
    remember("Alice went to Lisbon in May.", kind="episode")
    remember("Deploy with make release.", kind="procedure")
    assert contents(owner.get("/api/memories", {"kinds": "episode"})) == [
        "Alice went to Lisbon in May."
    ]
    both = contents(owner.get("/api/memories", {"kinds": "fact, procedure"}))
    assert sorted(both) == ["Alice likes jazz.", "Deploy with make release."]


def test_it_filters_by_status(owner: Actor) -> None:
    remember("Alice likes jazz.")
    remember("Alice may adopt a cat.", status="candidate")
    remember("Alice lived in Oslo.", status="stale")
    assert contents(owner.get("/api/memories", {"status": "candidate"})) == [
        "Alice may adopt a cat."
    ]
    live = contents(owner.get("/api/memories", {"status": "active,stale"}))
    assert sorted(live) == ["Alice likes jazz.", "Alice lived in Oslo."]


def test_it_filters_by_scope(owner: Actor) -> None:
    remember("Alice likes jazz.", scope="global")
    remember("The repo uses tabs.", scope="project", scope_id="repo")
    remember("We are debugging the login.", scope="thread", scope_id="t1")
    assert contents(owner.get("/api/memories", {"scope": "project"})) == ["The repo uses tabs."]
    assert contents(owner.get("/api/memories", {"scope": "thread"})) == [
        "We are debugging the login."
    ]


def test_filters_combine(owner: Actor) -> None:
    remember("Alice likes jazz.", scope="project", scope_id="repo")
    remember("Alice went to Lisbon.", kind="episode", scope="project", scope_id="repo")
    remember("Alice likes tea.", scope="project", scope_id="repo", status="archived")
    query = {"kinds": "fact", "status": "active", "scope": "project"}
    assert contents(owner.get("/api/memories", query)) == ["Alice likes jazz."]


@pytest.mark.parametrize(
    ("param", "value", "allowed"),
    [
        ("kinds", "fact,opinion", "fact, episode, procedure"),
        ("status", "deleted", "candidate, active, superseded, stale, archived"),
        ("scope", "session", "global, project, thread"),
    ],
)
def test_an_unknown_filter_value_is_422_naming_the_allowed_values(
    owner: Actor, param: str, value: str, allowed: str
) -> None:
    remember("Alice likes jazz.")
    response = owner.get("/api/memories", {param: value})
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert value.split(",")[-1] in detail
    assert f"allowed: {allowed}" in detail


@pytest.mark.parametrize("limit", ["0", "-1", "1001", "ten"])
def test_a_limit_outside_1_to_1000_is_422(owner: Actor, limit: str) -> None:
    assert owner.get("/api/memories", {"limit": limit}).status_code == 422


def test_limit_bounds_are_inclusive_and_cap_the_result(owner: Actor) -> None:
    remember("Alice likes jazz.")
    remember("Alice likes tea.")
    assert len(contents(owner.get("/api/memories", {"limit": "1"}))) == 1
    assert len(contents(owner.get("/api/memories", {"limit": "1000"}))) == 2


def test_the_default_limit_is_200(owner: Actor) -> None:
    Memory.objects.bulk_create(
        Memory(namespace="user:alice", kind="fact", content=f"fact {i}", content_hash=str(i))
        for i in range(201)
    )
    assert len(contents(owner.get("/api/memories"))) == 200


def test_it_lists_newest_updated_at_first(owner: Actor) -> None:
    now = timezone.now()
    for days_ago, content in [(3, "oldest"), (1, "newest"), (2, "middle")]:
        memory = remember(content)
        Memory.objects.filter(pk=memory.pk).update(updated_at=now - timedelta(days=days_ago))
    assert contents(owner.get("/api/memories")) == ["newest", "middle", "oldest"]


def test_parse_choices_keeps_order_and_drops_blanks_and_repeats() -> None:
    allowed = ["a", "b", "c"]
    assert parse_choices(None, allowed, "letter") == []
    assert parse_choices("", allowed, "letter") == []
    assert parse_choices(" c, a,,c ", allowed, "letter") == ["c", "a"]
    with pytest.raises(InvalidInput, match="unknown letter 'd'; allowed: a, b, c"):
        parse_choices("a,d", allowed, "letter")
