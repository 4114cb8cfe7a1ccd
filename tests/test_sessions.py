"""A reviewer's session that ends mid-work (issue 40, item 1): an htmx action without a
session is sent to spaceduck's login page with HX-Redirect (back to the page afterwards)
and decides nothing; a plain request is redirected as before; the login page is
spaceduck's; a page whose CSRF token a new login rotated says so in the message area."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.sessions.models import Session
from django.test import Client

from memories.models import Memory
from memories.write.services import memory_create
from spaceduck.core.pages import FORM_EXPIRED
from spaceduck.core.sessions import SESSION_ENDED

pytestmark = pytest.mark.django_db

REVIEW = "/review/memories/"
HTMX = {"HX-Request": "true", "HX-Current-URL": "http://testserver/review/memories/?q=tea"}


def candidate() -> Memory:
    memory = memory_create(
        namespace="user:alice", kind="fact", content="The user likes tea.", actor="t"
    )
    Memory.objects.filter(pk=memory.pk).update(status="candidate")
    return memory


def test_an_htmx_decision_after_the_session_ended_redirects_and_decides_nothing(
    staff_client: Client,
) -> None:
    memory = candidate()
    Session.objects.all().delete()  # logged out in another tab
    response = staff_client.post(REVIEW, {"row": f"approve:{memory.pk}"}, headers=HTMX)
    assert response.status_code == 401
    target = urlsplit(response["HX-Redirect"])
    assert target.path == "/admin/login/"
    assert parse_qs(target.query)["next"] == ["/review/memories/?q=tea"]  # the page, not the POST
    assert SESSION_ENDED in response.content.decode()  # in case the header is not followed
    assert response["HX-Retarget"] == "#flash"
    assert Memory.objects.get(pk=memory.pk).status == "candidate"


def test_an_htmx_read_without_a_session_is_sent_to_log_in(client: Client) -> None:
    response = client.get("/", {"kind": "fact"}, headers={"HX-Request": "true"})
    assert response.status_code == 401
    assert urlsplit(response["HX-Redirect"]).path == "/admin/login/"
    assert parse_qs(urlsplit(response["HX-Redirect"]).query)["next"] == ["/?kind=fact"]


def test_a_filter_changed_as_the_session_ended_is_kept_for_after_the_login(
    client: Client,
) -> None:
    """The viewer's filters GET its own path and push it to the address bar: the filter
    being chosen is where the person was going. A poll of another path leads back to the
    page it was made from."""
    on_page = {"HX-Request": "true", "HX-Current-URL": "http://testserver/?kind=episode"}
    response = client.get("/", {"kind": "fact"}, headers=on_page)
    assert parse_qs(urlsplit(response["HX-Redirect"]).query)["next"] == ["/?kind=fact"]
    queue = {"HX-Request": "true", "HX-Current-URL": "http://testserver/review/memories/"}
    poll = client.get("/nav/counts/", headers=queue)
    assert parse_qs(urlsplit(poll["HX-Redirect"]).query)["next"] == ["/review/memories/"]


def test_a_plain_request_without_a_session_is_redirected_as_before(client: Client) -> None:
    memory = candidate()
    response = client.post(REVIEW, {"row": f"approve:{memory.pk}"})
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/?next=")
    assert "HX-Redirect" not in response
    assert Memory.objects.get(pk=memory.pk).status == "candidate"


def test_the_login_page_is_spaceducks_and_leads_back(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    django_user_model.objects.create_user("ada", password="analytical-engine", is_staff=True)
    page = client.get("/admin/login/", {"next": "/review/memories/"}).content.decode()
    assert "Log in to spaceduck" in page
    assert "Django administration" not in page
    assert 'class="brand"' in page  # the dashboard's own page
    # ... without the navigation: to a visitor every link of it leads back here.
    assert 'id="site-nav"' not in page
    assert "nav-counts" not in page
    logged_in = client.post(
        "/admin/login/?next=/review/memories/",
        {"username": "ada", "password": "analytical-engine", "next": "/review/memories/"},
    )
    assert logged_in.status_code == 302
    assert logged_in["Location"] == "/review/memories/"


def test_a_wrong_password_is_said_on_the_page(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    django_user_model.objects.create_user("ada", password="analytical-engine", is_staff=True)
    response = client.post("/admin/login/", {"username": "ada", "password": "nope"})
    assert response.status_code == 200
    assert "correct username and password" in response.content.decode()


def test_the_admin_names_spaceduck(admin_client: Client) -> None:
    page = admin_client.get("/admin/").content.decode()
    assert "spaceduck administration" in page
    assert "Django administration" not in page


def test_logging_out_lands_on_spaceducks_page(staff_client: Client) -> None:
    page = staff_client.post("/admin/logout/").content.decode()
    assert "You have logged out" in page
    assert "Django administration" not in page


def test_a_page_left_open_across_a_new_login_says_it_is_out_of_date(django_user_model) -> None:  # type: ignore[no-untyped-def]
    user = django_user_model.objects.create_user("ada", password="x-pw-123", is_staff=True)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    memory = candidate()
    response = client.post(
        REVIEW, {"row": f"approve:{memory.pk}"}, headers={**HTMX, "X-CSRFToken": "stale" * 8}
    )
    assert response.status_code == 403
    assert FORM_EXPIRED in response.content.decode()
    assert response["HX-Retarget"] == "#flash"
    assert Memory.objects.get(pk=memory.pk).status == "candidate"
    plain = client.post(REVIEW, {"row": f"approve:{memory.pk}"})
    assert plain.status_code == 403
    assert 'id="site-nav"' in plain.content.decode()
