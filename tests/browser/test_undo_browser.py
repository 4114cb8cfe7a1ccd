"""Undo a bulk reject in Chromium, from the queue where it was made."""

from __future__ import annotations

import pytest

from memories.models import Memory
from memories.write.services import memory_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_undo_a_bulk_reject(staff_page) -> None:  # type: ignore[no-untyped-def]
    ids = [
        memory_create(
            namespace="user:alice", kind="fact", content=f"Fact {n}.", actor="t", status="candidate"
        ).pk
        for n in range(2)
    ]
    page = staff_page
    page.goto(f"{page.base}/review/memories/")
    for box in page.locator("#bulk input[name=ids]").all():
        box.check()
    page.get_by_role("button", name="Reject selected").click()
    page.wait_for_selector("#undo")
    assert "Just 2 rejected." in page.locator("#undo").inner_text()
    assert set(Memory.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"archived"}
    page.locator("#undo button").click()
    page.wait_for_selector("#queue table.queue")
    assert page.locator("#queue table.queue tbody tr").count() == 2
    assert set(Memory.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"candidate"}


def test_an_undone_candidate_comes_back_in_its_place_with_the_focus(staff_page) -> None:  # type: ignore[no-untyped-def]
    ids = [
        memory_create(
            namespace="user:alice", kind="fact", content=f"Fact {n}.", actor="t", status="candidate"
        ).pk
        for n in range(3)
    ]
    rows = [f"candidate-{pk}" for pk in reversed(ids)]  # newest learnt first
    page = staff_page
    page.goto(f"{page.base}/review/memories/")

    def shown() -> list[str]:
        return page.locator("#queue tr[data-queue-item]").evaluate_all("rs => rs.map(r => r.id)")

    assert shown() == rows
    page.locator(f"#{rows[1]}").get_by_role("button", name="Approve").click()
    page.wait_for_selector("#undo")
    assert shown() == [rows[0], rows[2]]
    page.locator("#undo button").click()
    page.wait_for_function("!document.getElementById('undo')")
    assert shown() == rows  # back in its place, not first
    page.wait_for_function(f"document.activeElement && document.activeElement.id === '{rows[1]}'")
