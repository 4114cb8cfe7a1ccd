"""In Chromium: the live counter counts code points and nothing is cut; the viewer recalls as
one types and keeps the namespace."""

from __future__ import annotations

import pytest

from memories.models import Memory
from memories.write.services import memory_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EMOJI_TITLE = "\U0001f986" * 150  # 150 code points, 300 UTF-16 units


def test_the_counter_counts_code_points_and_a_long_paste_is_refused_not_cut(staff_page) -> None:  # type: ignore[no-untyped-def]
    memory = memory_create(
        namespace="user:alice", kind="fact", content="Alice plays the oboe.", actor="t"
    )
    page = staff_page
    page.goto(f"{page.base}/memories/{memory.pk}/")
    page.locator("details.edit summary").click()
    # A text box shows its count; a one-line field only near its limit (never by focus).
    assert page.locator("#id_content-count").inner_text() == "21 / 1,000"
    assert not page.locator("#id_scope_id-count").is_visible()
    title = page.locator("#id_title")
    title.fill(EMOJI_TITLE)
    assert page.locator("#id_title-count").inner_text() == "150 / 200"
    assert title.evaluate("field => field.validity.valid")  # the browser refuses nothing

    pasted = ("word " * 1040).strip() + "."  # 5,200 characters
    content = page.locator("#id_content")
    content.fill(pasted)
    assert content.evaluate("field => field.value.length") == 5200  # not cut to 1,000
    counter = page.locator("#id_content-count")
    assert counter.inner_text().startswith("5,200 / 1,000: 4,200 over the limit")
    assert "over" in (counter.get_attribute("class") or "")

    page.get_by_role("button", name="Save (re-embedded and re-indexed)").click()
    error = page.locator(".field.has-error .field-errors")
    error.wait_for()
    assert error.inner_text() == (
        "content should have at most 1,000 characters "
        "(SPACEDUCK_MAX_MEMORY_CONTENT_CHARS), not 5,200"
    )
    # The form came back with the whole text and its counter.
    assert page.locator("#id_content").evaluate("field => field.value.length") == 5200
    assert page.locator("#id_content-count").inner_text().startswith("5,200 / 1,000")
    assert Memory.objects.get(pk=memory.pk).content == "Alice plays the oboe."

    # The emoji title alone saves.
    page.locator("#id_content").fill("Alice plays the oboe.")
    page.get_by_role("button", name="Save (re-embedded and re-indexed)").click()
    page.wait_for_function(
        "() => !document.querySelector('.field.has-error') && document.querySelector('h1') !== null"
    )
    page.wait_for_load_state("networkidle")
    assert Memory.objects.get(pk=memory.pk).title == EMOJI_TITLE


def test_the_viewer_recalls_as_one_types_and_keeps_the_namespace(staff_page) -> None:  # type: ignore[no-untyped-def]
    memory_create(namespace="user:alice", kind="fact", content="Alice plays the oboe.", actor="t")
    memory_create(namespace="user:alice", kind="fact", content="Alice keeps bees.", actor="t")
    memory_create(namespace="user:bob", kind="fact", content="Bob plays the oboe.", actor="t")
    page = staff_page
    page.goto(f"{page.base}/?namespace=user%3Aalice")
    page.evaluate("window.__marker = 'same page'")
    page.locator("#q").press_sequentially("oboe", delay=40)  # typed, no Enter
    page.wait_for_selector("#memory-list table.recall")
    page.wait_for_url("**/?*q=oboe*")
    hits = page.locator("#memory-list").inner_text()
    assert "Alice plays the oboe." in hits
    assert "Bob plays" not in hits
    assert page.evaluate("window.__marker") == "same page"

    # Away and back through the navigation: the namespace is still the one chosen.
    page.goto(f"{page.base}/overview/")
    page.locator("#site-nav").get_by_role("link", name="Memories").click()
    page.wait_for_url(f"{page.base}/")
    assert page.locator("#namespace").input_value() == "user:alice"
    page.locator("#q").press_sequentially("bees", delay=40)
    page.wait_for_selector("#memory-list table.recall")
    page.wait_for_url("**/?*q=bees*")
    assert "Alice keeps bees." in page.locator("#memory-list table.recall").first.inner_text()
