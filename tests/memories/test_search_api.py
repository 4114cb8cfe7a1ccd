"""GET /api/memories/search: the recall contract over HTTP."""

from __future__ import annotations

import pytest

from memories.write.services import memory_create
from tests.conftest import Actor, make_actor

pytestmark = pytest.mark.django_db


@pytest.fixture
def memories() -> None:
    memory_create(namespace="user:alice", kind="fact", content="Alice drinks green tea.", actor="t")
    memory_create(
        namespace="user:alice",
        kind="procedure",
        procedure_subtype="constraint",
        content="Never schedule Alice before 10am.",
        actor="t",
    )


def test_it_returns_hits_with_scores_and_explanations(owner: Actor, memories: None) -> None:
    body = owner.get("/api/memories/search", {"q": "green tea", "explain": "1"}).json()
    first = body["memories"][0]
    assert first["memory"]["content"] == "Alice drinks green tea."
    assert first["match_source"] == "hybrid"
    assert first["explanation"]["final"] == pytest.approx(first["score"])


def test_without_explain_there_is_no_breakdown(owner: Actor, memories: None) -> None:
    body = owner.get("/api/memories/search", {"q": "tea"}).json()
    assert body["memories"][0]["explanation"] is None


@pytest.mark.parametrize("params", [{}, {"q": ""}, {"q": "   "}])
def test_a_missing_or_empty_query_is_a_422(owner: Actor, params: dict[str, str]) -> None:
    response = owner.get("/api/memories/search", params)
    assert response.status_code == 422
    assert "q is required" in response.json()["detail"]


@pytest.mark.parametrize(
    ("params", "word"),
    [
        ({"kinds": "opinion"}, "kind"),
        ({"status": "alive"}, "status"),
        ({"scope": "galaxy"}, "scope"),
    ],
)
def test_unknown_filters_are_422s_naming_the_allowed_values(
    owner: Actor, params: dict[str, str], word: str
) -> None:
    response = owner.get("/api/memories/search", {"q": "tea", **params})
    assert response.status_code == 422
    assert "allowed" in response.json()["detail"]
    assert word in response.json()["detail"]


def test_kinds_filter_and_topk(owner: Actor, memories: None) -> None:
    body = owner.get("/api/memories/search", {"q": "Alice", "kinds": "procedure", "topK": "1"})
    assert [m["memory"]["kind"] for m in body.json()["memories"]] == ["procedure"]


def test_several_grants_need_an_explicit_namespace(memories: None) -> None:
    both = make_actor(["user:alice", "user:bob"], ["read"])
    assert both.get("/api/memories/search", {"q": "tea"}).status_code == 422
    ok = both.get("/api/memories/search", {"q": "tea", "namespace": "user:alice"})
    assert ok.status_code == 200


def test_strangers_get_404(stranger: Actor, memories: None) -> None:
    response = stranger.get("/api/memories/search", {"q": "tea", "namespace": "user:alice"})
    assert response.status_code == 404
