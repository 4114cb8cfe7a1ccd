"""Tokens in Chromium: make one on /tokens/, copy its secret from the page, use it on the API,
revoke it through its confirmation, and the API refuses it; with htmx and with JavaScript off."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from spaceduck.models import ApiToken
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
# Straight to 127.0.0.1, whatever HTTP(S)_PROXY a developer has set.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def api_status(base: str, secret: str) -> int:
    request = urllib.request.Request(
        f"{base}/api/memories?namespace=user:alice",
        headers={"Authorization": f"Bearer {secret}"},
    )
    try:
        with _OPENER.open(request, timeout=15) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def fill_the_form(page, name: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{page.base}/tokens/")
    page.fill("#id_name", name)
    page.fill("#id_namespaces", "user:alice")
    page.check("#token-create input[name=permissions][value=write]")
    page.fill("#id_expires_in_days", "30")
    page.get_by_role("button", name="Create token").click()


def test_create_use_copy_and_revoke_a_token(staff_page) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=page.base)
    fill_the_form(page, "browser agent")
    page.wait_for_selector("#token-secret-value")
    assert "will not be shown again" in page.locator("#token-secret").inner_text()
    secret = page.locator("#token-secret-value").input_value()
    assert secret.startswith("sd_")
    assert page.url == f"{page.base}/tokens/"  # htmx swapped the section; the URL holds nothing

    copy = page.locator("#token-secret button.copy")
    assert copy.is_visible()  # shown by the script
    copy.click()
    page.wait_for_selector("#token-secret .copy-said:has-text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == secret

    token = ApiToken.objects.get(name="browser agent")
    assert (token.permissions, token.created_by) == (["read", "write"], "staff:ada")
    assert api_status(page.base, secret) == 200

    page.reload()  # the secret is gone for good
    assert page.locator("#token-secret-value").count() == 0
    assert secret not in page.content()

    row = page.locator(f"#token-{token.pk}")
    row.get_by_role("link", name="Revoke…").click()
    confirm = page.locator(f"#confirm-revoke-{token.pk}")
    confirm.wait_for()
    assert api_status(page.base, secret) == 200  # asking changed nothing
    confirm.get_by_role("button", name="Revoke").click()
    page.wait_for_selector(f"#token-{token.pk}.token-revoked")
    assert "revoked." in page.locator("#flash").inner_text()
    assert "by staff:ada" in page.locator(f"#token-{token.pk}").inner_text()
    assert api_status(page.base, secret) == 401


def test_the_same_without_javascript(browser, live_server, django_user_model) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.set_default_timeout(15_000)
        user = django_user_model.objects.create_user("ada", password="x-123456", is_staff=True)
        log_in(context, live_server.url, user)
        page.base = live_server.url
        fill_the_form(page, "plain agent")
        page.wait_for_selector("#token-secret-value")
        secret = page.locator("#token-secret-value").input_value()
        assert not page.locator("#token-secret button.copy").is_visible()  # no script, no button
        assert api_status(page.base, secret) == 200

        token = ApiToken.objects.get(name="plain agent")
        page.locator(f"#token-{token.pk}").get_by_role("link", name="Revoke…").click()
        page.wait_for_url(f"{page.base}/tokens/{token.pk}/revoke/")  # the confirmation page
        page.get_by_role("button", name="Revoke").click()
        page.wait_for_url(f"{page.base}/tokens/")
        assert "revoked." in page.locator("#flash").inner_text()
        assert "revoked" in page.locator(f"#token-{token.pk} .token-state").inner_text()
        assert api_status(page.base, secret) == 401
    finally:
        context.close()
