"""Keyboard and screen readers in Chromium (issue 40 item 6): axe-core finds no serious or
critical violation on any dashboard page, in light and dark, wide and on a phone (the admin's
pages: test_admin_accessibility_browser); a skip link is the first tab stop; a reviewer
approves with the queue's keys alone and the focus moves to the next item after every
decision (candidates, notes, conflicts)."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from memories.models import Memory
from notes.models import Note
from spaceduck.core.pages import server_error
from tests.browser.axe import problems
from tests.browser.conftest import log_in
from tests.browser.site import seed_every_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ACTIVE = "document.activeElement"
MISSING = {"not-found", "no-note"}  # the pages of what is not there (404)


def new_page(browser, live_server, user, **options):  # type: ignore[no-untyped-def]
    context = browser.new_context(**options)
    log_in(context, live_server.url, user)
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 700, 390])
def test_axe_finds_nothing_serious_on_any_page(  # type: ignore[no-untyped-def]
    browser, live_server, django_user_model, scheme, width
) -> None:
    pages = seed_every_page()
    user = django_user_model.objects.create_user("ada", password="analytical-engine", is_staff=True)
    page = new_page(
        browser, live_server, user, color_scheme=scheme, viewport={"width": width, "height": 844}
    )
    try:
        found = {}
        for name, path in pages.items():
            answer = page.goto(f"{live_server.url}{path}")
            assert answer is not None
            assert answer.status == (404 if name in MISSING else 200), name
            if found_here := problems(page):
                found[name] = found_here
        # The 500 page (its own template, no database): served in place of a page here.
        broken = server_error(RequestFactory().get("/")).content.decode()
        page.route(
            "**/broken/",
            lambda route: route.fulfill(status=500, body=broken, content_type="text/html"),
        )
        page.goto(f"{live_server.url}/broken/")
        assert page.locator("#error-page").is_visible()
        found["server error"] = problems(page)
        # The states a page reaches by a key or a tap: the menu open, the shortcut list shown.
        page.goto(f"{live_server.url}{pages['candidates']}")
        if width < 800:
            page.get_by_role("button", name="Menu", exact=True).click()
            assert page.locator("#site-nav").is_visible()
            found["menu open"] = problems(page)
        page.keyboard.press("?")
        assert page.locator("dialog.shortcuts").is_visible()
        found["shortcuts"] = problems(page)
        assert not any(found.values()), found
    finally:
        page.context.close()


def test_a_candidate_is_approved_with_the_keyboard_alone(staff_page) -> None:  # type: ignore[no-untyped-def]
    pages = seed_every_page()
    page = staff_page
    page.goto(f"{page.base}{pages['candidates']}")
    ids = page.locator("#queue tbody tr").evaluate_all("rows => rows.map(row => row.id)")
    assert len(ids) >= 3

    # The first Tab reaches the skip link, shown once focused; Enter skips the navigation.
    page.keyboard.press("Tab")
    assert page.evaluate(f"{ACTIVE}.textContent.trim()") == "Skip to content"
    assert page.evaluate(f"{ACTIVE}.getAttribute('href')") == "#main"
    skip = page.locator(".skip-link").bounding_box()
    assert skip is not None
    assert skip["y"] >= 0  # on the screen while it has the focus
    page.keyboard.press("Enter")
    assert page.evaluate(f"{ACTIVE}.id") == "main"

    # j picks the first item, j and k move; a approves the item and the focus goes on.
    page.keyboard.press("j")
    assert page.evaluate(f"{ACTIVE}.id") == ids[0]
    page.keyboard.press("j")
    assert page.evaluate(f"{ACTIVE}.id") == ids[1]
    page.keyboard.press("k")
    assert page.evaluate(f"{ACTIVE}.id") == ids[0]
    page.keyboard.press("a")
    page.wait_for_selector(f"#{ids[0]}", state="detached")
    page.wait_for_function(f"{ACTIVE}.id === '{ids[1]}'")
    assert "approved" in page.locator("#flash").inner_text().lower()
    first = Memory.objects.get(pk=int(ids[0].removeprefix("candidate-")))
    assert first.status == "active"

    # r rejects the item now focused; the focus moves to the one after it.
    page.keyboard.press("r")
    page.wait_for_selector(f"#{ids[1]}", state="detached")
    page.wait_for_function(f"{ACTIVE}.id === '{ids[2]}'")
    second = Memory.objects.get(pk=int(ids[1].removeprefix("candidate-")))
    assert second.status == "archived"


def test_the_shortcuts_are_listed_and_stay_out_of_text_fields(staff_page) -> None:  # type: ignore[no-untyped-def]
    pages = seed_every_page()
    page = staff_page
    page.goto(f"{page.base}{pages['candidates']}")
    waiting = Memory.objects.filter(status="candidate").count()
    waiting_rows = page.locator("#queue tbody tr").count()
    # Typed into the namespace filter, "a" and "j" are letters, not decisions.
    page.locator("#namespace").focus()
    page.keyboard.type("aj")
    assert page.locator("#namespace").input_value() == "aj"
    for _ in "aj":  # as it was: leaving the field then filters nothing
        page.keyboard.press("Backspace")
    assert Memory.objects.filter(status="candidate").count() == waiting
    # ? lists the keys in a dialog; Escape closes it; the page says the list exists.
    page.locator("#namespace").blur()
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    assert dialog.is_visible()
    for key in ("j", "k", "a", "r", "?"):
        assert dialog.locator("kbd", has_text=key).count() == 1
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    # j picks an item, Shift+Tab leaves it (for "select all"): with no item holding the
    # focus, a and r decide nothing unseen.
    page.keyboard.press("j")
    assert page.evaluate(f"{ACTIVE}.matches('[data-queue-item]')")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(f"{ACTIVE}.getAttribute('aria-label')") == "select all"
    page.keyboard.press("a")
    page.keyboard.press("r")
    page.wait_for_load_state("networkidle")  # a request it sent would be over by now
    assert page.locator("#queue tbody tr").count() == waiting_rows
    assert Memory.objects.filter(status="candidate").count() == waiting
    page.get_by_role("button", name="Keyboard shortcuts").click()
    assert dialog.is_visible()


def test_a_note_is_accepted_with_the_keyboard_and_the_focus_moves_on(staff_page) -> None:  # type: ignore[no-untyped-def]
    from notes.services import save_note

    for n in range(3):
        save_note("agent:oncall", f"Runbook step {n}.", status="pending", id=f"step-{n}")
    page = staff_page
    page.goto(f"{page.base}/notes/review/")
    rows = page.locator("#note-queue > tr")
    ids = rows.evaluate_all("rows => rows.map(row => row.id)")
    assert len(ids) == 3
    page.keyboard.press("j")
    assert page.evaluate(f"{ACTIVE}.id") == ids[0]
    page.keyboard.press("a")
    page.wait_for_selector(f"#{ids[0]}.status-accepted")
    page.wait_for_function(f"{ACTIVE}.id === '{ids[1]}'")
    page.keyboard.press("r")
    page.wait_for_selector(f"#{ids[1]}.status-rejected")
    page.wait_for_function(f"{ACTIVE}.id === '{ids[2]}'")
    # A decided note is passed over: k from the last goes to no decided one.
    page.keyboard.press("k")
    assert page.evaluate(f"{ACTIVE}.id") == ids[2]
    statuses = dict(Note.objects.values_list("uid", "status"))
    assert sorted(statuses.values()) == ["accepted", "pending", "rejected"]


def test_after_a_conflict_decision_the_focus_is_on_the_next_conflict(staff_page) -> None:  # type: ignore[no-untyped-def]
    pages = seed_every_page()
    page = staff_page
    page.goto(f"{page.base}{pages['conflicts']}")
    ids = page.locator("#inbox article.conflict").evaluate_all("els => els.map(el => el.id)")
    assert len(ids) >= 2
    page.locator(f"#{ids[0]}").get_by_role("button", name="Keep both", exact=True).focus()
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#{ids[0]}", state="detached")
    page.wait_for_function(f"{ACTIVE}.id === '{ids[1]}'")
    # The last one decided: the focus is on the inbox, which says nothing is waiting.
    for conflict in ids[1:]:
        page.locator(f"#{conflict}").get_by_role("button", name="Keep both", exact=True).click()
        page.wait_for_selector(f"#{conflict}", state="detached")
    page.wait_for_function(f"{ACTIVE}.id === 'inbox'")
    assert "No conflict is waiting" in page.locator("#inbox").inner_text()


# The focused element as a screen reader and a sighted user meet it: name, role, seen.
FOCUSED = """() => {
  const el = document.activeElement;
  const box = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  return {
    text: (el.getAttribute('aria-label') || el.textContent).trim(),
    tag: el.tagName.toLowerCase(),
    expanded: el.getAttribute('aria-expanded'),
    seen: box.width > 2 && box.height > 2 && style.opacity !== '0' && style.visibility !== 'hidden',
  };
}"""


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_the_first_tab_stops_are_seen_and_named(  # type: ignore[no-untyped-def]
    browser, live_server, django_user_model, javascript
) -> None:
    user = django_user_model.objects.create_user("ada", password="analytical-engine", is_staff=True)
    page = new_page(browser, live_server, user, java_script_enabled=javascript)
    try:
        # Wide: the skip link, the brand, then the navigation; the Menu toggle is no tab stop.
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto(f"{live_server.url}/overview/")
        stops = []
        for _ in range(3):
            page.keyboard.press("Tab")
            stops.append(page.evaluate(FOCUSED))
        assert [stop["text"] for stop in stops] == ["Skip to content", "spaceduck", "Overview"]
        assert all(stop["seen"] for stop in stops), stops

        # A phone: the third stop is the Menu, named and seen (a button with script, which
        # says whether the menu is open; the checkbox under its label without).
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(f"{live_server.url}/overview/")
        for _ in range(3):
            page.keyboard.press("Tab")
        menu = page.evaluate(FOCUSED)
        assert menu["text"] == "Menu"
        if javascript:
            assert (menu["tag"], menu["expanded"], menu["seen"]) == ("button", "false", True)
            page.keyboard.press("Enter")
            assert page.locator("#site-nav").is_visible()
            assert page.evaluate(FOCUSED)["expanded"] == "true"
            page.keyboard.press("Tab")
            assert page.evaluate(FOCUSED)["text"] == "Overview"
            page.keyboard.press("Escape")  # closes it, the focus back on its button
            assert not page.locator("#site-nav").is_visible()
            assert page.evaluate(FOCUSED)["text"] == "Menu"
        else:
            assert menu["tag"] == "input"
            page.keyboard.press("Space")
            assert page.locator("#site-nav").is_visible()
    finally:
        page.context.close()


def test_approving_in_the_viewer_moves_the_focus_to_the_next_candidate(staff_page) -> None:  # type: ignore[no-untyped-def]
    seed_every_page()
    page = staff_page
    page.goto(f"{page.base}/?status=candidate")
    rows = page.locator("#memory-rows > tr")
    ids = rows.evaluate_all("rows => rows.map(row => row.id)")
    assert len(ids) >= 2
    page.locator(f"#{ids[0]}").get_by_role("button", name="Approve").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#{ids[0]}.status-active")
    page.wait_for_function(f"{ACTIVE}.id === '{ids[1]}'")
    # The last one: the focus stays on its row, which now says it is active.
    for row in ids[1:]:
        page.locator(f"#{row}").get_by_role("button", name="Archive").click()
        page.wait_for_selector(f"#{row}.status-archived")
    page.wait_for_function(f"{ACTIVE}.id === '{ids[-1]}'")
