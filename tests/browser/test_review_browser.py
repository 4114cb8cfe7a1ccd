"""A person accepts an agent's pending note in Chromium (htmx POST with the CSRF header)."""

from __future__ import annotations

import pytest

from notes.models import Note
from notes.services import save_note

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_staff_user_accepts_a_pending_note_without_a_reload(
    page,
    live_server,
    django_user_model,  # type: ignore[no-untyped-def]
) -> None:
    django_user_model.objects.create_user("grace", password="compiler-1952", is_staff=True)
    save_note("agent:oncall", "Restart the api pods.", id="rb-1")
    save_note(
        "agent:oncall", "Drain the node first.", status="pending", supersedes=["rb-1"], id="rb-2"
    )
    save_note("agent:oncall", "Page the DBA at night.", status="pending", id="rb-3")

    page.goto(f"{live_server.url}/notes/review/")
    page.fill("#id_username", "grace")
    page.fill("#id_password", "compiler-1952")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/notes/review/")
    assert page.locator("tr.note-row").count() == 2

    page.evaluate("window.__marker = 'same page'")
    row = page.locator("tr.note-row", has_text="Drain the node first.")
    row.get_by_role("button", name="Accept").click()
    page.wait_for_selector("tr.note-row.status-accepted")
    assert "by staff:grace" in page.locator("tr.status-accepted").inner_text()
    other = page.locator("tr.note-row", has_text="Page the DBA")
    other.get_by_role("button", name="Reject").click()
    page.wait_for_selector("tr.note-row.status-rejected")
    assert page.evaluate("window.__marker") == "same page"  # swapped by htmx, no reload
    assert dict(Note.objects.values_list("uid", "status")) == {
        "rb-1": "accepted",
        "rb-2": "accepted",
        "rb-3": "rejected",
    }
