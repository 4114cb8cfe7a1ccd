"""A person reviews memory in real Chromium: filter and page, search and ask why, edit and
find by the new words, delete after confirming, reverse a supersession, bulk-approve."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import Memory
from memories.write.services import memory_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NS = "user:alice"


def make(content: str, **fields: object) -> Memory:
    memory = memory_create(namespace=NS, kind="fact", content=content, actor="t")
    if fields:
        Memory.objects.filter(pk=memory.pk).update(**fields)
    return memory


def contents(page) -> list[str]:  # type: ignore[no-untyped-def]
    return page.locator("#memory-list tbody tr .content").all_inner_texts()


def test_filter_and_page_through_memories_and_go_back(staff_page) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    now = timezone.now()
    for i in range(60):
        memory = make(f"Episode number {i:02d}.")
        Memory.objects.filter(pk=memory.pk).update(
            kind="episode", updated_at=now - timedelta(minutes=i)
        )
    make("A plain fact.")
    page.goto(page.base + "/")
    page.evaluate("window.__marker = 'same page'")
    page.select_option("#kind", "episode")
    page.wait_for_function(
        "!document.querySelector('#memory-list').innerText.includes('A plain fact.')"
    )
    assert "kind=episode" in page.url  # the filter is in the address bar
    assert "60 memories match." in page.locator("#memory-list").inner_text()
    first = contents(page)
    assert first[0] == "Episode number 00."
    assert len(first) == 50
    page.click("a.older")
    page.wait_for_function("document.querySelectorAll('#memory-list tbody tr').length === 10")
    assert contents(page)[0] == "Episode number 50."
    assert "after=" in page.url
    assert page.evaluate("window.__marker") == "same page"  # swapped by htmx, no reload
    page.go_back()
    page.wait_for_function("document.querySelectorAll('#memory-list tbody tr').length === 50")
    assert contents(page)[0] == "Episode number 00."


def test_search_and_open_why(staff_page) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    make("Alice plays the oboe in a quartet.")
    make("Alice likes green tea.")
    page.goto(page.base + f"/?namespace={NS}")
    page.fill("#q", "oboe quartet")
    page.wait_for_selector("#memory-list table.recall")
    page.wait_for_load_state("networkidle")  # the last keystroke's search has landed
    hit = page.locator("#memory-list table.recall tbody tr").first
    assert "Alice plays the oboe in a quartet." in hit.inner_text()
    panel = hit.locator("details.why")
    assert not panel.locator("table.why-table").is_visible()
    panel.locator("summary").click()
    assert panel.locator("table.why-table").is_visible()
    why = panel.inner_text().lower()
    for word in ("keyword", "rank #1", "rrf", "importance", "confidence", "recency", "score"):
        assert word in why


def test_edit_a_memory_and_find_it_by_its_new_words(staff_page) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    memory = make("Alice plays the oboe.")
    page.goto(page.base + f"/?namespace={NS}")
    page.click(f"#memory-{memory.pk} a.memory-link")
    page.wait_for_url(f"**/memories/{memory.pk}/")
    page.click("details.edit summary")
    page.fill("#id_content", "Alice plays the theremin.")
    page.click("#edit-form button[type=submit]")
    page.wait_for_selector("text=Saved: content.")
    assert page.locator("blockquote.memory-content").inner_text() == "Alice plays the theremin."
    page.goto(page.base + f"/?namespace={NS}&q=theremin")
    hit = page.locator("#memory-list table.recall tbody tr").first
    assert "Alice plays the theremin." in hit.inner_text()


def test_an_invalid_edit_is_shown_in_the_form(staff_page) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    memory = make("Alice plays the oboe.")
    page.goto(page.base + f"/memories/{memory.pk}/")
    page.click("details.edit summary")
    # The browser checks number ranges itself; the server checks what it cannot.
    assert page.get_attribute("#id_importance", "max") == "1"
    page.select_option("#id_scope", "thread")
    page.click("#edit-form button[type=submit]")
    page.wait_for_selector(".field-errors")
    assert (
        "a thread memory needs the id of its thread" in page.locator(".field-errors").inner_text()
    )
    assert Memory.objects.get(pk=memory.pk).scope == "global"


def test_delete_through_the_confirmation(staff_page) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    memory = make("Alice once lived in Porto.")
    page.goto(page.base + f"/memories/{memory.pk}/")
    page.click("text=Delete…")
    page.wait_for_selector("#confirm-delete")
    assert Memory.objects.filter(pk=memory.pk).exists()
    page.click("#confirm-delete button[type=submit]")
    page.wait_for_url(page.base + "/")
    assert f"Memory {memory.pk} deleted" in page.locator("#flash").inner_text()
    assert not Memory.objects.filter(pk=memory.pk).exists()


def test_reverse_a_supersession(staff_page) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    old = make("Alice lives in Porto.")
    new = make("Alice lives in Lisbon.")
    Memory.objects.filter(pk=old.pk).update(status="superseded", superseded_by=new)
    page.goto(page.base + f"/memories/{new.pk}/")
    page.click(f"a[href='/memories/{old.pk}/']")
    page.wait_for_url(f"**/memories/{old.pk}/")
    page.click("text=Reverse supersession")
    page.wait_for_selector("#memory-page.status-active")
    assert "Supersession reversed" in page.locator("#flash").inner_text()
    assert Memory.objects.get(pk=old.pk).status == "active"
    assert Memory.objects.get(pk=new.pk).status == "archived"


def test_bulk_approve_candidates(staff_page) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    waiting = [make(f"Alice may like genre {i}.", status="candidate") for i in range(3)]
    page.goto(page.base + "/review/memories/")
    assert page.locator("#review-nav .count").inner_text() == "3"
    page.check(f"input[name=ids][value='{waiting[0].pk}']")
    page.check(f"input[name=ids][value='{waiting[2].pk}']")
    page.click("text=Approve selected")
    page.wait_for_function("document.querySelectorAll('#queue tbody tr').length === 1")
    assert page.locator("#review-nav .count").inner_text() == "1"
    assert "2 approved." in page.locator("#flash").inner_text()
    statuses = [Memory.objects.get(pk=m.pk).status for m in waiting]
    assert statuses == ["active", "candidate", "active"]
