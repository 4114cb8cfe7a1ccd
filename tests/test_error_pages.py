"""Dashboard errors (spaceduck.core.pages): htmx errors go to the flash region and leave the page
intact; every other error is a styled page with the navigation; /api/ answers JSON."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory

from memories.write.services import memory_create
from spaceduck.core.pages import server_error

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def styled(response, status: int, words: str) -> None:  # type: ignore[no-untyped-def]
    html = response.content.decode()
    assert response.status_code == status
    assert "<!doctype html>" in html  # a page, not a bare line of text
    assert words in html
    assert 'href="/review/memories/"' in html  # the navigation is there


def test_an_empty_bulk_decision_with_htmx_leaves_the_queue_and_says_why(
    staff_client: Client,
) -> None:
    memory_create(
        namespace="user:alice",
        kind="fact",
        content="Alice likes tea.",
        actor="t",
        status="candidate",
    )
    answer = staff_client.post("/review/memories/", {"decision": "approve"}, headers=HTMX)
    assert answer.status_code == 400
    assert answer["HX-Retarget"] == "#flash"
    assert answer["HX-Reswap"] == "outerHTML"
    html = answer.content.decode()
    assert html.startswith('<div id="flash">')
    assert "choose at least one memory" in html
    assert "queue" not in html  # nothing that would replace the queue


def test_the_same_error_without_htmx_is_a_styled_page(staff_client: Client) -> None:
    styled(staff_client.post("/review/memories/", {"decision": "approve"}), 400, "choose at least")


@pytest.mark.parametrize(
    "path",
    [
        "/threads/nonexistent/",
        "/memories/abc/",
        "/memories/999999/",
        "/extractions/99999999999999999999/",
        "/no/such/page/",
        "/notes/no-such-note/",
        "/tokens/424242/revoke/",
        "/tokens/99999999999999999999/revoke/",
    ],
)
def test_a_missing_page_is_styled_with_the_navigation(staff_client: Client, path: str) -> None:
    styled(staff_client.get(path), 404, "")


def test_a_missing_page_says_what_is_missing(staff_client: Client) -> None:
    styled(staff_client.get("/memories/999999/"), 404, "No memory has this number.")
    styled(staff_client.get("/no/such/page/"), 404, "There is no page at /no/such/page/.")
    styled(staff_client.get("/threads/nonexistent/"), 404, "nonexistent")


def test_an_unknown_api_path_answers_json() -> None:
    answer = Client().get("/api/no/such/route")
    assert answer.status_code == 404
    assert answer["Content-Type"].startswith("application/json")
    assert answer.json()["detail"]


def test_a_server_error_page_needs_no_database_and_shows_the_navigation() -> None:
    answer = server_error(RequestFactory().get("/overview/"))
    assert answer.status_code == 500
    html = answer.content.decode()
    assert 'id="error-page"' in html
    assert 'href="/overview/"' in html
    api = server_error(RequestFactory().get("/api/memories"))
    assert api.status_code == 500
    assert b"detail" in api.content
