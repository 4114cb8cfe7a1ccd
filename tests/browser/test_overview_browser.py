"""A person checks on the service in real Chromium: the overview (a dead worker in red),
a count that leads to its memories, and a fact deleted after confirming."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import Fact
from memories.write.services import memory_create, set_fact
from spaceduck.models import WorkerHeartbeat

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_overview_shows_a_dead_worker_in_red_and_leads_to_the_memories(
    staff_page, settings
) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    settings.HUEY_IMMEDIATE = False  # as in production: a worker is expected
    silent_since = timezone.now() - timedelta(minutes=10)
    WorkerHeartbeat.objects.create(worker_id="host:1", beat_at=silent_since)
    memory_create(namespace="user:alice", kind="fact", content="Alice likes tea.", actor="t")
    memory_create(namespace="user:alice", kind="episode", content="Alice went to Porto.", actor="t")
    memory_create(namespace="user:bob", kind="fact", content="Bob likes coffee.", actor="t")

    page.goto(page.base + "/overview/")
    worker = page.locator("#worker-card")
    assert "Worker down" in worker.inner_text()
    color = worker.evaluate("element => getComputedStyle(element).color")
    red, green, blue = (int(part) for part in color[color.index("(") + 1 : -1].split(",")[:3])
    assert red > 120, color  # red text
    assert red > 2 * max(green, blue), color
    assert "no background worker has beaten" in page.locator(".problems").inner_text()

    row = page.locator("tr.namespace-row", has_text="user:alice")
    assert row.locator("td").nth(1).inner_text() == "2"  # total
    row.locator("a[href*='kind=episode']").click()
    page.wait_for_url("**/?namespace=user%3Aalice&kind=episode")
    listed = page.locator("#memory-list tbody tr .content").all_inner_texts()
    assert listed == ["Alice went to Porto."]


def test_delete_a_fact_after_confirming_it(staff_page) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    set_fact("user:alice", "prefs/theme", {"mode": "dark"}, ttl_ms=3_600_000)
    set_fact("user:alice", "lang", "en")
    page.goto(page.base + "/facts/?namespace=user:alice")
    page.evaluate("window.__marker = 'same page'")
    row = page.locator("tr.fact-row", has_text="prefs/theme")
    assert '"mode": "dark"' in row.locator("pre.fact-value").inner_text()
    row.locator("text=Delete…").click()
    confirm = row.locator("form.fact-confirm")
    confirm.wait_for()
    assert "Delete fact prefs/theme from user:alice?" in confirm.inner_text()
    assert Fact.objects.filter(key="prefs/theme").exists()  # asking deletes nothing
    confirm.locator("button[type=submit]").click()
    page.wait_for_function("document.querySelectorAll('tr.fact-row').length === 1")
    assert "Fact 'prefs/theme' deleted from user:alice." in page.locator("#flash").inner_text()
    assert page.locator("tr.fact-row").inner_text().startswith("lang")
    assert page.evaluate("window.__marker") == "same page"  # the row went, no reload
    assert not Fact.objects.filter(key="prefs/theme").exists()
    assert Fact.objects.filter(key="lang").exists()


def test_the_api_docs_render_with_no_internet(page, live_server) -> None:  # type: ignore[no-untyped-def]
    outside: list[str] = []

    def only_this_server(route) -> None:  # type: ignore[no-untyped-def]
        if route.request.url.startswith(live_server.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    page.goto(live_server.url + "/api/docs")
    page.wait_for_selector(".swagger-ui .opblock-summary-path")  # the operations are listed
    assert "spaceduck" in page.locator(".swagger-ui .info .title").inner_text()
    assert outside == []
