"""A person finds a failed extraction in real Chromium and retries it: from the thread to the
record, Retry swaps the status and the candidates in place (htmx); without JavaScript the
same button is a plain form that comes back to the page with a message."""

from __future__ import annotations

import pytest

from memories.models import Extraction
from memories.write.ingest import message_ingest
from memories.write.services import create_thread
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NS = "user:alice"
DOWN = {"attempt": 3, "error": "chat provider answered 503: down", "at": "2024-05-01T12:00:00"}


def _failed_extraction() -> Extraction:
    """A message whose extraction ran out of attempts while the chat provider was down."""
    thread = create_thread(NS, "Moving house")
    extraction = message_ingest(thread.pk, "user", "I live in Lisbon.").extraction
    assert extraction is not None
    Extraction.objects.filter(pk=extraction.pk).update(
        status="failed", attempts=3, errors=[DOWN], candidates=[]
    )
    return extraction


def test_a_failed_extraction_is_retried_from_its_page_without_a_reload(  # type: ignore[no-untyped-def]
    staff_page, live_server
) -> None:
    page = staff_page
    extraction = _failed_extraction()
    assert extraction.message is not None

    page.goto(f"{live_server.url}/extractions/?status=failed")
    page.click(f"#extraction-{extraction.pk} a.extraction-link")
    page.wait_for_url(f"**/extractions/{extraction.pk}/")
    status = page.locator("#extraction-status")
    assert "failed" in status.locator(".status-badge").inner_text()
    assert "chat provider answered 503: down" in status.inner_text()
    assert "No decision: every attempt failed" in page.locator("#candidates").inner_text()

    page.evaluate("window.__marker = 'same page'")
    page.get_by_role("button", name="Retry extraction").click()
    page.wait_for_selector("#extraction-status .extraction-status-done")
    assert page.evaluate("window.__marker") == "same page"  # swapped by htmx, no reload
    assert (
        f"Extraction {extraction.pk} was retried: it is done."
        in page.locator("#flash").inner_text()
    )
    history = page.locator("#extraction-status ol.errors").inner_text()
    assert "chat provider answered 503: down" in history  # the failure stays as history
    assert "retried by staff:ada after 3 attempts" in history
    candidates = page.locator("#candidates")
    assert "The user lives in Lisbon." in candidates.inner_text()  # swapped out of band
    assert page.get_by_role("button", name="Retry extraction").count() == 0

    candidates.locator("a.memory-link").first.click()
    page.wait_for_url("**/memories/*/")
    assert "The user lives in Lisbon." in page.locator("blockquote.memory-content").inner_text()

    record = Extraction.objects.get(pk=extraction.pk)
    assert (record.status, record.attempts) == ("done", 1)


def test_without_javascript_retry_is_a_plain_form_that_comes_back(  # type: ignore[no-untyped-def]
    browser, live_server, django_user_model
) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        user = django_user_model.objects.create_user(
            "ada", password="analytical-engine", is_staff=True
        )
        log_in(context, live_server.url, user)
        page = context.new_page()
        page.set_default_timeout(15_000)
        extraction = _failed_extraction()
        thread_id = Extraction.objects.get(pk=extraction.pk).thread_id
        page.goto(f"{live_server.url}/threads/{thread_id}/")
        page.click(f"a.extraction-link[href='/extractions/{extraction.pk}/']")
        page.wait_for_url(f"**/extractions/{extraction.pk}/")
        page.get_by_role("button", name="Retry extraction").click()
        page.wait_for_selector(".flash")
        assert page.url == f"{live_server.url}/extractions/{extraction.pk}/"  # redirected back
        assert "was retried: it is done." in page.locator("#flash").inner_text()
        assert "done" in page.locator("#extraction-status .status-badge").inner_text()
        assert "The user lives in Lisbon." in page.locator("#candidates").inner_text()
    finally:
        context.close()
