"""Real Chromium (Debian's package) driven by Playwright, against pytest-django's live server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from spaceduck.ops.screenshots import CHROMIUM_ARGS

CHROMIUM = os.environ.get("SPACEDUCK_TEST_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs it (apt-get install chromium)")
    # Playwright's sync API runs an event loop in this thread; Django would then
    # refuse the test's own (synchronous) database calls without this.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser) -> Iterator[object]:  # type: ignore[no-untyped-def]
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def log_in(context, live_server_url: str, user) -> None:  # type: ignore[no-untyped-def]
    """Log `user` in to a Playwright browser context: the session cookie of a real login."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"]
    context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": live_server_url}])


@pytest.fixture
def staff_page(page, live_server, django_user_model):  # type: ignore[no-untyped-def]
    """A Chromium page logged in as the staff user "ada", with `page.base` the live server."""
    user = django_user_model.objects.create_user("ada", password="analytical-engine", is_staff=True)
    log_in(page.context, live_server.url, user)
    page.base = live_server.url
    return page
