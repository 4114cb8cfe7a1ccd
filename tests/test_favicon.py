"""Every page names spaceduck's icon, and ``/favicon.ico`` (asked by browsers where no page
names one) leads to it: no 404 and no console error on each page."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.test import Client

ICON = "/static/img/favicon.svg"


def test_the_dashboard_and_the_admin_name_the_icon(staff_client: Client, admin_client) -> None:  # type: ignore[no-untyped-def]
    assert f'<link rel="icon" href="{ICON}"' in staff_client.get("/").content.decode()
    assert f'<link rel="icon" href="{ICON}"' in admin_client.get("/admin/").content.decode()


def test_favicon_ico_leads_to_the_icon(client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == ICON
    icon = Path(settings.BASE_DIR) / "static" / "img" / "favicon.svg"
    assert icon.read_text().startswith("<svg")
