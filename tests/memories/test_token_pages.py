"""The Tokens page (``/tokens/``): list, create (the secret shown once), revoke after
confirming; with and without htmx; who did it recorded; bad input a message, never a 500."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from spaceduck.core.tokens import token_create
from spaceduck.models import ApiToken
from tests.conftest import Actor

pytestmark = pytest.mark.django_db
PAGE = "/tokens/"
HTMX = {"HX-Request": "true"}
SECRET = re.compile(r'id="token-secret-value" value="(sd_[^"]+)"')


def _once(client: Client) -> str:
    html = client.get(PAGE).content.decode()
    found = re.search(r'name="once" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


def _form(client: Client, **fields: Any) -> dict[str, Any]:
    return {
        "name": "laptop agent",
        "namespaces": "user:alice, user:bob",
        "permissions": ["read", "write"],
        "once": _once(client),
        **fields,
    }


def _secret(html: str) -> str:
    found = SECRET.search(html)
    assert found is not None, "no secret on the page"
    return found.group(1)


def _api_status(secret: str) -> int:
    agent = Actor(secret=secret, client=Client())
    return int(agent.get("/api/memories", {"namespace": "user:alice"}).status_code)


def test_the_page_lists_tokens_with_grants_use_expiry_and_state(staff_client: Client) -> None:
    token_create(name="reader", namespaces=["user:alice"], permissions=["read"], created_by="cli")
    soon = timezone.now() + timedelta(days=3)
    token_create(name="later", namespaces=["user:*"], permissions=["admin"], expires_at=soon)
    gone = token_create(name="gone", namespaces=["*"], permissions=["read"]).token
    gone.revoke(by="staff:ada")
    old = token_create(name="old", namespaces=["user:bob"], permissions=["read"]).token
    ApiToken.objects.filter(pk=old.pk).update(expires_at=timezone.now())

    response = staff_client.get(PAGE)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'href="/tokens/"' in html  # in the navigation
    for text in ("reader", "<code>user:alice</code>", "by cli", "never", "admin", "<code>*</code>"):
        assert text in html
    assert f"{soon:%Y-%m-%d %H:%M}" in html
    assert 'class="token-row token-active"' in html
    assert re.search(f'id="token-{gone.pk}" class="token-row token-revoked"', html)
    assert re.search(f'id="token-{old.pk}" class="token-row token-expired"', html)
    assert "by staff:ada" in html
    assert f'href="/tokens/{gone.pk}/revoke/"' not in html  # nothing left to revoke
    assert f'href="/tokens/{old.pk}/revoke/"' in html  # an expired token can still be revoked
    assert 'data-maxchars="100"' in html  # the name's limit (the live counter), as the model's


def test_non_staff_are_sent_to_the_login(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    token = token_create(name="t", namespaces=["user:alice"], permissions=["read"]).token
    client.force_login(django_user_model.objects.create_user("eve", password="pw-eve-12345"))
    for response in (
        client.get(PAGE),
        client.post(PAGE, {"name": "x", "namespaces": "*", "permissions": ["admin"], "once": "a"}),
        client.get(f"/tokens/{token.pk}/revoke/"),
        client.post(f"/tokens/{token.pk}/revoke/"),
    ):
        assert response.status_code == 302
        assert "/login/" in response["Location"]
    assert list(ApiToken.objects.values_list("name", "revoked_at")) == [("t", None)]


@pytest.mark.parametrize("htmx", [False, True])
def test_creating_shows_the_secret_once_and_it_works(staff_client: Client, htmx: bool) -> None:
    headers = HTMX if htmx else {}
    response = staff_client.post(PAGE, _form(staff_client, expires_in_days="30"), headers=headers)
    assert response.status_code == 201
    assert "no-store" in response["Cache-Control"]
    html = response.content.decode()
    secret = _secret(html)
    assert "it will not be shown again" in html
    assert html.count(secret) == 1
    if htmx:  # the section only, with the list in it
        assert html.lstrip().startswith('<section id="tokens-section">')
        assert "<nav" not in html
    else:
        assert "<!doctype html>" in html
    token = ApiToken.objects.get(name="laptop agent")
    assert (token.namespaces, token.permissions) == (["user:alice", "user:bob"], ["read", "write"])
    assert token.created_by == "staff:staff"
    assert token.expires_at is not None
    assert timedelta(days=29) < token.expires_at - timezone.now() <= timedelta(days=30)
    assert f'id="token-{token.pk}"' in html
    assert _api_status(secret) == 200

    # Never again: not on the next page, not in the session, not after sending the form again.
    assert secret not in staff_client.get(PAGE).content.decode()
    assert secret not in str(dict(staff_client.session))
    assert secret not in response.get("Location", "")


def test_sending_the_same_form_again_makes_no_second_token(staff_client: Client) -> None:
    form = _form(staff_client)
    assert staff_client.post(PAGE, form).status_code == 201
    again = staff_client.post(PAGE, form)  # a reload of the answer sends the POST again
    assert again.status_code == 409
    html = again.content.decode()
    assert "sent already" in html
    assert 'id="token-secret-value"' not in html
    assert ApiToken.objects.count() == 1


def test_an_expiry_date_means_the_start_of_that_day(staff_client: Client) -> None:
    day = (timezone.now() + timedelta(days=10)).date()
    response = staff_client.post(PAGE, _form(staff_client, expires_on=day.isoformat()))
    assert response.status_code == 201
    token = ApiToken.objects.get()
    assert token.expires_at == datetime(day.year, day.month, day.day, tzinfo=UTC)


@pytest.mark.parametrize("htmx", [False, True])
@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": "n" * 101}, "at most 100 characters"),
        ({"name": "  "}, "required"),
        ({"namespaces": "robots:*"}, "unknown kind"),
        ({"namespaces": "user:a:b"}, "namespace grant"),
        ({"namespaces": " , "}, "at least one namespace grant"),
        ({"permissions": []}, "required"),
        ({"permissions": ["fly"]}, "not one of the available choices"),
        ({"expires_in_days": "0"}, "greater than or equal to 1"),
        ({"expires_on": "2001-01-01"}, "in the past"),
        ({"expires_on": "not a date"}, "Enter a valid date"),
        ({"expires_in_days": "3", "expires_on": "2999-01-01"}, "not both"),
        ({"once": ""}, "required"),
    ],
)
def test_bad_input_is_shown_in_the_form(
    staff_client: Client, fields: dict[str, Any], message: str, htmx: bool
) -> None:
    response = staff_client.post(PAGE, _form(staff_client, **fields), headers=HTMX if htmx else {})
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert 'class="form-errors"' in html
    assert 'id="token-create"' in html  # the form is still there, to correct
    assert html.lstrip().startswith('<section id="tokens-section">') == htmx
    assert 'id="token-secret-value"' not in html
    assert not ApiToken.objects.exists()


def test_revoking_asks_first_then_records_who(staff_client: Client) -> None:
    created = token_create(name="agent", namespaces=["user:alice"], permissions=["read"])
    url = f"/tokens/{created.token.pk}/revoke/"
    confirm = staff_client.get(url)
    assert confirm.status_code == 200
    html = confirm.content.decode()
    assert "<!doctype html>" in html
    assert 'class="confirm token-confirm"' in html
    assert "hx-post" not in html  # a plain form without htmx
    assert ApiToken.objects.get().revoked_at is None  # asking changes nothing

    done = staff_client.post(url, follow=True)
    assert done.redirect_chain == [("/tokens/", 302)]
    assert "Token &#x27;agent&#x27;" in done.content.decode()
    token = ApiToken.objects.get()
    assert token.revoked_by == "staff:staff"
    assert token.state == "revoked"
    assert _api_status(created.secret) == 401

    again = staff_client.post(url)
    assert again.status_code == 409
    assert "revoked already" in again.content.decode()
    assert "by staff:staff" in again.content.decode()
    assert staff_client.get(url).status_code == 409  # no confirmation for a revoked token


def test_revoking_with_htmx_swaps_the_section_and_flashes(staff_client: Client) -> None:
    created = token_create(name="agent", namespaces=["user:alice"], permissions=["read"])
    url = f"/tokens/{created.token.pk}/revoke/"
    confirm = staff_client.get(url, headers=HTMX)
    html = confirm.content.decode()
    assert confirm.status_code == 200
    assert html.lstrip().startswith("<form")
    assert 'hx-target="#tokens-section"' in html

    done = staff_client.post(url, headers=HTMX)
    assert done.status_code == 200
    html = done.content.decode()
    assert html.lstrip().startswith('<section id="tokens-section">')
    assert 'id="flash" role="status" aria-live="polite" hx-swap-oob="innerHTML"' in html
    assert "revoked." in html
    assert "token-row token-revoked" in html
    assert ApiToken.objects.get().revoked_by == "staff:staff"

    again = staff_client.post(url, headers=HTMX)
    assert again.status_code == 409
    assert again["HX-Retarget"] == "#flash"  # the section stays as it is
    assert "revoked already" in again.content.decode()


@pytest.mark.parametrize("htmx", [False, True])
@pytest.mark.parametrize("token_id", ["424242", "99999999999999999999"])
def test_revoking_a_token_that_does_not_exist_is_a_404(
    staff_client: Client, htmx: bool, token_id: str
) -> None:
    for method in (staff_client.get, staff_client.post):
        response = method(f"/tokens/{token_id}/revoke/", headers=HTMX if htmx else {})
        assert response.status_code == 404
        assert f"No token has the number {token_id}." in response.content.decode()
        if htmx:
            assert response["HX-Retarget"] == "#flash"
        else:
            assert 'href="/tokens/"' in response.content.decode()  # a page with the navigation


def test_other_methods_are_refused(staff_client: Client) -> None:
    assert staff_client.delete(PAGE).status_code == 405
    assert staff_client.put("/tokens/1/revoke/").status_code == 405


def test_the_create_form_needs_the_csrf_token(django_user_model) -> None:  # type: ignore[no-untyped-def]
    client = Client(enforce_csrf_checks=True)
    client.force_login(django_user_model.objects.create_user("s", password="pw", is_staff=True))
    response = client.post(PAGE, {"name": "x", "namespaces": "*", "permissions": ["admin"]})
    assert response.status_code == 403
    assert not ApiToken.objects.exists()


def test_the_list_is_paged_newest_first(staff_client: Client) -> None:
    made = [
        token_create(name=f"agent-{n}", namespaces=["user:alice"], permissions=["read"]).token.pk
        for n in range(55)
    ]
    first = staff_client.get("/tokens/").content.decode()
    rows = re.findall(r'<tr id="token-(\d+)"', first)
    assert [int(pk) for pk in rows] == sorted(made, reverse=True)[:50]
    older = re.search(r'href="/tokens/\?before=(\d+)"', first)
    assert older is not None
    second = staff_client.get(f"/tokens/?before={older.group(1)}", headers=HTMX).content.decode()
    assert [int(pk) for pk in re.findall(r'<tr id="token-(\d+)"', second)] == sorted(made)[:5][::-1]
    assert "?before=" not in second
    assert "← Newest" in second
    # A cursor that is not a number shows the first page, as the list's own links never send one.
    assert (
        re.findall(r'<tr id="token-(\d+)"', staff_client.get("/tokens/?before=x").content.decode())
        == rows
    )
