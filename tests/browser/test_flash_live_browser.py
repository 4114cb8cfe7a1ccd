"""The message area is a live region that stays put (issue 40 item 6): a decision's message
is written into the same ``#flash`` element, polite and whole, so a screen reader reads it
out; replacing the element would leave a new, silent region behind."""

from __future__ import annotations

import pytest

from tests.browser.site import seed_every_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLASH = "document.getElementById('flash')"


def test_a_decision_s_message_lands_in_the_same_live_region(staff_page) -> None:  # type: ignore[no-untyped-def]
    pages = seed_every_page()
    page = staff_page
    page.goto(f"{page.base}{pages['candidates']}")
    page.evaluate(f"{FLASH}.dataset.probe = 'the page loaded me'")
    first = page.locator("#queue tbody tr").first
    row_id = first.get_attribute("id")
    first.get_by_role("button", name="Approve").click()
    page.wait_for_selector(f"#{row_id}", state="detached")
    page.wait_for_function(f"{FLASH}.textContent.toLowerCase().includes('approved')")

    assert page.evaluate(f"{FLASH}.dataset.probe") == "the page loaded me"  # not replaced
    assert page.evaluate(f"{FLASH}.getAttribute('aria-live')") == "polite"
    assert page.evaluate(f"{FLASH}.getAttribute('role')") == "status"
    assert page.locator("#flash #flash").count() == 0  # not nested either
