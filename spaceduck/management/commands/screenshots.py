"""``manage.py screenshots [--out docs/screenshots]``: PNGs of the dashboard for the docs.

See spaceduck.ops.screenshots: a throw-away database with demo data, a real server
on 127.0.0.1 and Chromium driven by Playwright.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from spaceduck.ops import screenshots


class Command(BaseCommand):
    help = (
        "Take screenshots of the dashboard (viewer, search, a memory, candidates, overview, "
        "extraction log, an extraction, a thread, settings)."
    )
    # It runs on its own throw-away database; the developer's (and its vector
    # index, system check E001) is never opened.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--out",
            default=str(Path(settings.BASE_DIR) / "docs" / "screenshots"),
            help="directory for the PNG files (default: docs/screenshots)",
        )
        parser.add_argument("--embedder", default="hash", choices=["hash", "local"])
        parser.add_argument("--chromium", default=screenshots.CHROMIUM, help="Chromium binary")

    def handle(self, *args: Any, **options: Any) -> None:
        screenshots.take(
            out=Path(options["out"]),
            embedder=options["embedder"],
            chromium=options["chromium"],
            stdout=self.stdout,
        )
