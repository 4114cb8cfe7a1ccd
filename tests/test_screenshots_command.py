"""``manage.py screenshots``: PNGs of the dashboard pages, taken with Chromium."""

from __future__ import annotations

import struct
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from spaceduck.ops.screenshots import PHONE_WIDTH, SHOTS, WIDTH

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(path: Path) -> tuple[int, int]:
    """(width, height) from the PNG's IHDR chunk, which must come first."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_MAGIC, f"{path.name} is not a PNG"
    assert head[12:16] == b"IHDR", f"{path.name} has no IHDR first"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


@pytest.mark.browser
def test_screenshots_writes_a_png_of_every_page(tmp_path: Path) -> None:
    out = tmp_path / "shots"
    buf = StringIO()
    call_command("screenshots", "--out", str(out), stdout=buf)
    for name in SHOTS:
        path = out / name
        assert path.is_file(), f"{name} missing; output:\n{buf.getvalue()}"
        assert path.stat().st_size > 20_000, f"{name} is too small to show a page"
        width, height = _png_size(path)
        # The phone pages are drawn at twice the density: 390 CSS px, 780 image px.
        expected = PHONE_WIDTH * 2 if name.endswith("-phone.png") else WIDTH
        assert width == expected, f"{name} is {width} px wide"
        assert height >= 600
    said = buf.getvalue()
    assert "viewer-search.png: recall of" in said
    # The pages that show the service running: each needs its data (a failed extraction,
    # a thread with a compaction summary, a worker heartbeat, recorded setting changes).
    for line in [
        "overview.png: the overview",
        "extractions.png: the extraction log",
        "extraction-failed.png: failed extraction",
        "thread.png: thread demo-thread's page",
        "settings.png: Settings > Memory",
        "memory-phone.png: memory",
        "candidates-phone.png: the candidate queue",
        "viewer-dark.png: the memory viewer in dark mode",
        "context.png: the agent view",
        "tokens.png: the API tokens",
        "people.png: a person's data",
    ]:
        assert line in said


def test_screenshots_says_how_to_install_chromium_when_it_is_missing(tmp_path: Path) -> None:
    missing = tmp_path / "no-chromium"
    with pytest.raises(CommandError, match="apt-get install chromium"):
        call_command("screenshots", "--out", str(tmp_path), "--chromium", str(missing))
