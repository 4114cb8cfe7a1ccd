"""``manage.py bench recall`` and ``bench locomo`` at tiny sizes: they run and print tables."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from spaceduck.ops.benchmarks.locomo import Asked, evidence_ids, session_recall, turn_recall, turns

NUMBER = r"\d+(\.\d+)?"


def test_bench_recall_prints_latencies_and_the_ratio_to_numpy() -> None:
    buf = StringIO()
    call_command(
        "bench",
        "recall",
        "--sizes",
        "300",
        "--others",
        "200",
        "--other-namespaces",
        "5",
        "--queries",
        "5",
        "--no-embed",
        stdout=buf,
    )
    out = buf.getvalue()
    assert re.search(rf"recall\(\)\s+: p50 {NUMBER} ms, p95 {NUMBER} ms", out)
    assert re.search(rf"numpy baseline : p50 {NUMBER} ms, p95 {NUMBER} ms", out)
    assert re.search(rf"recall/numpy   : p50 {NUMBER}x, p95 {NUMBER}x", out)
    assert re.search(rf"vector list    : {NUMBER} of the exact top-20 found", out)
    assert re.search(rf"vector list    : {NUMBER} of its hits score at least the exact 20-th", out)
    # 300 memories: below the quantized first pass's threshold on either database.
    assert "vector scan    : exact float32 product (the process's cached copy)" in out


def _conversation(sample_id: str) -> dict[str, object]:
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey kitten today."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely! I went sailing in Oslo."},
            ],
            "session_2_date_time": "10:00 am on 9 June, 2023",
            "session_2": [
                {
                    "speaker": "Ann",
                    "dia_id": "D2:1",
                    "text": "Look at my painting.",
                    "blip_caption": "a photo of a sunset",
                },
            ],
        },
        "qa": [
            {
                "question": "What did Ann adopt?",
                "answer": "a kitten",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Where did Bob sail?",
                "answer": "Oslo",
                "evidence": ["D1:2"],
                "category": 1,
            },
            {
                "question": "What did Ann paint?",
                "answer": "sunset",
                "evidence": ["D:2:1"],
                "category": 2,
            },
            {"question": "Trick?", "evidence": ["D1:1"], "category": 5},
        ],
    }


def test_bench_locomo_prints_recall_at_k_per_mode(tmp_path: Path) -> None:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([_conversation("conv-a"), _conversation("conv-b")]))
    buf = StringIO()
    call_command("bench", "locomo", str(path), "--embedder", "hash", "--k", "1,2", stdout=buf)
    out = buf.getvalue()
    assert "2 conversations, 6 turns per mode" in out
    assert "6 questions (categories 1-4) per mode" in out
    assert "=== pipeline mode ===" in out
    assert "=== bare mode ===" in out
    for k in (1, 2):
        for metric in ("turn", "session"):  # one table per metric and mode
            assert len(re.findall(rf"^{metric} recall@{k}\s+overall", out, flags=re.M)) == 2
    for column in ("vector", "keyword", "hybrid", "final"):
        assert len(re.findall(rf"^  {column}\s+{NUMBER}", out, flags=re.MULTILINE)) == 8
    assert "turn recall@k: the share of a question's evidence turns among the top k hits\n" in out
    assert "session recall@k: the share of questions with an evidence turn's session" in out
    # The shipped weights were fitted on none of these: all of this file is held out.
    fitted_on = re.search(r"^second stage weights fitted on: (.*)$", out, flags=re.M)
    assert fitted_on, out
    # LoCoMo's three training conversations, and LongMemEval questions (bench secondstage).
    names = fitted_on[1].split(", ")
    assert {"conv-26", "conv-30", "conv-41"} <= set(names)
    assert not {"conv-42", "conv-43"} & set(names)
    assert "in this file: fitted on none; held out conv-a, conv-b (the whole file)\n" in out
    assert "fitted on  (" not in out  # no line for a subset the file does not hold
    for metric in ("turn", "session"):
        assert out.count(f"  held out   (6 questions), {metric}: hybrid@1 ") == 2


def test_bench_locomo_splits_fitted_and_held_out_within_the_file(tmp_path: Path) -> None:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([_conversation("conv-26"), _conversation("conv-b")]))
    buf = StringIO()
    call_command("bench", "locomo", str(path), "--embedder", "hash", "--k", "1", stdout=buf)
    out = buf.getvalue()
    assert "in this file: fitted on conv-26; held out conv-b\n" in out
    for metric in ("turn", "session"):  # one line per mode and metric
        assert out.count(f"  fitted on  (3 questions), {metric}: hybrid@1 ") == 2
        assert out.count(f"  held out   (3 questions), {metric}: hybrid@1 ") == 2


def _two_sessions() -> dict[str, object]:
    """Each question's evidence is a turn other than the one its words point to."""
    return {
        "sample_id": "conv-s",
        "conversation": {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey kitten named Miso."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "The weather in Lisbon was lovely."},
            ],
            "session_2_date_time": "10:00 am on 9 June, 2023",
            "session_2": [
                {"speaker": "Ann", "dia_id": "D2:1", "text": "My sister joined a pottery class."},
            ],
        },
        "qa": [
            # The best keyword hit (D1:2) is not the evidence but shares its session.
            {"question": "How was the weather in Lisbon?", "evidence": ["D1:1"], "category": 4},
            # The best keyword hit (D2:1) is in another session than the evidence.
            {"question": "Who joined a pottery class?", "evidence": ["D1:2"], "category": 4},
        ],
    }


def test_bench_locomo_session_recall_counts_the_session_of_each_hit(tmp_path: Path) -> None:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([_two_sessions()]))
    buf = StringIO()
    call_command("bench", "locomo", str(path), "--embedder", "hash", "--k", "1,3", stdout=buf)
    out = buf.getvalue()
    # Both modes store all three turns (the bare one refuses none of them).
    assert "bare: 3 memories stored; 0 turns refused" in out
    # The keyword list never holds an evidence turn (no shared word): turn recall 0. Its
    # first hit is in the evidence's session for the first question only: session 0.5.
    # At k=3 the other lists return all three turns: every evidence turn and session.
    expected = {
        ("turn", 1, "keyword"): "0.000",
        ("session", 1, "keyword"): "0.500",
        ("turn", 3, "keyword"): "0.000",
        ("session", 3, "keyword"): "0.500",
        **{("turn", 3, column): "1.000" for column in ("vector", "hybrid", "final")},
        **{("session", 3, column): "1.000" for column in ("vector", "hybrid", "final")},
    }
    for (metric, k, column), value in expected.items():
        # Only category 4 has questions: overall, three nan, then category 4.
        row = rf"  {column}\s+{value}\s+nan\s+nan\s+nan\s+{value}"
        table = rf"^{metric} recall@{k} .*\n(?:  .*\n)*?{row}$"
        assert len(re.findall(table, out, flags=re.MULTILINE)) == 2, (metric, k, column)
    assert "in this file: fitted on none; held out conv-s (the whole file)\n" in out


def _asked(evidence: set[str]) -> Asked:
    sessions = {"D1:1": 1, "D1:2": 1, "D2:1": 2, "D3:1": 3}
    return Asked("c", 1, evidence, {}, [], sessions)


def test_session_recall_is_any_evidence_session_among_the_hits() -> None:
    hits = [{"D1:2"}, {"D3:1"}, {"D2:1"}]
    # Evidence in sessions 1 and 2: the first hit's session holds one of them.
    assert session_recall(_asked({"D1:1", "D2:1"}), hits, 1) == 1.0
    assert turn_recall(_asked({"D1:1", "D2:1"}), hits, 1) == 0.0
    assert turn_recall(_asked({"D1:1", "D2:1"}), hits, 3) == 0.5
    # Session 2 only comes third.
    assert session_recall(_asked({"D2:1"}), hits, 2) == 0.0
    assert session_recall(_asked({"D2:1"}), hits, 3) == 1.0
    # An evidence id that names no stored turn holds no session: never found.
    assert session_recall(_asked({"D9:9"}), hits, 3) == 0.0
    # A bare memory deduplicated from turns of two sessions counts for both.
    assert session_recall(_asked({"D3:1"}), [{"D1:1", "D3:1"}], 1) == 1.0
    assert session_recall(_asked({"D1:1"}), [], 5) == 0.0


def test_bench_locomo_fit_needs_a_conversation_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([_conversation("conv-a"), _conversation("conv-b")]))
    with pytest.raises(CommandError, match=r"none of --fit-on .* name some of its own: conv-a"):
        call_command("bench", "locomo", str(path), "--embedder", "hash", "--fit")


def test_bench_locomo_fit_needs_a_conversation_within_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([_conversation("conv-a"), _conversation("conv-26")]))
    with pytest.raises(CommandError, match=r"none of --fit-on .* name some of its own: conv-a$"):
        call_command("bench", "locomo", str(path), "--embedder", "hash", "--fit", "--limit", "1")


def test_locomo_turn_contents_and_evidence_ids() -> None:
    rows = turns(_conversation("x")["conversation"])  # type: ignore[arg-type]
    assert [r.dia_id for r in rows] == ["D1:1", "D1:2", "D2:1"]
    assert rows[0].content == "[1:56 pm on 8 May, 2023] Ann: I adopted a grey kitten today."
    assert rows[0].occurred_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    # The previous turn of the same session is the context; a session starts without one.
    assert rows[0].previous == ""
    assert rows[1].previous == "Ann: I adopted a grey kitten today."
    assert rows[2].previous == ""
    assert rows[2].content.endswith("Look at my painting. [shares a photo: a photo of a sunset]")
    assert rows[2].occurred_at == datetime(2023, 6, 9, 10, 0, tzinfo=UTC)
    assert evidence_ids(["D8:6; D9:17", "D:11:26", "D"]) == {"D8:6", "D9:17", "D11:26"}


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such file"),
        ("not json {", "is not JSON"),
        ('{"conversation": {}}', "is not LoCoMo data"),
        ("[]", "is not LoCoMo data"),
    ],
)
def test_bench_locomo_says_where_to_get_the_data_when_the_file_is_wrong(
    tmp_path: Path, content: str | None, says: str
) -> None:
    path = tmp_path / "locomo.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CommandError) as caught:
        call_command("bench", "locomo", str(path), "--embedder", "hash", stdout=StringIO())
    message = str(caught.value)
    assert says in message
    assert "snap-research/LoCoMo" in message
    assert "CC BY-NC 4.0" in message
