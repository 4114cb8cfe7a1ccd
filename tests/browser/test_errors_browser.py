"""Errors in Chromium: an htmx error leaves the page it happened on; the delete
confirmation is a box of its own."""

from __future__ import annotations

import pytest

from memories.write.services import memory_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_empty_bulk_approve_keeps_the_queue_and_says_why(staff_page) -> None:  # type: ignore[no-untyped-def]
    memory_create(
        namespace="user:alice", kind="fact", content="Tea.", actor="t", status="candidate"
    )
    page = staff_page
    page.goto(f"{page.base}/review/memories/")
    page.evaluate("window.__marker = 'same page'")
    page.get_by_role("button", name="Approve selected").click()
    page.wait_for_selector("#flash .flash-error")
    assert "choose at least one memory" in page.locator("#flash").inner_text()
    assert page.locator("#queue table.queue tbody tr").count() == 1  # the queue is still there
    assert page.get_by_role("button", name="Approve selected").is_visible()
    assert page.evaluate("window.__marker") == "same page"


def test_the_delete_confirmation_is_a_box_below_the_buttons(staff_page) -> None:  # type: ignore[no-untyped-def]
    memory = memory_create(namespace="user:alice", kind="fact", content="Tea.", actor="t")
    page = staff_page
    page.goto(f"{page.base}/memories/{memory.pk}/")
    page.get_by_role("link", name="Delete…").click()
    confirm = page.locator("#confirm-delete")
    confirm.wait_for()
    assert confirm.evaluate("form => getComputedStyle(form).display") == "block"
    slot = page.locator("#confirm-slot").bounding_box()
    buttons = page.locator(".actions").bounding_box()
    assert slot is not None
    assert buttons is not None
    assert slot["width"] >= buttons["width"] - 2  # a full row, not squeezed beside the buttons


def test_a_server_error_on_an_htmx_action_is_said_in_the_message_area(
    staff_page, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """A 500 is not swapped into the row: the message area says it, the row stays."""
    from memories.web.views import memory as views

    candidate = memory_create(
        namespace="user:alice", kind="fact", content="Tea.", actor="t", status="candidate"
    )

    def broken(**kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    monkeypatch.setattr(views.lifecycle, "memory_set_status", broken)
    page = staff_page
    page.goto(f"{page.base}/?status=candidate")
    page.evaluate("window.__marker = 'same page'")
    page.locator(f"#memory-{candidate.pk}").get_by_role("button", name="Approve").click()
    page.wait_for_selector("#flash .flash-error")
    assert "The error was logged." in page.locator("#flash").inner_text()
    assert (
        page.locator(f"#memory-{candidate.pk}").get_by_role("button", name="Approve").is_visible()
    )
    assert page.locator("#site-nav").count() == 1  # no second page inside this one
    assert page.evaluate("window.__marker") == "same page"


def test_a_post_only_address_opened_by_hand_shows_the_navigation(staff_page) -> None:  # type: ignore[no-untyped-def]
    memory = memory_create(namespace="user:alice", kind="fact", content="Tea.", actor="t")
    page = staff_page
    answer = page.goto(f"{page.base}/memories/{memory.pk}/edit/")
    assert answer is not None
    assert answer.status == 405
    assert page.locator("#site-nav").is_visible()
    assert "it takes POST" in page.locator(".error-message").inner_text()
