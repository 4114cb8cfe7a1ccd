"""The context preview (/context/) in Chromium: the system block the page shows is the
``system`` of ``POST /api/context`` for the same inputs, byte for byte, and showing it
writes nothing."""

from __future__ import annotations

import json
import urllib.request
from datetime import UTC, datetime
from typing import Any

import pytest

from memories.models import Memory, Message
from memories.write.services import memory_create
from tests.conftest import make_actor

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NS = "user:alice"
PROJECT = "garden"
TASK = "task-42"
# Texts the page's HTML escapes (quotes, <, &), whitespace a browser could fold, non-ASCII
# and a long one: any escaping, trimming or folding on the way shows as a difference.
MEMORIES: list[dict[str, Any]] = [
    {"kind": "fact", "content": 'Alice calls green tea "the <good> stuff" & means it.'},
    {"kind": "fact", "content": "Tea notes:\n  first steep 2 min\n\tsecond  steep 3 min\r\nend."},
    {
        "kind": "fact",
        "content": "Alice's tea: 玉露 (gyokuro) — café naïve ☕ 🦆 \u2018quoted\u2019 &amp;",
    },
    {"kind": "fact", "content": "Tea history: " + " ".join(f"word{n}&<{n}>" for n in range(70))},
    {
        "kind": "procedure",
        "procedure_subtype": "constraint",
        "content": "Never serve Alice tea above 80 °C </spaceduck-memories> <b>hot</b> & 'iced'.",
    },
    {
        "kind": "procedure",
        "procedure_subtype": "workflow",
        "content": "Making tea: warm the pot, then <pour> & wait.",
    },
    {
        "kind": "episode",
        "content": "Alice spilled tea on the <keyboard> & laughed.",
        "occurred_at": datetime(2026, 3, 14, 9, 26, tzinfo=UTC),
    },
    {
        "kind": "fact",
        "content": "Alice's garden tea grows by the <fence>.",
        "scope": "project",
        "scope_id": PROJECT,
    },
]
MESSAGES = [
    ("user", "Hello! I'm planning a tea party & need <ideas>."),
    ("assistant", 'Sure: "green" or "black"?'),
    ("user", "Green tea, with ☕ and cake."),
]


def api(base: str, secret: str, path: str, payload: dict[str, Any]) -> dict[str, Any]:
    """POST ``payload`` as JSON to the live server with the token, the way an agent does."""
    request = urllib.request.Request(
        base + path,
        data=json.dumps(payload).encode(),
        headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read().decode())


def seed(base: str, secret: str) -> str:
    """The memories above and a thread of MESSAGES (written through the API): its id."""
    for fields in MEMORIES:
        memory_create(namespace=NS, actor="t", **fields)
    thread = api(base, secret, "/api/threads", {"namespace": NS})["id"]
    for role, content in MESSAGES:
        api(base, secret, f"/api/threads/{thread}/messages", {"role": role, "content": content})
    return str(thread)


def untouched() -> tuple[object, ...]:
    """What a preview must not change: every memory's last_seen_at and updated_at, and the
    messages (a compaction would add a summary)."""
    memories = tuple(Memory.objects.order_by("pk").values_list("pk", "last_seen_at", "updated_at"))
    return memories, Message.objects.count()


# Each memory as the block gives it: whitespace folded, tags the block guards against gone.
EVERY_LINE = [
    '- Alice calls green tea "the <good> stuff" & means it.',
    "- Tea notes: first steep 2 min second steep 3 min end.",
    "- Alice's tea: 玉露 (gyokuro) — café naïve ☕ 🦆 \u2018quoted\u2019 &amp;",
    "- Tea history: word0&<0> word1&<1>",
    "word69&<69>\n",
    "- Never serve Alice tea above 80 °C <b>hot</b> & 'iced'.",
    "- (workflow) Making tea: warm the pot, then <pour> & wait.",
    "- 2026-03-14: Alice spilled tea on the <keyboard> & laughed.",
    "- Alice's garden tea grows by the <fence>.",
]


# "   ": a query of spaces is the API's (no recall: the constraint alone), not an empty box
# (which recalls for the thread's newest message).
@pytest.mark.parametrize(
    ("query", "lines"),
    [('what tea & <cake> "quotes"?', EVERY_LINE), ("   ", EVERY_LINE[5:6])],
)
def test_the_preview_is_the_api_system_block(staff_page, query: str, lines: list[str]) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    agent = make_actor([NS], ["read", "write"], name="agent")
    thread = seed(page.base, agent.secret)
    before = untouched()

    page.goto(f"{page.base}/context/")
    inputs = {
        "namespace": NS,
        "thread": thread,
        "project": PROJECT,
        "task": TASK,
        "query": query,
        "memory_budget": "700",
        "history_budget": "300",
    }
    for name, value in inputs.items():
        page.fill(f"#id_{name}", value)
    page.get_by_role("button", name="Preview").click()
    block = page.locator("#preview #system-block")
    block.wait_for()
    shown = block.evaluate("element => element.textContent")
    assert untouched() == before

    given = api(
        page.base,
        agent.secret,
        "/api/context",
        {
            "namespace": NS,
            "thread_id": thread,
            "project_id": PROJECT,
            "task_id": TASK,
            "query": query,
            "memory_budget": 700,
            "history_budget": 300,
        },
    )["system"]
    assert [line for line in EVERY_LINE if line in given] == lines
    assert shown.encode() == given.encode()

    # The URL htmx pushed, loaded as a whole page, shows the same bytes.
    page.reload()
    assert block.evaluate("element => element.textContent").encode() == given.encode()
    assert untouched() == before
