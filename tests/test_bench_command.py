"""``manage.py bench``: benchmarks run by name and print their timings."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

NUMBER = r"\d+(\.\d+)?"


def test_bench_embed_prints_batch_query_and_ratio_timings() -> None:
    buf = StringIO()
    call_command("bench", "embed", "--provider", "hash", "--repeat", "2", stdout=buf)
    out = buf.getvalue()
    assert "hash/blake2b-words-trigrams-v1/384d" in out
    assert re.search(rf"batch of 64: median {NUMBER} ms/text, p95 {NUMBER} ms/text", out)
    assert re.search(rf"single query: median {NUMBER} ms, p95 {NUMBER} ms", out)
    assert re.search(rf"ratio to hash: batch {NUMBER}x, query {NUMBER}x", out)


def test_bench_needs_a_known_benchmark_name() -> None:
    with pytest.raises(CommandError):
        call_command("bench", "no-such-benchmark")
