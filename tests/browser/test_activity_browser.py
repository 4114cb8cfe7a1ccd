"""A reviewer reads who did what in real Chromium: the Activity link in the navigation, a
filter that swaps the list (htmx) and keeps it in the address bar, the back button, and the
CSV download with the same filter."""

from __future__ import annotations

import pytest

from memories.write.services import memory_create
from spaceduck.core.tokens import token_create, token_revoke

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NS = "user:alice"


def test_the_activity_log_is_filtered_in_place_and_downloaded(staff_page) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    memory_create(namespace=NS, kind="fact", content="The user lives in Lyon.", actor="token:bot")
    made = token_create(name="helper", namespaces=[NS], permissions=["read"], created_by="cli")
    token_revoke(token_id=made.token.pk, revoked_by="staff:ada")

    page.goto(f"{page.base}/overview/")
    page.locator("#site-nav").get_by_role("link", name="Activity").click()
    page.wait_for_url("**/activity/")
    rows = page.locator("#activity-list tbody tr")
    assert rows.count() == 3
    page.evaluate("window.__marker = 'same page'")

    page.select_option("#kind", "token")
    page.wait_for_url("**/activity/?*kind=token*")
    page.wait_for_function("document.querySelectorAll('#activity-list tbody tr').length === 2")
    assert page.evaluate("window.__marker") == "same page"  # swapped by htmx, no reload
    text = page.locator("#activity-list").inner_text()
    assert "revoked" in text
    assert "token:bot" not in text

    with page.expect_download() as download:
        page.get_by_role("link", name="CSV").click()
    lines = open(download.value.path(), encoding="utf-8").read().splitlines()  # noqa: SIM115
    assert lines[0] == "at,kind,action,actor,namespace,summary,url"
    assert len(lines) == 3
    assert all(",token," in line for line in lines[1:])

    page.go_back()
    page.wait_for_function("document.querySelectorAll('#activity-list tbody tr').length === 3")
