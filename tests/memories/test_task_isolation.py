"""Task isolation over HTTP: GET /api/memories/search and POST /api/context.

A task (``source_task_id``, ``task_id`` or the X-Spaceduck-Task header) is given its
own memories and those written outside any task, never another task's. An
interactive caller (no task) is given no memories written by scheduled tasks unless
it asks with ``exclude_task_memories=false``. Constraints obey the same rule as
recalled memories.
"""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import Memory
from memories.write.runner import run_extraction
from tests.conftest import Actor

pytestmark = pytest.mark.django_db

UNTASKED = "Report: the deploy server runs Debian twelve."
NIGHTLY = "Report: the nightly digest counted forty new invoices."
AUDIT = "Report: the weekly audit found three stale tokens."
RULE = "Never deploy on Fridays."
NIGHTLY_RULE = "Always compress the nightly archives before upload."
AUDIT_RULE = "Never rotate the audit keys during business hours."
ALL_FACTS = {UNTASKED, NIGHTLY, AUDIT}
ALL_RULES = {RULE, NIGHTLY_RULE, AUDIT_RULE}


def write(actor: Actor, content: str, task: str | None = None, **fields: Any) -> Memory:
    """Through POST /api/memories; the task by body field (or header: ``via_header``)."""
    headers = {}
    body: dict[str, Any] = {"namespace": "user:alice", "kind": "fact", "content": content}
    if fields.pop("via_header", False):
        headers["X-Spaceduck-Task"] = task or ""
    elif task is not None:
        body["task_id"] = task
    body.update(fields)
    response = actor.post("/api/memories", body, headers=headers)
    assert response.status_code == 201, response.json()
    memory = Memory.objects.get(pk=response.json()["memory_id"])
    assert memory.source_task_id == (task or "")
    return memory


def rule(actor: Actor, content: str, task: str | None = None) -> Memory:
    return write(actor, content, task, kind="procedure", procedure_subtype="constraint")


@pytest.fixture
def written(owner: Actor) -> None:
    write(owner, UNTASKED)
    write(owner, NIGHTLY, "nightly")
    write(owner, AUDIT, "audit", via_header=True)
    rule(owner, RULE)
    rule(owner, NIGHTLY_RULE, "nightly")
    rule(owner, AUDIT_RULE, "audit")


@pytest.fixture
def thread_id(owner: Actor) -> str:
    response = owner.post("/api/threads", {"namespace": "user:alice", "title": "t"})
    assert response.status_code == 201
    return str(response.json()["id"])


def search(actor: Actor, headers: dict[str, str] | None = None, **params: str) -> set[str]:
    query = {"q": "report", "kinds": "fact", "topK": "50", **params}
    response = actor.get("/api/memories/search", query, headers=headers or {})
    assert response.status_code == 200, response.json()
    return {hit["memory"]["content"] for hit in response.json()["memories"]}


def context(
    actor: Actor, thread_id: str, headers: dict[str, str] | None = None, **body: Any
) -> dict[str, set[str]]:
    payload = {"namespace": "user:alice", "thread_id": thread_id, "query": "report", **body}
    response = actor.post("/api/context", payload, headers=headers or {})
    assert response.status_code == 200, response.json()
    sections: dict[str, set[str]] = {"facts": set(), "constraints": set()}
    for item in response.json()["memories"]:
        sections.setdefault(item["section"], set()).add(item["content"])
    return sections


# --- POST /api/context --------------------------------------------------------------


def test_an_interactive_context_leaves_out_task_memories_by_default(
    owner: Actor, written: None, thread_id: str
) -> None:
    got = context(owner, thread_id)
    assert got["facts"] == {UNTASKED}
    assert got["constraints"] == {RULE}


def test_an_interactive_context_that_asks_gets_task_memories_too(
    owner: Actor, written: None, thread_id: str
) -> None:
    got = context(owner, thread_id, exclude_task_memories=False)
    assert got["facts"] == ALL_FACTS
    assert got["constraints"] == ALL_RULES
    assert context(owner, thread_id, exclude_task_memories=None)["facts"] == {UNTASKED}


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        ({"task_id": "nightly"}, {}),
        ({"source_task_id": "nightly"}, {}),
        ({"task_id": "nightly", "source_task_id": "nightly"}, {}),
        ({}, {"X-Spaceduck-Task": "nightly"}),
        ({"source_task_id": "nightly"}, {"X-Spaceduck-Task": "audit"}),  # the body wins
    ],
)
def test_a_task_context_sees_its_own_and_untasked_memories_not_another_tasks(
    owner: Actor,
    written: None,
    thread_id: str,
    body: dict[str, str],
    headers: dict[str, str],
) -> None:
    got = context(owner, thread_id, headers, **body)
    assert got["facts"] == {UNTASKED, NIGHTLY}
    assert got["constraints"] == {RULE, NIGHTLY_RULE}
    # false does not open another task's memories to a task
    opened = context(owner, thread_id, headers, exclude_task_memories=False, **body)
    assert opened["facts"] == {UNTASKED, NIGHTLY}
    assert opened["constraints"] == {RULE, NIGHTLY_RULE}


def test_exclude_task_memories_true_leaves_out_even_the_tasks_own(
    owner: Actor, written: None, thread_id: str
) -> None:
    got = context(owner, thread_id, task_id="nightly", exclude_task_memories=True)
    assert got["facts"] == {UNTASKED}
    assert got["constraints"] == {RULE}


def test_an_empty_task_id_is_an_interactive_context(
    owner: Actor, written: None, thread_id: str
) -> None:
    assert context(owner, thread_id, task_id="")["facts"] == {UNTASKED}
    assert context(owner, thread_id, {"X-Spaceduck-Task": "  "})["constraints"] == {RULE}


def test_memories_a_task_wrote_through_extraction_stay_in_that_task(
    owner: Actor, thread_id: str
) -> None:
    said = owner.post(
        f"/api/threads/{thread_id}/messages",
        {"role": "user", "content": "I live in Lisbon."},
        headers={"X-Spaceduck-Task": "nightly"},
    )
    assert said.status_code == 201, said.json()
    # Queued on commit, which a test's transaction never reaches: run it here.
    run_extraction(said.json()["extraction"]["id"])
    learnt = Memory.objects.get(namespace="user:alice")
    assert learnt.source_task_id == "nightly"
    assert context(owner, thread_id, query="Lisbon")["facts"] == set()
    assert context(owner, thread_id, query="Lisbon", task_id="nightly")["facts"] == {learnt.content}
    assert search(owner, q="Lisbon", source_task_id="audit") == set()


# --- GET /api/memories/search -------------------------------------------------------


def test_search_without_a_task_leaves_out_task_memories_unless_asked(
    owner: Actor, written: None
) -> None:
    assert search(owner) == {UNTASKED}
    assert search(owner, exclude_task_memories="false") == ALL_FACTS
    assert search(owner, exclude_task_memories="true") == {UNTASKED}


def test_search_by_a_task_sees_its_own_and_untasked_memories(owner: Actor, written: None) -> None:
    assert search(owner, source_task_id="nightly") == {UNTASKED, NIGHTLY}
    assert search(owner, {"X-Spaceduck-Task": "audit"}) == {UNTASKED, AUDIT}
    assert search(owner, source_task_id="nightly", exclude_task_memories="false") == {
        UNTASKED,
        NIGHTLY,
    }
    assert search(owner, source_task_id="nightly", exclude_task_memories="true") == {UNTASKED}
    assert search(owner, source_task_id="") == {UNTASKED}


def test_search_obeys_the_rule_for_constraints_too(owner: Actor, written: None) -> None:
    def rules(**params: str) -> set[str]:
        return search(owner, q="never always nightly audit deploy", kinds="procedure", **params)

    assert rules() == {RULE}
    assert rules(source_task_id="audit") == {RULE, AUDIT_RULE}
    assert rules(exclude_task_memories="false") == ALL_RULES


def test_another_namespace_stays_out_whatever_the_task(
    owner: Actor, stranger: Actor, written: None
) -> None:
    response = stranger.get(
        "/api/memories/search",
        {"q": "report", "namespace": "user:alice", "exclude_task_memories": "false"},
    )
    assert response.status_code in (403, 404)
    assert search(stranger, namespace="user:bob", exclude_task_memories="false") == set()


# --- Bad values ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"exclude_task_memories": "maybe"}, "exclude_task_memories"),
        ({"exclude_task_memories": ""}, "exclude_task_memories"),
        ({"source_task_id": "t" * 256}, "source_task_id"),
        ({"excludeTaskMemories": "true"}, "excludeTaskMemories"),
    ],
)
def test_bad_search_values_are_422s(
    owner: Actor, written: None, params: dict[str, str], field: str
) -> None:
    response = owner.get("/api/memories/search", {"q": "report", **params})
    assert response.status_code == 422
    assert response["Content-Type"].startswith("application/json")
    assert field in str(response.json())


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"exclude_task_memories": "yes"}, "exclude_task_memories"),
        ({"exclude_task_memories": 1}, "exclude_task_memories"),
        ({"source_task_id": 7}, "source_task_id"),
        ({"source_task_id": "t" * 256}, "source_task_id"),
        ({"task_id": "nightly", "source_task_id": "audit"}, "source_task_id"),
    ],
)
def test_bad_context_values_are_422s(
    owner: Actor, written: None, thread_id: str, body: dict[str, Any], field: str
) -> None:
    payload = {"namespace": "user:alice", "thread_id": thread_id, **body}
    response = owner.post("/api/context", payload)
    assert response.status_code == 422
    assert response["Content-Type"].startswith("application/json")
    assert field in str(response.json())


def test_the_parameters_are_documented(owner: Actor) -> None:
    schema = owner.get("/api/openapi.json").json()
    search_params = {
        p["name"]: p for p in schema["paths"]["/api/memories/search"]["get"]["parameters"]
    }
    for name in ("exclude_task_memories", "source_task_id"):
        assert "task" in search_params[name]["description"]
    body_ref = schema["paths"]["/api/context"]["post"]["requestBody"]["content"][
        "application/json"
    ]["schema"]["$ref"]
    body = schema["components"]["schemas"][body_ref.rsplit("/", 1)[1]]["properties"]
    for name in ("exclude_task_memories", "source_task_id"):
        assert "task" in body[name]["description"]
    assert "interactive" in schema["paths"]["/api/context"]["post"]["description"]
