"""``manage.py bench pages`` at a tiny size: every dashboard page is timed and reported."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

NUMBER = r"\d+(\.\d+)?"
PAGES = [
    "viewer /",
    "filtered list",
    r"page \d+ of the filter",  # 50, or the last page of a smaller filter
    r"memory /memories/\d+/",
    "candidate queue",
    r"search \(hybrid recall\)",
    "overview /overview/",
    "extraction log",
    "extractions, status failed",
    "extractions, failed attempts",
    r"thread \(30 messages\)",
    "tokens /tokens/",
    "belief timeline /beliefs/",
    r"belief claims /beliefs/\?namespace=",
    r"person /people/\?namespace=",
    "activity /activity/",
    "activity, one namespace",
    "activity, one actor",
    "activity, a kind of actor",
    "activity, a name",
    "activity, conflicts",
]
# Pages that search on every request: reported apart, below this heading.
SEARCH_LIKE_HEADING = "search-like (a search on every request; not held to the target):"
SEARCH_LIKE = [
    r"search \(hybrid recall\)",
    "context preview /context/",
    r"people search /people/\?q=",
]


def _bench(*extra: str) -> str:
    buf = StringIO()
    call_command(
        "bench",
        "pages",
        "--size",
        "300",
        "--others",
        "200",
        "--other-namespaces",
        "5",
        "--requests",
        "3",
        "--extractions",
        "400",
        "--thread-messages",
        "30",
        *extra,
        stdout=buf,
    )
    return buf.getvalue()


def test_bench_pages_prints_a_row_of_timings_for_every_page() -> None:
    out = _bench("--index", "status,updated_at", "--explain")
    assert "pages: 300 memories in user:big + 200 over 5 other namespaces, embedder hash" in out
    assert re.search(rf"seed: {NUMBER} s \(500 memories", out)
    # 400 records of their own, and one for each of the long thread's 29 non-system messages.
    assert re.search(r"candidates with their messages and extractions, 429 more extractions", out)
    assert "extra index: memories_memory (status,updated_at)" in out
    for page in PAGES:
        row = rf"^{page}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+\d+\s+{NUMBER}x$"
        assert re.search(row, out, flags=re.MULTILINE), page
    apart = out.index(SEARCH_LIKE_HEADING)
    for page in SEARCH_LIKE:
        row = rf"^{page}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+\d+\s+{NUMBER}x$"
        found = re.search(row, out, flags=re.MULTILINE)
        assert found is not None, page
        assert found.start() > apart, f"{page} is not reported apart"
    held = re.search(r"^over target: (.+)$", out, flags=re.MULTILINE)
    assert held is None or "context preview" not in held.group(1)
    assert re.search(
        rf"^baseline: bare list of 50\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}$", out, flags=re.MULTILINE
    )
    assert "target: p95 <= 50 ms for every page except search" in out
    assert re.search(r"^(over target: .+|every page is within the target)$", out, re.MULTILINE)
    # --explain: each page's queries with SQLite's plan.
    assert re.search(r"^viewer /: \d+ queries, slowest first$", out, flags=re.MULTILINE)
    assert "plan: SEARCH memories_memory" in out
    assert re.search(r"^extraction log: \d+ queries, slowest first$", out, flags=re.MULTILINE)
    assert re.search(
        r"^context preview /context/: \d+ queries, slowest first$", out, flags=re.MULTILINE
    )


def test_bench_pages_refuses_an_index_that_is_not_a_column_list() -> None:
    with pytest.raises(CommandError, match="give columns separated by commas"):
        call_command("bench", "pages", "--index", "status); DROP TABLE x; --", stdout=StringIO())
