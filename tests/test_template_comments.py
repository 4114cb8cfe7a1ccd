"""A ``{# ... #}`` comment ends on its own line in Django: one that runs over two lines is
printed as text (the viewer showed its own comment to every reviewer). Longer comments
are ``{% comment %}`` blocks."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.test import Client

TEMPLATES = Path(settings.BASE_DIR) / "templates"


def test_no_template_comment_runs_over_a_line() -> None:
    unclosed = [
        f"{path.relative_to(TEMPLATES)}:{number}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if line.count("{#") > line.count("#}")
    ]
    assert unclosed == []


def test_the_viewer_prints_no_comment(staff_client: Client) -> None:
    page = staff_client.get("/").content.decode()
    assert "{#" not in page
    assert "hx-sync" in page  # the form the comment is about is there
