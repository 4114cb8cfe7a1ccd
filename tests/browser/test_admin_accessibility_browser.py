"""The Django admin in Chromium (issue 40 item 6): axe-core finds no serious or critical
violation on any of its pages, in light and dark, wide and on a phone. The dashboard's pages
are walked by test_accessibility_browser; these are the admin's own: the index, every
registered model's change list, a change (or view) form of each model with a row, an add form
of each model that allows adding, a delete confirmation of each that allows deleting (and the
bulk action's), an object's history, the password change, logging out and the login page."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import User
from django.db.models import Model
from django.test import RequestFactory
from django.urls import reverse

from tests.browser.axe import problems
from tests.browser.conftest import log_in
from tests.browser.site import seed_every_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def url(model: type[Model], view: str, *args: Any) -> str:
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def admin_pages(user: User) -> tuple[dict[str, str], type[Model]]:
    """Every admin page `user` may open, by name, as paths; and a model whose rows the admin
    may delete, for the bulk delete's confirmation (confirmations only: nothing is deleted).
    Discovered from the admin site's registry: a model registered later is walked as well."""
    admin.autodiscover()
    request = RequestFactory().get("/admin/")
    request.user = user
    pages = {
        "index": reverse("admin:index"),
        "password change": reverse("admin:password_change"),
        "password changed": reverse("admin:password_change_done"),
    }
    for label in dict.fromkeys(model._meta.app_label for model in admin.site._registry):
        pages[f"app {label}"] = reverse("admin:app_list", args=[label])
    deletable: type[Model] | None = None
    history: Model | None = None
    for model, model_admin in admin.site._registry.items():
        name = model._meta.label_lower
        pages[name] = url(model, "changelist")
        if model_admin.has_add_permission(request):
            pages[f"{name} add"] = url(model, "add")
        row = model._default_manager.order_by("pk").first()
        if row is None:
            continue
        pages[f"{name} change"] = url(model, "change", row.pk)
        history = history or row
        if model_admin.has_delete_permission(request, row):
            deletable = deletable or model
            pages[f"{name} delete"] = url(model, "delete", row.pk)
    assert history is not None, "no admin model has a row: seed_every_page seeds none?"
    assert deletable is not None, "no row the admin may delete: nothing to confirm"
    # A history with an entry in it: its table, not "no change history".
    LogEntry.objects.log_actions(user.pk, [history], CHANGE, change_message="Looked at it.")
    pages["history"] = url(type(history), "history", history.pk)
    return pages, deletable


def visit(page: Any, address: str, name: str) -> None:
    """Open a page, which must be there (a 302 to the login or a 403 would be axe-clean too)."""
    answer = page.goto(address)
    assert answer is not None, name
    assert answer.status == 200, name


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_axe_finds_nothing_serious_on_any_admin_page(  # type: ignore[no-untyped-def]
    browser, live_server, django_user_model, scheme, width
) -> None:
    seed_every_page()
    user = django_user_model.objects.create_superuser("ada", password="analytical-engine")
    pages, deletable = admin_pages(user)
    context = browser.new_context(color_scheme=scheme, viewport={"width": width, "height": 844})
    log_in(context, live_server.url, user)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        found = {}
        for name, path in pages.items():
            visit(page, f"{live_server.url}{path}", name)
            if found_here := problems(page):
                found[name] = found_here
        # The bulk delete's confirmation: a row picked on its change list, the action run.
        page.goto(f"{live_server.url}{url(deletable, 'changelist')}")
        page.locator("input[name=_selected_action]").first.check()
        page.locator("select[name=action]").select_option("delete_selected")
        page.locator("button[name=index]").click()
        page.wait_for_selector("body.delete-selected-confirmation")
        found["delete selected"] = problems(page)
        # Logging out (a POST from the header's button), then the login page, anonymous.
        page.goto(f"{live_server.url}{reverse('admin:index')}")
        page.locator("#logout-form button").click()
        page.wait_for_url(f"**{reverse('admin:logout')}")
        found["logged out"] = problems(page)
        visit(page, f"{live_server.url}{reverse('admin:login')}", "login")
        assert page.locator("#id_password").count() == 1  # anonymous: the form is shown
        found["login"] = problems(page)
        assert not any(found.values()), {name: lines for name, lines in found.items() if lines}
    finally:
        context.close()
