"""A task's write budget: an agent can lower it for itself, never raise it; a token with
``approve`` (a person's) can."""

from __future__ import annotations

from typing import Any

import pytest

from spaceduck.core import runtime
from tests.conftest import Actor, make_actor

pytestmark = pytest.mark.django_db


def remember(actor: Actor, content: str, **fields: Any) -> Any:
    body = {"namespace": "user:alice", "kind": "fact", "content": content, **fields}
    return actor.post("/api/memories", body)


@pytest.fixture
def budget_of_two() -> None:
    runtime.settings_update(values={"task_max_memory_writes": 2}, actor="staff:test")


@pytest.mark.usefixtures("budget_of_two")
def test_an_agent_cannot_lift_its_own_task_write_budget(owner: Actor) -> None:
    for city in ("Lisbon", "Oslo"):
        assert remember(owner, f"The user visited {city}.", task_id="t1").status_code == 201
    response = remember(owner, "The user visited Turin.", task_id="t1", max_memory_writes=1000)
    assert response.status_code == 403
    detail = response.json()["detail"]
    assert "above the configured task write budget (2)" in detail
    assert "'approve' permission" in detail
    assert remember(owner, "The user visited Turin.", task_id="t1").json()["decision"] == "rejected"


@pytest.mark.usefixtures("budget_of_two")
def test_a_lower_budget_is_the_agent_s_own_choice(owner: Actor) -> None:
    assert (
        remember(owner, "The user visited Lisbon.", task_id="t2", max_memory_writes=1).status_code
        == 201
    )
    second = remember(owner, "The user visited Oslo.", task_id="t2", max_memory_writes=1)
    assert second.status_code == 200
    assert second.json()["decision"] == "rejected"
    assert "budget" in second.json()["reason"]


@pytest.mark.usefixtures("budget_of_two")
def test_an_approver_may_raise_a_task_s_budget() -> None:
    approver = make_actor(["user:alice"], ["read", "write", "approve"], name="approver")
    for city in ("Lisbon", "Oslo", "Turin"):
        response = remember(
            approver, f"The user visited {city}.", task_id="t3", max_memory_writes=3
        )
        assert response.status_code == 201, response.json()


@pytest.mark.usefixtures("budget_of_two")
def test_a_message_cannot_carry_a_raised_budget_to_its_extraction(owner: Actor) -> None:
    thread = owner.post("/api/threads", {"namespace": "user:alice"}).json()
    response = owner.post(
        f"/api/threads/{thread['id']}/messages",
        {"role": "user", "content": "I live in Oslo.", "task_id": "t4", "max_memory_writes": 50},
    )
    assert response.status_code == 403
    assert "'approve' permission" in response.json()["detail"]
