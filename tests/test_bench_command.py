"""``manage.py bench``: benchmarks run by name and print their timings."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

NUMBER = r"\d+(\.\d+)?"


def test_bench_embed_prints_batch_query_and_ratio_timings() -> None:
    buf = StringIO()
    call_command(
        "bench", "embed", "--provider", "hash", "--repeat", "2",
        "--scan-size", "1000", "--scan-rounds", "3", stdout=buf,
    )  # fmt: skip
    out = buf.getvalue()
    assert "hash/blake2b-words-trigrams-v1/384d" in out
    assert re.search(rf"batch of 64: median {NUMBER} ms/text, p95 {NUMBER} ms/text", out)
    assert re.search(rf"single query: median {NUMBER} ms, p95 {NUMBER} ms", out)
    assert re.search(rf"ratio to hash: batch {NUMBER}x, query {NUMBER}x", out)
    # A question timed alternately with the exact scan recall is compared with.
    assert "question vs 1000 scan: 3 rounds alternately" in out
    assert re.search(rf"question     : p50 {NUMBER} ms, p95 {NUMBER} ms", out)
    assert re.search(rf"exact scan   : p50 {NUMBER} ms, p95 {NUMBER} ms \(1000 x 384", out)
    assert re.search(rf"question/scan: p50 {NUMBER}x, p95 {NUMBER}x", out)
    assert re.search(rf"cached question: median {NUMBER} us, p95 {NUMBER} us", out)
    assert "reference vectors" not in out  # the reference file is the local model's


def test_bench_embed_checks_the_local_models_vectors_against_the_reference() -> None:
    buf = StringIO()
    call_command(
        "bench", "embed", "--repeat", "1", "--scan-size", "1000", "--scan-rounds", "3",
        stdout=buf,
    )  # fmt: skip
    found = re.search(rf"reference vectors: \d+ texts, worst cosine one at a time ({NUMBER}), "
                      rf"in a batch ({NUMBER})", buf.getvalue())  # fmt: skip
    assert found, buf.getvalue()
    assert float(found.group(1)) >= 0.9999
    assert float(found.group(3)) >= 0.9999


def test_bench_needs_a_known_benchmark_name() -> None:
    with pytest.raises(CommandError):
        call_command("bench", "no-such-benchmark")


@pytest.mark.slow
def test_bench_ingest_runs_inline_and_with_a_worker_process() -> None:
    buf = StringIO()
    call_command(
        "bench", "ingest", "--embedders", "hash", "--sizes", "50", "--messages", "8",
        "--workers", "0,1", stdout=buf,
    )  # fmt: skip
    lines = [line for line in buf.getvalue().splitlines() if line.startswith("ingest (")]
    assert [line.split(",")[0] for line in lines] == [
        "ingest (inline",
        "ingest (1 worker processes",
    ]
    for line in lines:
        assert re.search(rf"8 messages in {NUMBER}s = {NUMBER} msg/s", line)
        assert "extractions not done 0" in line


def test_bench_ingest_names_the_databases_it_knows() -> None:
    with pytest.raises(CommandError, match="unknown \\['mysql'\\]"):
        call_command("bench", "ingest", "--databases", "sqlite,mysql", stdout=StringIO())


@pytest.mark.slow
def test_bench_ingest_runs_both_databases_in_one_command_and_prints_the_ratio() -> None:
    buf = StringIO()
    call_command(
        "bench", "ingest", "--embedders", "hash", "--sizes", "20", "--messages", "4",
        "--databases", "sqlite,postgres", stdout=buf,
    )  # fmt: skip
    out = buf.getvalue()
    runs = [line.split(":")[0] for line in out.splitlines() if line.startswith("ingest (inline")]
    assert runs == ["ingest (inline, sqlite)", "ingest (inline, postgresql)"]
    assert re.search(
        rf"ingest ratio \(inline\): postgres {NUMBER} msg/s / sqlite {NUMBER} msg/s = {NUMBER}x",
        out,
    )


@pytest.mark.slow
def test_bench_ingest_compares_secure_delete_modes_in_one_command() -> None:
    buf = StringIO()
    call_command(
        "bench", "ingest", "--embedders", "hash", "--sizes", "20", "--messages", "4",
        "--secure-delete", "off,on", "--deletes", "3", stdout=buf,
    )  # fmt: skip
    out = buf.getvalue()
    runs = [line for line in out.splitlines() if line.startswith("ingest (inline")]
    # Each run reads the mode back from SQLite: the environment reached the child.
    assert [line.rsplit(", ", 1)[-1] for line in runs] == ["secure_delete off", "secure_delete on"]
    deletes = [line for line in out.splitlines() if line.startswith("delete (sqlite)")]
    assert len(deletes) == 2
    for line in deletes:
        assert re.search(rf"3 memories one at a time of \d+: p50 {NUMBER} ms, p95 {NUMBER}", line)
    assert re.search(
        rf"ingest ratio \(inline\): secure_delete=on {NUMBER} msg/s / secure_delete=off "
        rf"{NUMBER} msg/s = {NUMBER}x",
        out,
    )
    with pytest.raises(CommandError, match="unknown \\['half'\\]"):
        call_command("bench", "ingest", "--secure-delete", "on,half", stdout=StringIO())


@pytest.mark.slow
def test_bench_mcp_times_recall_through_rest_and_mcp_on_the_same_answers() -> None:
    buf = StringIO()
    call_command("bench", "mcp", "--memories", "60", "--calls", "6", stdout=buf)
    out = buf.getvalue()
    assert "6 calls per way" in out
    assert "the same answer from all three: 6/6" in out
    for way in ("REST", "MCP over HTTP", "MCP over stdio"):
        assert re.search(rf"{way} +p50 +{NUMBER} ms, p95 +{NUMBER} ms", out), out
    assert len(re.findall(rf"= {NUMBER}x / {NUMBER}x REST", out)) == 2
