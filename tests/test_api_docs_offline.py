"""``/api/docs`` works without internet: Swagger UI's script, style and icons are this
service's own static files (django-ninja's, served by whitenoise), never a CDN's."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

pytestmark = pytest.mark.django_db


def asset_urls(html: str) -> list[str]:
    """Every URL the page loads by itself: scripts, stylesheets, icons, images."""
    tags = re.findall(r"<(?:script|link|img)\b[^>]*>", html)
    return [url for tag in tags for url in re.findall(r'\b(?:src|href)="([^"]*)"', tag)]


def test_the_docs_page_loads_nothing_from_another_host(client: Client) -> None:
    response = client.get("/api/docs")  # the docs need no token, like the schema
    html = response.content.decode()
    assert response.status_code == 200
    urls = asset_urls(html)
    assert any(url.endswith("swagger-ui-bundle.js") for url in urls)
    assert any(url.endswith("swagger-ui.css") for url in urls)
    for url in urls:
        assert url.startswith("/static/"), url
    assert "https://" not in html
    assert "http://" not in html
    assert "cdn.jsdelivr" not in html


def test_every_asset_the_docs_page_names_is_served(client: Client) -> None:
    urls = asset_urls(client.get("/api/docs").content.decode())
    assert len(urls) >= 4  # stylesheet, two icons, bundle, init script
    for url in urls:
        assert finders.find(url.removeprefix("/static/")), f"no static file for {url}"
        response = client.get(url)  # whitenoise, as in production (no collectstatic needed)
        assert response.status_code == 200, url
        body = b"".join(response.streaming_content)  # type: ignore[attr-defined]
        assert body, url


def test_swagger_ui_reads_the_local_schema_and_asks_no_online_validator(client: Client) -> None:
    html = client.get("/api/docs").content.decode()
    found = re.search(
        r'<script type="application/json" id="swagger-settings">(.*?)</script>', html, re.S
    )
    assert found
    config = json.loads(found.group(1))
    assert config["url"] == "/api/openapi.json"
    assert config["validatorUrl"] is None  # swagger.io's badge would be a request out
    assert client.get(config["url"]).status_code == 200
