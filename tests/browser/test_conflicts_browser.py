"""The conflict inbox in Chromium: a preference flip the engine is unsure about waits as a
pair; replace, keep both and edit into one work with JavaScript off; bulk with htmx on."""

from __future__ import annotations

import pytest

from memories.extraction.types import candidate_from_api
from memories.models import Memory
from memories.recall.hybrid import RecallQuery, recall
from memories.write.ingest import memory_write

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NS = "user:alice"


def unsure_flip(old: str, new: str) -> Memory:
    """``old`` said twice, then ``new`` (another value, no word that it changed)."""
    for _ in range(2):
        first = memory_write(
            candidate_from_api({"kind": "fact", "content": old}), namespace=NS, actor="token:agent"
        )
    second = memory_write(
        candidate_from_api({"kind": "fact", "content": new}), namespace=NS, actor="token:agent"
    )
    assert first.decision == "duplicate"
    assert second.extra.get("conflicts") == [first.matched_memory_id]
    return Memory.objects.get(pk=second.memory_id)


def active() -> list[str]:
    return sorted(
        Memory.objects.filter(namespace=NS, status="active").values_list("content", flat=True)
    )


def test_the_inbox_without_javascript(browser, live_server, django_user_model) -> None:  # type: ignore[no-untyped-def]
    from tests.browser.conftest import log_in

    tea = unsure_flip("The user prefers tea over coffee.", "The user prefers coffee over tea.")
    seat = unsure_flip(
        "The user prefers window seats over aisle seats.",
        "The user prefers aisle seats over window seats.",
    )
    pet = unsure_flip("The user prefers cats over dogs.", "The user prefers dogs over cats.")
    inbox = f"{live_server.url}/review/conflicts/"
    user = django_user_model.objects.create_user("ada", password="analytical-engine", is_staff=True)
    context = browser.new_context(java_script_enabled=False)
    log_in(context, live_server.url, user)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/review/conflicts/")
    assert page.locator("#conflicts-nav .count").inner_text() == "3"
    pair = page.locator(f"#conflict-{tea.conflicts_as_new.get().pk}")
    assert "The user prefers tea over coffee." in pair.locator(".side-old").inner_text()
    assert "The user prefers coffee over tea." in pair.locator(".side-new").inner_text()
    assert "said again" in pair.locator(".why").inner_text()

    pair.get_by_role("button", name="Replace", exact=True).click()
    # Back to the inbox, which offers to undo the decision just taken.
    page.wait_for_url(f"{inbox}?undo={tea.conflicts_as_new.get().pk}")
    assert "replaced" in page.locator("#flash").inner_text()
    assert page.locator("ul.decided-conflicts").get_by_role("button", name="Undo").count() == 1
    assert "The user prefers coffee over tea." in active()
    assert "The user prefers tea over coffee." not in active()
    hits = recall(RecallQuery(namespace=NS, text="tea or coffee?", top_k=10))
    drinks = [hit.memory.content for hit in hits if "tea" in hit.memory.content]
    assert drinks == ["The user prefers coffee over tea."]

    seats = page.locator("article.conflict", has_text="window seats")
    seats.get_by_role("button", name="Keep both").click()
    page.wait_for_url(f"{inbox}?undo={seat.conflicts_as_new.get().pk}")
    assert {
        "The user prefers window seats over aisle seats.",
        "The user prefers aisle seats over window seats.",
    } <= set(active())

    pets = page.locator("article.conflict", has_text="dogs")
    pets.locator("textarea").fill("The user likes dogs and cats alike.")
    pets.get_by_role("button", name="Save as one").click()
    page.wait_for_url(f"{inbox}?undo={pet.conflicts_as_new.get().pk}")
    assert "The user likes dogs and cats alike." in active()
    assert "The user prefers cats over dogs." not in active()
    assert page.get_by_text("No conflict is waiting").is_visible()
    assert page.locator("#conflicts-nav .count").count() == 0
    context.close()


def test_bulk_replace_with_htmx(staff_page) -> None:  # type: ignore[no-untyped-def]
    unsure_flip("The user prefers tea over coffee.", "The user prefers coffee over tea.")
    unsure_flip("The user prefers cats over dogs.", "The user prefers dogs over cats.")
    page = staff_page
    page.goto(f"{page.base}/review/conflicts/")
    page.evaluate("window.__marker = 'same page'")
    for box in page.locator("#conflicts input[name=ids]").all():
        box.check()
    page.get_by_role("button", name="Replace selected").click()
    page.wait_for_selector("text=No conflict is waiting")
    assert "2 conflicts: replaced." in page.locator("#flash").inner_text()
    assert page.evaluate("window.__marker") == "same page"  # swapped by htmx, no reload
    assert active() == ["The user prefers coffee over tea.", "The user prefers dogs over cats."]


def test_a_refused_merge_keeps_the_text_in_place(staff_page) -> None:  # type: ignore[no-untyped-def]
    unsure_flip("The user prefers tea over coffee.", "The user prefers coffee over tea.")
    pet = unsure_flip("The user prefers cats over dogs.", "The user prefers dogs over cats.")
    page = staff_page
    page.set_viewport_size({"width": 1280, "height": 500})
    page.goto(f"{page.base}/review/conflicts/")
    page.evaluate("window.__marker = 'same page'")
    card = page.locator(f"#conflict-{pet.conflicts_as_new.get().pk}")
    mine = "The user likes dogs and cats alike. " + "x" * 1000
    card.locator("textarea").fill(mine)
    card.locator("input[name^=title]").fill("Pets")
    card.get_by_role("button", name="Save as one").click()
    page.wait_for_selector(".merge-refusal")
    refusal = card.locator(".merge-refusal").inner_text()
    assert "content should have at most 1,000 characters" in refusal
    assert "not 1,036" in refusal  # its count
    assert "at most 1,000 characters" in page.locator("#flash").inner_text()
    assert card.locator("textarea").input_value() == mine
    assert card.locator("input[name^=title]").input_value() == "Pets"
    # Only that card was swapped: no reload, and the focus is in the field to shorten.
    assert page.evaluate("window.__marker") == "same page"
    page.wait_for_function(
        "document.activeElement && document.activeElement.tagName === 'TEXTAREA'"
    )
    assert "The user prefers cats over dogs." in active()
