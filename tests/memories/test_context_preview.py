"""The dashboard's preview of what an agent is given (/context/): the block POST /api/context
builds for the same inputs, byte for byte, and nothing written."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.test import Client

from memories.models import Memory
from memories.write.services import memory_create
from tests.conftest import Actor

pytestmark = pytest.mark.django_db
NS = "user:alice"


def shown_block(page: str) -> str:
    match = re.search(r'<pre class="system-block" id="system-block">(.*?)</pre>', page, re.S)
    assert match is not None
    return html.unescape(match.group(1))


def test_the_preview_is_the_api_block_and_writes_nothing(
    owner: Actor, staff_client: Client
) -> None:
    memory_create(namespace=NS, kind="fact", content="Alice likes green tea.", actor="t")
    memory_create(
        namespace=NS,
        kind="procedure",
        procedure_subtype="constraint",
        content="Never call Alice before 9 <am>.",
        actor="t",
    )
    thread = owner.post("/api/threads", {"namespace": NS}).json()["id"]
    owner.post(f"/api/threads/{thread}/messages", {"role": "user", "content": "Hello there."})
    seen = dict(Memory.objects.values_list("pk", "last_seen_at"))
    inputs = {"namespace": NS, "thread_id": thread, "query": "what tea?", "memory_budget": 500}
    api = owner.post("/api/context", inputs).json()
    for headers in ({}, {"HX-Request": "true"}):
        page = staff_client.get(
            "/context/",
            {"namespace": NS, "thread": thread, "query": "what tea?", "memory_budget": 500},
            headers=headers,
        )
        assert page.status_code == 200
        text = page.content.decode()
        assert shown_block(text) == api["system"]
        assert "constraints" in text
        assert "facts" in text
        assert "tokens" in text
    assert dict(Memory.objects.values_list("pk", "last_seen_at")) == seen


# Spaces recall nothing in the API, and " garden " is no project "garden" there: a stripped
# query would fall back to the thread's newest message, a stripped project would give its
# memories, and the preview would show what the agent is not given.
@pytest.mark.parametrize(
    ("field", "api_field", "value"),
    [("query", "query", "   "), ("project", "project_id", " garden ")],
)
def test_inputs_are_sent_as_the_api_gets_them(
    owner: Actor, staff_client: Client, field: str, api_field: str, value: str
) -> None:
    memory_create(namespace=NS, kind="fact", content="Alice likes green tea.", actor="t")
    memory_create(
        namespace=NS,
        kind="fact",
        content="Alice grows tea in the garden.",
        actor="t",
        scope="project",
        scope_id="garden",
    )
    thread = owner.post("/api/threads", {"namespace": NS}).json()["id"]
    owner.post(f"/api/threads/{thread}/messages", {"role": "user", "content": "Green tea?"})
    api = owner.post("/api/context", {"namespace": NS, "thread_id": thread, api_field: value})
    page = staff_client.get("/context/", {"namespace": NS, "thread": thread, field: value})
    assert page.status_code == 200
    assert shown_block(page.content.decode()) == api.json()["system"]


def test_without_a_thread_the_query_is_yours(staff_client: Client) -> None:
    memory_create(namespace=NS, kind="fact", content="Alice likes green tea.", actor="t")
    page = staff_client.get("/context/", {"namespace": NS, "query": "tea"}).content.decode()
    assert "Alice likes green tea." in shown_block(page)


@pytest.mark.parametrize(
    "query",
    [
        {"namespace": "not a namespace"},
        {"namespace": NS, "thread": "no-such-thread"},
        {"namespace": NS, "memory_budget": "-1"},
        {"namespace": NS, "query": "x" * 5000},
    ],
)
def test_bad_inputs_are_a_4xx_beside_the_form(staff_client: Client, query: dict[str, str]) -> None:
    page = staff_client.get("/context/", query)
    assert 400 <= page.status_code < 500
    assert 'class="form-errors"' in page.content.decode()


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_the_agent_view_shows_the_whole_answer_messages_included(
    owner: Actor, staff_client: Client, htmx: bool
) -> None:
    memory_create(namespace=NS, kind="fact", content="Alice likes green tea.", actor="t")
    thread = owner.post("/api/threads", {"namespace": NS}).json()["id"]
    for role, content in (("user", "Which tea <b>do</b> I like?"), ("assistant", {"say": "green"})):
        owner.post(f"/api/threads/{thread}/messages", {"role": role, "content": content})
    inputs = {"namespace": NS, "thread_id": thread, "query": "tea"}
    api = owner.post("/api/context", inputs).json()
    page = staff_client.get(
        "/context/",
        {"namespace": NS, "thread": thread, "query": "tea"},
        headers={"HX-Request": "true"} if htmx else {},
    ).content.decode()
    messages = page[page.index('<ol class="context-messages"') : page.index("</ol>")]
    assert "Which tea &lt;b&gt;do&lt;/b&gt; I like?" in messages  # escaped, in order
    assert messages.index("Which tea") < messages.index("&quot;say&quot;: &quot;green&quot;")
    answer = re.search(r'<pre id="api-answer">(.*?)</pre>', page, re.S)
    assert answer is not None
    shown = json.loads(html.unescape(answer.group(1)))
    # The whole answer, as the API gives it (a score's recency moves with the clock).
    scores = [m.pop("score") for m in shown["memories"]]
    assert scores == pytest.approx([m.pop("score") for m in api["memories"]], rel=1e-6)
    assert shown == api
    assert [m["content"] for m in shown["messages"]] == [
        "Which tea <b>do</b> I like?",
        {"say": "green"},
    ]
