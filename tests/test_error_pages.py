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
    assert html.startswith('<div id="flash" role="status" aria-live="polite">')
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


# --- 405, 403 (CSRF) and 500: the page with the navigation, or the message area for htmx ----


def flashed(response, status: int, words: str) -> None:  # type: ignore[no-untyped-def]
    """An htmx error: the message for #flash, nothing else of a page."""
    html = response.content.decode()
    assert response.status_code == status
    assert response["HX-Retarget"] == "#flash"
    assert response["HX-Reswap"] == "outerHTML"
    assert html.startswith('<div id="flash" role="status" aria-live="polite">'), html[:200]
    assert words in html
    assert "<nav" not in html


@pytest.mark.parametrize(
    "path", ["/memories/{pk}/edit/", "/memories/{pk}/decision/", "/memories/{pk}/status/"]
)
def test_a_post_only_address_opened_by_hand_is_a_405_page_with_the_navigation(
    staff_client: Client, path: str
) -> None:
    memory = memory_create(namespace="user:alice", kind="fact", content="Tea.", actor="t")
    url = path.format(pk=memory.pk)
    answer = staff_client.get(url)
    styled(answer, 405, f"{url} is not a page to open with GET: it takes POST")
    assert answer["Allow"] == "POST"
    assert "Method not allowed" in answer.content.decode()
    # The way back is to the memory whose button the address belongs to.
    assert f'<a href="/memories/{memory.pk}/" class="error-back">' in answer.content.decode()
    flashed(staff_client.get(url, headers=HTMX), 405, "it takes POST")


def test_a_405_leads_back_to_the_page_above_only_when_there_is_one(staff_client: Client) -> None:
    answer = staff_client.get("/people/erase/")
    assert answer.status_code == 405
    assert '<a href="/people/" class="error-back">' in answer.content.decode()
    nowhere = staff_client.post("/overview/")
    assert nowhere.status_code == 405
    assert "error-back" not in nowhere.content.decode()  # its page above is the viewer, "/"


def test_a_405_of_the_api_stays_json(owner) -> None:  # type: ignore[no-untyped-def]
    answer = owner.put("/api/tokens/me", {})
    assert answer.status_code == 405
    assert answer["Content-Type"].startswith("application/json")


def test_a_form_without_its_csrf_token_is_a_403_page_or_a_message(
    django_user_model,  # type: ignore[no-untyped-def]
) -> None:
    user = django_user_model.objects.create_user("strict", password="pw-strict-1", is_staff=True)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    answer = client.post("/review/memories/", {"decision": "approve"})
    styled(answer, 403, "This form has expired or did not come from this site")
    assert "Django" not in answer.content.decode()
    flashed(
        client.post("/review/memories/", {"decision": "approve"}, headers=HTMX),
        403,
        "reload the page and try again",
    )


def test_a_server_error_has_the_whole_navigation_and_asks_no_database(
    django_assert_num_queries,  # type: ignore[no-untyped-def]
) -> None:
    with django_assert_num_queries(0):
        answer = server_error(RequestFactory().get("/overview/"))
    styled(answer, 500, "The error was logged.")
    assert 'id="site-nav"' in answer.content.decode()
    with django_assert_num_queries(0):
        answer = server_error(RequestFactory().get("/overview/", headers=HTMX))
    flashed(answer, 500, "The error was logged.")


def test_an_exception_in_a_view_answers_the_500_page(staff_client: Client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from memories.web.views import overview

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    monkeypatch.setattr(overview, "render", broken)
    staff_client.raise_request_exception = False
    styled(staff_client.get("/overview/"), 500, "The error was logged.")
    flashed(staff_client.get("/overview/", headers=HTMX), 500, "The error was logged.")
