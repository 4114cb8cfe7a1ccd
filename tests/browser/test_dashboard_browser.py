"""A person logs in through the admin form and filters memories with htmx, in Chromium."""

from __future__ import annotations

import pytest

from memories.write.services import memory_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_staff_user_logs_in_and_filters_memories_without_a_reload(
    page,
    live_server,
    django_user_model,
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    django_user_model.objects.create_user("ada", password="analytical-engine", is_staff=True)
    memory_create(namespace="user:alice", kind="fact", content="Alice likes <b>tea</b>.", actor="t")
    memory_create(
        namespace="user:bob",
        kind="procedure",
        content="Bob never deploys on Fridays.",
        procedure_subtype="constraint",
        actor="t",
    )

    page.goto(f"{live_server.url}/")
    assert "/admin/login/" in page.url
    page.fill("#id_username", "ada")
    page.fill("#id_password", "analytical-engine")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    rows = page.locator("#memory-list tbody tr")
    assert rows.count() == 2
    assert page.get_by_text("Alice likes <b>tea</b>.").is_visible()  # escaped, shown literally

    page.evaluate("window.__marker = 'same page'")
    page.fill("#namespace", "user:bob")
    page.press("#namespace", "Enter")
    page.wait_for_function("document.querySelectorAll('#memory-list tbody tr').length === 1")
    assert "Bob never deploys" in page.locator("#memory-list").inner_text()
    assert page.evaluate("window.__marker") == "same page"  # swapped by htmx, no reload
    page.screenshot(path=str(tmp_path / "dashboard.png"), full_page=True)

    # Recall from the viewer: the same hybrid search agents get, with its reasons.
    memory_create(namespace="user:bob", kind="fact", content="Bob plays the banjo.", actor="t")
    page.fill("#q", "banjo")
    page.wait_for_selector("#memory-list table.recall")
    page.wait_for_load_state("networkidle")
    first = page.locator("#memory-list tbody tr").first
    assert "Bob plays the banjo." in first.inner_text()
    first.locator("details.why summary").click()
    why = first.locator("details.why").inner_text().lower()
    assert "rank #1, bm25" in why
    assert "rrf" in why
    assert page.evaluate("window.__marker") == "same page"

    # The approval gate for memories: a candidate waits for a person.
    from memories.models import Memory

    pending = memory_create(
        namespace="user:bob", kind="fact", content="Bob may be moving to Oslo.", actor="t"
    )
    Memory.objects.filter(pk=pending.pk).update(status="candidate")
    page.fill("#q", "")
    page.select_option("#status", "candidate")
    page.wait_for_selector(f"#memory-{pending.pk}.status-candidate")
    page.locator(f"#memory-{pending.pk}").get_by_role("button", name="Approve").click()
    page.wait_for_selector(f"#memory-{pending.pk}.status-active")
    assert Memory.objects.get(pk=pending.pk).status == "active"
    assert page.evaluate("window.__marker") == "same page"
