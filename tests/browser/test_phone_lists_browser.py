"""Every list page on a 390 x 844 phone in Chromium (issue 40 item 2): the rows are stacked
cards, every action of the list lies on the screen, and the page does not scroll sideways;
in light and dark, with and without JavaScript."""

from __future__ import annotations

import pytest

from tests.browser.conftest import log_in
from tests.browser.site import seed_every_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
# The list pages and the list on each: its rows (there must be some) and its actions.
LISTS = {
    "viewer": "#memory-list table.memories > tbody > tr",
    "viewer-search": "#memory-list table.memories > tbody > tr",
    "candidates": "#queue table.memories > tbody > tr",
    "conflicts": "#inbox article.conflict",
    "extractions": "#extraction-list table.memories > tbody > tr",
    "extraction": "#candidates table.memories > tbody > tr",
    "threads": "#thread-list table.memories > tbody > tr",
    "facts": "#fact-list table.memories > tbody > tr",
    "notes-review": "table.memories.notes > tbody > tr",
    "notes": "#note-list table.memories > tbody > tr",
    "settings": "table.memories > tbody > tr",
    "tokens": "#token-table > tbody > tr",
    "people": "table.memories.erasures > tbody > tr",
    "people-search": "#people-results table.memories > tbody > tr",
    "person": "#person-rows table.memories > tbody > tr",
    "overview": "table.namespace-counts > tbody > tr",
    "activity": "#activity-list table.memories > tbody > tr",
}
# The erased namespaces are a record: nothing to do on them.
WITHOUT_ACTIONS = {"people"}
ACTIONS = "a, button, input, select, textarea, summary"
NO_SIDEWAYS_SCROLL = "document.scrollingElement.scrollWidth <= window.innerWidth"
# Each visible action of the rows, with where it lies: [text, left, right].
PLACES = """([rows, actions]) => {
  const out = [];
  for (const row of document.querySelectorAll(rows))
    for (const el of row.querySelectorAll(actions)) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;  // inside a closed <details>
      out.push([el.outerHTML.slice(0, 90), box.left, box.right]);
    }
  return out;
}"""


@pytest.mark.parametrize(
    ("scheme", "javascript"), [("light", True), ("dark", True), ("light", False)]
)
def test_every_list_on_a_phone_is_cards_with_its_actions_on_screen(  # type: ignore[no-untyped-def]
    browser, live_server, django_user_model, scheme, javascript
) -> None:
    pages = seed_every_page()
    assert set(LISTS) <= set(pages)
    user = django_user_model.objects.create_user("ada", password="analytical-engine", is_staff=True)
    context = browser.new_context(
        viewport=PHONE, color_scheme=scheme, java_script_enabled=javascript
    )
    log_in(context, live_server.url, user)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        for name, rows in LISTS.items():
            page.goto(f"{live_server.url}{pages[name]}")
            assert page.locator(rows).count() >= 1, f"{name}: no rows to look at"
            assert page.evaluate(NO_SIDEWAYS_SCROLL), f"{name} scrolls sideways"
            places = page.evaluate(PLACES, [rows, ACTIONS])
            assert bool(places) != (name in WITHOUT_ACTIONS), f"{name}: {places}"
            off = [p for p in places if p[1] < 0 or p[2] > PHONE["width"]]
            assert not off, f"{name}: off the screen: {off}"
            # A table's row is a card, one cell under the other, each named by its column.
            table_rows = page.locator(f"{rows}:is(tr)")
            if table_rows.count():
                first = table_rows.first
                assert first.evaluate("el => getComputedStyle(el).display") != "table-row", name
                labelled = first.locator("td[data-label]")
                if labelled.count():
                    label = labelled.first.evaluate(
                        "el => getComputedStyle(el, '::before').content"
                    )
                    assert label.strip('"') == labelled.first.get_attribute("data-label"), name
    finally:
        context.close()


def test_the_candidates_approve_button_is_on_screen_and_works(staff_page) -> None:  # type: ignore[no-untyped-def]
    """The reviewer's case: Approve was at x = 520 on a 390 px phone; now it is tapped."""
    from memories.models import Memory

    pages = seed_every_page()
    page = staff_page
    page.set_viewport_size(PHONE)
    page.goto(f"{page.base}{pages['candidates']}")
    row = page.locator("#queue tbody tr").first
    memory_id = int((row.get_attribute("id") or "").removeprefix("candidate-"))
    approve = row.get_by_role("button", name="Approve", exact=True)
    box = approve.bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= PHONE["width"]
    approve.click()
    page.wait_for_selector(f"#candidate-{memory_id}", state="detached")
    assert Memory.objects.get(pk=memory_id).status == "active"
