"""A person browses notes in Chromium: enables search, searches, filters, and follows
a supersession link (htmx swaps the list; the links are plain links)."""

from __future__ import annotations

import pytest

from notes.models import NoteSearchKind
from notes.services import save_note

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_staff_user_searches_filters_and_follows_a_supersession(
    page,
    live_server,
    django_user_model,  # type: ignore[no-untyped-def]
) -> None:
    django_user_model.objects.create_user("grace", password="compiler-1952", is_staff=True)
    save_note("agent:oncall", "Restart the api pods.", kind="runbook", id="rb-1")
    save_note(
        "agent:oncall",
        "Drain the node, then restart the api pods.",
        kind="runbook",
        supersedes=["rb-1"],
        id="rb-2",
    )
    save_note("agent:oncall", "Page the DBA at night.", status="pending", id="rb-3")
    save_note("user:alice", "Alice restarts her laptop on Fridays.", id="alice-1")

    page.goto(f"{live_server.url}/notes/")
    page.fill("#id_username", "grace")
    page.fill("#id_password", "compiler-1952")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/notes/")
    page.evaluate("window.__marker = 'same page'")
    links = page.locator("#note-list a.note-link")
    assert links.all_inner_texts() == ["alice-1", "rb-2"]

    # Search is off for agent namespaces until someone enables it, here.
    page.fill("#q", "restart")
    page.select_option("#namespace_kind", "agent")
    page.wait_for_selector("#note-list .form-errors")
    assert "note search is not enabled" in page.locator("#note-list").inner_text()
    page.select_option("#enable-kind", "agent")
    page.locator("#enable-search").get_by_role("button", name="Enable search").click()
    page.wait_for_selector("#flash .flash")
    assert "Note search is on for agent namespaces" in page.locator("#flash").inner_text()
    assert list(NoteSearchKind.objects.values_list("kind", flat=True)) == ["agent"]
    # The list re-runs the search once search is on (HX-Trigger from the POST).
    page.wait_for_selector("#note-list table.notes")
    assert links.all_inner_texts() == ["rb-2"]
    assert "?q=restart" in page.url  # the URL follows the filters (hx-push-url)

    # Filter: superseded notes too; rb-1 comes back, marked as superseded by rb-2.
    page.check("#include_superseded")
    page.wait_for_function("document.querySelectorAll('#note-list a.note-link').length === 2")
    assert sorted(links.all_inner_texts()) == ["rb-1", "rb-2"]
    row = page.locator("tr.note-row", has=page.locator("a.note-link", has_text="rb-1"))
    assert "superseded" in row.inner_text()

    # Status filter: pending only (a search with no match shows so).
    page.select_option("#status", "pending")
    page.wait_for_selector("#note-list p.empty")
    assert "No note matches" in page.locator("#note-list").inner_text()
    assert page.evaluate("window.__marker") == "same page"  # all swapped by htmx

    # Back to every status, then follow rb-1's "superseded by" link to rb-2's page.
    page.select_option("#status", "any")
    page.wait_for_selector("#note-list a.superseded-by-link")
    row = page.locator("tr.note-row", has=page.locator("a.note-link", has_text="rb-1"))
    row.locator("a.superseded-by-link", has_text="rb-2").click()
    page.wait_for_url(f"{live_server.url}/notes/rb-2/")
    assert "Drain the node, then restart the api pods." in page.locator("blockquote").inner_text()
    assert "Readers see this note." in page.inner_text("main")
    page.locator("a.supersedes-link", has_text="rb-1").click()
    page.wait_for_url(f"{live_server.url}/notes/rb-1/")
    assert "Hidden from readers: superseded by rb-2" in page.inner_text("main")
