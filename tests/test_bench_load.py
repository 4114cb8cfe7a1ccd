"""``manage.py bench load`` at a tiny size: the real server under HTTP load, a table per round."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.slow


def test_bench_load_prints_latencies_errors_lost_writes_and_memory() -> None:
    buf = StringIO()
    call_command(
        "bench", "load", "--clients", "2", "--seconds", "2", "--memories", "200", stdout=buf
    )
    out = buf.getvalue()
    assert "200 memories over 2 namespaces" in out
    assert "2 clients, 2 s:" in out
    for operation in ("message", "search", "context", "fact", "note"):
        row = re.search(
            rf"^  {operation}\s+(\d+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(\d+)$", out, re.M
        )
        assert row is not None, operation
        assert int(row.group(1)) > 0
    assert re.search(r"lost writes: \{.*\}", out)
    assert re.search(r"RSS MB: web \d+ -> \d+ \([+-][\d.]+%\), worker \d+ -> \d+", out)
    assert "targets:" in out
