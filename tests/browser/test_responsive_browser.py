"""Responsive layout in Chromium (issue 29 item 10): one column and a folded navigation on a
390 px phone, with JavaScript off too; wide tables scroll inside their own box; the system's
dark colour scheme honoured; the admin's change lists fit a 1280 px screen. (Under 600 px
the lists are cards: test_phone_lists_browser.py.)"""

from __future__ import annotations

import pytest

from memories.extraction.types import candidate_from_api
from memories.models import Memory, Message, Thread
from memories.write.ingest import memory_write
from memories.write.services import memory_create
from notes.models import Note
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_NS = "user:a-very-long-namespace-name-for-testing"
LONG = (
    "The user keeps a very long list of preferences about deployments, reviews and "
    "holidays, written without a break: "
    + "supercalifragilisticexpialidocious-" * 6
    + " and then a long ordinary sentence that goes on and on. " * 8
)
PHONE = {"width": 390, "height": 844}
NO_OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"


def seed() -> Memory:
    """A long memory in a long namespace, a candidate waiting, and an unsure flip in the inbox."""
    memory = memory_create(
        namespace=LONG_NS, kind="fact", title="A long one", content=LONG, actor="t"
    )
    memory_create(namespace=LONG_NS, kind="fact", content="Short and sweet.", actor="t")
    memory_create(
        namespace=LONG_NS, kind="fact", content="Maybe: " + LONG, status="candidate", actor="t"
    )
    for _ in range(2):
        memory_write(
            candidate_from_api({"kind": "fact", "content": "The user prefers tea over coffee."}),
            namespace=LONG_NS,
            actor="token:agent",
        )
    memory_write(
        candidate_from_api({"kind": "fact", "content": "The user prefers coffee over tea."}),
        namespace=LONG_NS,
        actor="token:agent",
    )
    return memory


def phone(browser, live_server, user, **options):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport=PHONE, **options)
    log_in(context, live_server.url, user)
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_phone_pages_fit_the_screen_in_one_column_with_a_folded_menu(
    browser, live_server, django_user_model, javascript
) -> None:  # type: ignore[no-untyped-def]
    memory = seed()
    user = django_user_model.objects.create_user("ada", password="analytical-engine", is_staff=True)
    page = phone(browser, live_server, user, java_script_enabled=javascript)
    try:
        for path in (f"/memories/{memory.pk}/", "/", "/review/memories/", "/review/conflicts/"):
            page.goto(f"{live_server.url}{path}")
            assert page.evaluate(NO_OVERFLOW), path
            # The navigation is folded behind "Menu", and a tap opens it: without script the
            # checkbox's label, with it a button that says whether the menu is open.
            nav = page.locator("#site-nav")
            if javascript:
                menu = page.get_by_role("button", name="Menu", exact=True)
                assert page.locator("label.nav-toggle-label").is_hidden(), path
            else:
                menu = page.locator("label.nav-toggle-label")
            assert menu.is_visible(), path
            assert menu.inner_text().strip().endswith("Menu")
            assert not nav.is_visible(), path
            menu.click()
            assert nav.is_visible(), path
            assert nav.get_by_role("link", name="Overview").is_visible()
            assert page.evaluate(NO_OVERFLOW), path
            if javascript:
                assert menu.get_attribute("aria-expanded") == "true"
            menu.click()
            assert not nav.is_visible(), path
            if javascript:
                assert menu.get_attribute("aria-expanded") == "false"

        # The memory page: one column, the namespace on a line or two rather than letter by letter.
        page.goto(f"{live_server.url}/memories/{memory.pk}/")
        columns = page.locator(".columns > section")
        first, second = columns.nth(0).bounding_box(), columns.nth(1).bounding_box()
        assert second["y"] >= first["y"] + first["height"]  # stacked, not side by side
        assert first["width"] > 300
        namespace = page.locator("dl.fields dd code").first.bounding_box()
        assert namespace["height"] < 3 * 24  # a namespace letter by letter is ~40 lines high

        # Under 600 px the rows are cards (tests/browser/test_phone_lists_browser.py); from
        # 600 to 800 px wide tables scroll inside their box instead of widening the page.
        page.set_viewport_size({"width": 700, "height": 844})
        page.goto(f"{live_server.url}/?namespace={LONG_NS}")
        box = page.locator("#memory-list .table-scroll").first
        assert box.evaluate("el => getComputedStyle(el).overflowX") == "auto"
        assert box.evaluate("el => el.scrollWidth > el.clientWidth")  # it does scroll...
        assert page.evaluate(NO_OVERFLOW)  # ...and the page does not
    finally:
        page.context.close()


def test_the_desktop_keeps_its_navigation_and_two_columns(staff_page) -> None:  # type: ignore[no-untyped-def]
    memory = seed()
    staff_page.set_viewport_size({"width": 1280, "height": 800})
    staff_page.goto(f"{staff_page.base}/memories/{memory.pk}/")
    assert staff_page.locator("#site-nav").is_visible()
    assert not staff_page.locator("label.nav-toggle-label").is_visible()
    columns = staff_page.locator(".columns > section")
    assert columns.nth(0).bounding_box()["y"] == columns.nth(1).bounding_box()["y"]
    assert staff_page.evaluate(NO_OVERFLOW)


LUMINANCE = """([selector, property]) => {
  // The colour as drawn: a transparent background is its nearest painted ancestor's.
  let element = document.querySelector(selector);
  let colour = getComputedStyle(element)[property];
  const transparent = c => /rgba\\(.*, 0\\)$/.test(c);
  while (property === 'backgroundColor' && transparent(colour) && element.parentElement) {
    element = element.parentElement;
    colour = getComputedStyle(element)[property];
  }
  const [r, g, b] = colour.match(/[\\d.]+/g).slice(0, 3).map(Number).map(c => {
    c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}"""


def contrast(page, selector: str) -> float:  # type: ignore[no-untyped-def]
    """WCAG contrast of ``selector``'s text against its own background."""
    fg = page.evaluate(LUMINANCE, [selector, "color"])
    bg = page.evaluate(LUMINANCE, [selector, "backgroundColor"])
    light, dark = max(fg, bg), min(fg, bg)
    return (light + 0.05) / (dark + 0.05)


def test_dark_mode_follows_the_system(browser, live_server, django_user_model) -> None:  # type: ignore[no-untyped-def]
    memory = seed()
    user = django_user_model.objects.create_user("ada", password="analytical-engine", is_staff=True)
    for scheme, dark in (("dark", True), ("light", False)):
        context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 800})
        log_in(context, live_server.url, user)
        page = context.new_page()
        page.set_default_timeout(15_000)
        try:
            page.goto(f"{live_server.url}/?namespace={LONG_NS}")
            background = page.evaluate(LUMINANCE, ["body", "backgroundColor"])
            text = page.evaluate(LUMINANCE, ["body", "color"])
            if not dark:
                assert background > 0.8
                assert text < 0.2
                continue
            assert background < 0.2
            assert text > 0.6
            for selector in (".topbar", "table.memories", "table.memories td", ".kind"):
                assert contrast(page, selector) >= 4.5, selector
            page.goto(f"{live_server.url}/memories/{memory.pk}/")
            for selector in ("blockquote.memory-content", "dl.fields", ".badge, .status-badge"):
                assert contrast(page, selector) >= 4.5, selector
            assert page.evaluate(LUMINANCE, ["#id_content", "backgroundColor"]) < 0.2
            page.goto(f"{live_server.url}/review/conflicts/")
            assert contrast(page, ".conflict .side-old") >= 4.5
            assert contrast(page, ".conflict .side-new") >= 4.5
            # A flash message, the delete confirmation and the memory-off banner.
            page.evaluate(
                """() => {
                  const main = document.querySelector('main');
                  for (const cls of ['flash', 'flash flash-error', 'confirm', 'banner banner-off'])
                    main.insertAdjacentHTML('afterbegin', `<p class="${cls}">Checked</p>`);
                }"""
            )
            for selector in (".flash", ".flash-error", ".confirm", ".banner-off"):
                assert contrast(page, f"main > {selector}") >= 4.5, selector
        finally:
            context.close()


@pytest.mark.parametrize(
    "path", ["/admin/memories/memory/", "/admin/memories/message/", "/admin/notes/note/"]
)
def test_admin_change_lists_fit_1280_px_with_content_truncated(
    browser, live_server, django_user_model, path
) -> None:  # type: ignore[no-untyped-def]
    memory = memory_create(namespace=LONG_NS, kind="fact", content=LONG, actor="t")
    thread = Thread.objects.create(namespace=LONG_NS, title="A thread " * 20)
    Message.objects.create(thread=thread, role="user", content=LONG)
    Note.objects.create(uid="n" * 40, namespace=LONG_NS, namespace_kind="user", body=LONG)
    user = django_user_model.objects.create_superuser("root", password="analytical-engine")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    log_in(context, live_server.url, user)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"{live_server.url}{path}")
        assert page.locator("#result_list tbody tr").count() >= 1
        assert page.evaluate(NO_OVERFLOW), path
        # Nor is the list clipped inside the admin's own scrolling box.
        results = page.locator("#changelist .results")
        assert results.evaluate("el => el.scrollWidth <= el.clientWidth"), path
        for cell in page.locator("#result_list tbody td, #result_list tbody th").all():
            assert len(cell.inner_text()) < 200, cell.inner_text()
        assert "…" in page.locator("#result_list tbody").inner_text()
        if path == "/admin/memories/memory/":
            # The full text is on the change page.
            page.goto(f"{live_server.url}/admin/memories/memory/{memory.pk}/change/")
            assert page.locator("#id_content").input_value() == LONG
    finally:
        context.close()
