"""Erase a person's namespace in Chromium, then look for it everywhere: the people search,
the API, MCP and the viewer find nothing of it; another person's data is still there."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from memories.mcp.tools import list_memories, recall_memories
from memories.models import Memory
from memories.write.ingest import message_ingest
from memories.write.services import create_thread, memory_create, set_fact
from notes.services import save_note
from spaceduck.core.mcp_base import set_stdio_token
from spaceduck.core.tokens import token_create
from spaceduck.models import NamespaceErasure

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = "user:alice"


def seed(namespace: str, name: str) -> dict[str, Any]:
    thread = create_thread(namespace, title="Plans")
    message_ingest(thread.id, "user", f"Mail me at {name}@example.com about the zeppelin.")
    memory = memory_create(
        namespace=namespace, kind="fact", content=f"{name} likes zeppelin music.", actor="t"
    )
    set_fact(namespace, "contact/email", f"{name}@example.com")
    save_note(namespace, f"{name} reads zeppelin news.", id=f"note-{name}")
    return {"thread": thread.id, "memory": memory.pk}


def api_get(base: str, path: str, secret: str) -> tuple[int, Any]:
    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {secret}"})
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_erase_a_namespace_then_nothing_of_it_is_found(staff_page) -> None:  # type: ignore[no-untyped-def]
    alice, bob = seed(ALICE, "alice"), seed("user:bob", "bob")
    secret = token_create(name="alice-agent", namespaces=[ALICE], permissions=["read"]).secret
    page = staff_page

    page.goto(f"{page.base}/people/?q=alice%40example.com")
    assert page.locator("#people-results .people-hit").count() >= 3  # message, fact, memory
    page.locator(".people-namespaces a", has_text=ALICE).click()
    page.wait_for_selector("#person-erase")
    assert "memories" in page.locator("#person-counts").inner_text()

    page.locator("#person-erase input[name=confirm]").fill("user:alic")
    page.get_by_role("button", name="Erase for good").click()
    page.wait_for_selector("#flash .flash")
    assert "type the namespace" in page.locator("#flash").inner_text()
    assert Memory.objects.filter(namespace=ALICE).exists()

    page.locator("#person-erase input[name=confirm]").fill(ALICE)
    page.get_by_role("button", name="Erase for good").click()
    page.wait_for_url(f"{page.base}/people/?q=")
    assert f"Erased {ALICE}" in page.locator("#flash").inner_text()
    assert ALICE in page.locator("table.erasures").inner_text()
    assert NamespaceErasure.objects.get().erased_by == "staff:ada"

    # The people search.
    page.goto(f"{page.base}/people/?q=alice%40example.com")
    assert page.locator("#people-results .people-hit").count() == 0
    page.goto(f"{page.base}/people/?q=zeppelin")
    assert "alice" not in page.locator("#people-results").inner_text()
    assert "bob likes zeppelin music." in page.locator("#people-results").inner_text()

    # The API, with alice's agent's own token.
    status, body = api_get(
        page.base, "/api/memories/search?namespace=user:alice&q=zeppelin", secret
    )
    assert (status, body["memories"]) == (200, [])
    assert api_get(page.base, f"/api/threads/{alice['thread']}", secret)[0] == 404
    assert api_get(page.base, "/api/facts/user:alice/contact/email", secret)[0] == 404
    assert api_get(page.base, f"/api/memories/{alice['memory']}", secret)[0] == 404

    # MCP, as a stdio session with the same token.
    set_stdio_token(secret)
    try:
        assert recall_memories(query="alice zeppelin music", namespace=ALICE)["memories"] == []
        assert list_memories(namespace=ALICE)["memories"] == []
    finally:
        set_stdio_token(None)

    # The viewer.
    page.goto(f"{page.base}/?namespace=user%3Aalice&q=zeppelin")
    assert "alice likes zeppelin" not in page.content()
    response = page.goto(f"{page.base}/memories/{alice['memory']}/")
    assert response is not None
    assert response.status == 404
    kept = page.goto(f"{page.base}/memories/{bob['memory']}/")
    assert kept is not None
    assert kept.status == 200
