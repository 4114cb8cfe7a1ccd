"""Search and context hand an agent each memory once, and each active constraint once.

Seen on main: with ~40 memories written within an hour, search (topK=30) listed some ids
twice, once as found by a list and once as a neighbour added by the second stage (widen),
and context repeated them."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import Memory
from memories.upkeep.staleness import mark_stale
from tests.conftest import Actor

pytestmark = pytest.mark.django_db

HOBBIES = ["hiking", "chess", "pottery", "sailing", "jazz", "baking", "climbing", "poetry"]


@pytest.fixture
def forty(owner: Actor) -> None:
    for i in range(40):
        hobby = HOBBIES[i % len(HOBBIES)]
        content = f"The user went {hobby} with friend number {i} on a sunny weekend."
        body = {"namespace": "user:alice", "kind": "episode", "content": content}
        assert owner.post("/api/memories", body).status_code == 201


def repeated(ids: list[int]) -> dict[int, int]:
    return {memory_id: n for memory_id, n in Counter(ids).items() if n > 1}


@pytest.mark.usefixtures("forty")
@pytest.mark.parametrize("query", ["weekend with friends", "jazz and chess", "sunny hiking"])
def test_search_lists_each_memory_once(owner: Actor, query: str) -> None:
    response = owner.get(
        "/api/memories/search", {"namespace": "user:alice", "q": query, "topK": 30}
    )
    assert response.status_code == 200
    ids = [hit["memory"]["id"] for hit in response.json()["memories"]]
    assert len(ids) == 30
    assert repeated(ids) == {}


@pytest.mark.usefixtures("forty")
def test_context_lists_each_memory_once_and_each_constraint_once(owner: Actor) -> None:
    rule = {
        "namespace": "user:alice",
        "kind": "procedure",
        "procedure_subtype": "constraint",
        "content": "Never plan a weekend outing on a Sunday.",
    }
    rule_id = owner.post("/api/memories", rule).json()["memory_id"]
    # Unseen for a year: procedures do not go stale, so the rule stays in every context.
    Memory.objects.filter(pk=rule_id).update(last_seen_at=timezone.now() - timedelta(days=365))
    mark_stale(timezone.now())
    thread = owner.post("/api/threads", {"namespace": "user:alice"}).json()["id"]
    body = {
        "namespace": "user:alice",
        "thread_id": thread,
        "query": "sunny weekend outing with friends",
        "memory_budget": 4000,
    }
    response = owner.post("/api/context", body)
    assert response.status_code == 200
    ids = [item["id"] for item in response.json()["memories"]]
    assert len(ids) > 20
    assert repeated(ids) == {}
    assert ids.count(rule_id) == 1


def test_a_workflow_is_given_only_when_the_query_is_about_it(owner: Actor) -> None:
    workflow = {
        "namespace": "user:alice",
        "kind": "procedure",
        "procedure_subtype": "workflow",
        "content": "To release the app: tag the commit, build the wheel, publish the changelog.",
    }
    workflow_id = owner.post("/api/memories", workflow).json()["memory_id"]
    fact = {"namespace": "user:alice", "kind": "fact", "content": "The user loves Thai food."}
    fact_id = owner.post("/api/memories", fact).json()["memory_id"]
    thread = owner.post("/api/threads", {"namespace": "user:alice"}).json()["id"]

    def given(query: str) -> list[int]:
        body = {"namespace": "user:alice", "thread_id": thread, "query": query}
        answer = owner.post("/api/context", body)
        assert answer.status_code == 200, answer.content
        return [memory["id"] for memory in answer.json()["memories"]]

    assert workflow_id not in given("What should I cook for dinner tonight?")
    assert fact_id in given("What food does the user like?")
    assert workflow_id in given("How do I release the app?")
