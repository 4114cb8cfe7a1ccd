"""``manage.py bench longmemeval``: the reader of the official format, the metrics on a tiny
hand-made file whose recall is worked out by hand, the command end to end, and ``--answer``
/ ``--judge`` against the fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import functools
import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from spaceduck.ops.benchmarks.locomo import Asked, session_recall, turn_recall
from spaceduck.ops.benchmarks.longmemeval import (
    BadData,
    Question,
    bare_texts,
    context_check,
    distinct_session_recall,
    newer_ranks_first,
    parse_date,
    pieces,
    question_from,
    read_questions,
)
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.django_db


def _session(*turns: tuple[str, str, bool]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for role, content, answer in turns:
        turn: dict[str, Any] = {"role": role, "content": content}
        if answer:
            turn["has_answer"] = True
        out.append(turn)
    return out


def update_question() -> dict[str, Any]:
    """A knowledge update: the class moved from Tuesday (s-old) to Friday (s-new); s-other
    is about something else. The haystack is not in date order, as in the real files."""
    return {
        "question_id": "ku1",
        "question_type": "knowledge-update",
        "question": "What day of the week do I take my cocktail-making class?",
        "answer": "Friday",
        "question_date": "2023/07/15 (Sat) 22:19",
        "haystack_session_ids": ["s-new", "s-other", "s-old"],
        "haystack_dates": [
            "2023/07/01 (Sat) 10:00",
            "2023/06/20 (Tue) 09:30",
            "2023/06/13 (Tue) 18:22",
        ],
        "haystack_sessions": [
            _session(
                ("user", "My cocktail-making class moved to Friday evenings.", True),
                ("assistant", "Friday evenings sound relaxing.", False),
            ),
            _session(
                ("user", "Any tips for repotting a fern?", False),
                ("assistant", "Use a pot one size larger and water well.", False),
            ),
            _session(
                ("user", "I take a cocktail-making class every Tuesday.", True),
                ("assistant", "Fun! Which cocktails have you learnt?", False),
            ),
        ],
        "answer_session_ids": ["s-old", "s-new"],
    }


def abstention_question() -> dict[str, Any]:
    return {
        "question_id": "ssu2_abs",
        "question_type": "single-session-user",
        "question": "What is the name of my violin teacher?",
        "answer": "You did not mention a violin teacher.",
        "question_date": "2023/08/01 (Tue) 08:00",
        "haystack_session_ids": ["a1"],
        "haystack_dates": ["2023/07/30 (Sun) 12:00"],
        "haystack_sessions": [_session(("user", "I started piano lessons with Mr. Oduya.", False))],
        "answer_session_ids": ["a1"],
    }


def write(tmp_path: Path, records: list[Any]) -> Path:
    path = tmp_path / "longmemeval-tiny.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


# --- The reader ----------------------------------------------------------------------------


def test_reader_reads_the_official_format_with_dates_has_answer_and_abstention() -> None:
    question = question_from(update_question(), 0)
    assert question.id == "ku1"
    assert question.type == "knowledge-update"
    assert question.date == parse_date("2023/07/15 (Sat) 22:19")
    assert question.date is not None
    assert (question.date.year, question.date.hour) == (2023, 22)
    assert [t.key for t in question.turns] == [
        "s-new#0", "s-new#1", "s-other#0", "s-other#1", "s-old#0", "s-old#1",
    ]  # fmt: skip
    assert question.turns[0].date == parse_date("2023/07/01 (Sat) 10:00")
    assert question.turns[0].said == "user: My cocktail-making class moved to Friday evenings."
    assert question.evidence == {"s-new#0", "s-old#0"}
    # Oldest first, whatever the haystack's order.
    assert question.answer_sessions_by_date() == ["s-old", "s-new"]
    assert not question.abstention
    abstaining = question_from(abstention_question(), 1)
    assert abstaining.abstention
    assert abstaining.evidence == set()


def test_reader_streams_questions_with_limit_and_types(tmp_path: Path) -> None:
    path = write(tmp_path, [update_question(), abstention_question(), update_question()])
    assert [q.id for q in read_questions(path)] == ["ku1", "ssu2_abs", "ku1"]
    assert [q.id for q in read_questions(path, limit=2)] == ["ku1", "ssu2_abs"]
    assert [q.id for q in read_questions(path, types=("single-session-user",))] == ["ssu2_abs"]
    only = read_questions(path, limit=1, types=("knowledge-update",))
    assert [q.id for q in only] == ["ku1"]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda r: r.pop("haystack_sessions"), "has no haystack_sessions"),
        (lambda r: r["haystack_dates"].pop(), "lists of one length"),
        (lambda r: r["haystack_sessions"][0].append({"role": "user"}), "has no role or content"),
    ],
)
def test_reader_names_the_record_and_the_problem(change: Any, said: str) -> None:
    record = update_question()
    change(record)
    with pytest.raises(BadData, match=rf"record 4 \(ku1\).*{said}"):
        question_from(record, 4)


def test_an_unreadable_date_is_no_date() -> None:
    assert parse_date("yesterday") is None
    record = update_question()
    record["question_date"] = "soon"
    assert question_from(record, 0).date is None


def test_long_turns_are_cut_into_memories_that_fit() -> None:
    sentence = "The fermentation step matters more than the flour you choose. "
    text = "First paragraph is short.\n\n" + sentence * 40 + "\n" + "x" * 250
    parts = pieces(text, 200)
    assert all(0 < len(p) <= 200 for p in parts)
    # Nothing lost but the whitespace between the parts.
    assert "".join(parts).replace(" ", "") == text.replace(" ", "").replace("\n", "")
    assert parts[0].startswith("First paragraph is short. The fermentation")
    assert pieces("  short  ", 200) == ["short"]
    turn = question_from(update_question(), 0).turns[0]
    assert bare_texts(turn, 1000) == [turn.said]
    assert all(t.startswith("user: ") and len(t) <= 30 for t in bare_texts(turn, 30))


# --- The metrics, worked out by hand ---------------------------------------------------------


def asked(question: Question, hits: list[set[str]]) -> Asked:
    return Asked(question.id, 0, question.evidence, {"final": hits}, [], question.session_of)  # type: ignore[arg-type]


def test_session_and_turn_recall_by_hand() -> None:
    q = question_from(update_question(), 0)
    # Ranked: the fern question, the fern answer, the old class turn, the new class turn.
    hits = [{"s-other#0"}, {"s-other#1"}, {"s-old#0"}, {"s-new#0"}]
    a = asked(q, hits)
    # An answer session first shows at hit 3.
    assert [session_recall(a, hits, k) for k in (1, 2, 3, 4)] == [0.0, 0.0, 1.0, 1.0]
    # Distinct sessions: s-other, then s-old: the answer session is the 2nd distinct one.
    assert [distinct_session_recall(a, hits, k) for k in (1, 2)] == [0.0, 1.0]
    # Two has_answer turns: one of them among the top 3, both among the top 4.
    assert [turn_recall(a, hits, k) for k in (2, 3, 4)] == [0.0, 0.5, 1.0]


def test_knowledge_update_order_by_hand() -> None:
    q = question_from(update_question(), 0)
    assert newer_ranks_first(q, [{"s-new#1"}, {"s-old#0"}]) is True
    assert newer_ranks_first(q, [{"s-old#1"}, {"s-new#0"}]) is False
    # Missing newest session: it ranks last, never above.
    assert newer_ranks_first(q, [{"s-other#0"}, {"s-old#0"}]) is False
    assert newer_ranks_first(q, [{"s-new#0"}]) is True  # the old one is not there at all
    assert newer_ranks_first(q, []) is False
    # Not measured for other types.
    assert newer_ranks_first(question_from(abstention_question(), 0), [{"a1#0"}]) is None


def test_context_check_by_hand() -> None:
    q = question_from(update_question(), 0)
    turns_of = {1: {"s-new#0"}, 2: {"s-old#0"}, 3: {"s-other#0"}, 4: {"s-new#1"}}
    fresh = context_check(q, turns_of, [1, 3], "- The user's class moved to Friday.")
    assert fresh == {"answer_text": True, "new": True, "stale": False, "new_not_stale": True}
    both = context_check(q, turns_of, [2, 1], "- Tuesday\n- friday")
    assert both == {"answer_text": True, "new": True, "stale": True, "new_not_stale": False}
    # A memory of the new session that is not an evidence turn does not count as the value.
    neither = context_check(q, turns_of, [4, 3], "- Sounds relaxing.")
    assert neither == {"answer_text": False, "new": False, "stale": False, "new_not_stale": False}


# --- The command -----------------------------------------------------------------------------


def figures(output: str, mode: str, label: str, column: str) -> list[float]:
    """A row of the command's table: ``  <label> (<n>) <column>  s@1 ... turn@10``."""
    section = output.split(f"=== {mode} mode ===", 1)[1].split("=== ", 1)[0]
    row = re.search(rf"^  {re.escape(label)} \(\d+\) {column}\s+(.*)$", section, re.M)
    assert row, f"no {label}/{column} row in {mode} mode:\n{section}"
    return [float(v) for v in row[1].split()]


@pytest.mark.slow
def test_bench_longmemeval_reports_each_mode_type_and_abstention_apart(tmp_path: Path) -> None:
    path = write(tmp_path, [update_question(), abstention_question()])
    buf = StringIO()
    call_command("bench", "longmemeval", str(path), "--embedder", "hash", "--k", "1,2", stdout=buf)
    out = buf.getvalue()
    assert "2 questions" in out
    assert "30 s a question" not in out
    assert re.search(r"100%\|.*\| 2/2 \[", out), "no progress bar"
    for mode in ("bare", "pipeline"):
        assert f"=== {mode} mode ===" in out
        # Only the two class turns hold "cocktail": the keyword list's first hit is one of
        # the two answer sessions, so session recall@1 and @2 are 1; turn@10 finds both.
        keyword = figures(out, mode, "overall", "keyword")
        if mode == "bare":
            assert keyword[:2] == [1.0, 1.0]
            assert keyword[-1] == 1.0
        assert figures(out, mode, "knowledge-update", "final")  # per type
        assert "abstention (1 questions)" in out.split(f"=== {mode} mode ===", 1)[1]
        assert "answerable (1 questions)" in out.split(f"=== {mode} mode ===", 1)[1]
    assert "the newest answer session ranks above the older ones in" in out
    assert "knowledge update, context block (1 questions): new value" in out


def test_bench_longmemeval_says_what_is_wrong_with_the_file(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r"no such file.*xiaowu0162/LongMemEval"):
        call_command("bench", "longmemeval", str(tmp_path / "missing.json"))
    locomo = write(tmp_path, [{"sample_id": "conv-1", "conversation": {}, "qa": []}])
    with pytest.raises(CommandError, match=r"not LongMemEval data.*has no question_id"):
        call_command("bench", "longmemeval", str(locomo))
    broken = tmp_path / "broken.json"
    broken.write_text('[{"question_id": ', encoding="utf-8")
    with pytest.raises(CommandError, match="not LongMemEval data"):
        call_command("bench", "longmemeval", str(broken))
    empty = write(tmp_path, [])
    with pytest.raises(CommandError, match="holds no questions"):
        call_command("bench", "longmemeval", str(empty))


def test_bench_longmemeval_refuses_bad_options(tmp_path: Path) -> None:
    path = write(tmp_path, [update_question()])
    with pytest.raises(CommandError, match="--types: unknown temporal"):
        call_command("bench", "longmemeval", str(path), "--types", "temporal")
    with pytest.raises(CommandError, match="--k must be positive"):
        call_command("bench", "longmemeval", str(path), "--k", "0,5")
    with pytest.raises(CommandError, match="--judge scores the answers of --answer"):
        call_command("bench", "longmemeval", str(path), "--judge")


def test_answer_and_judge_refuse_without_a_chat_model(tmp_path: Path) -> None:
    path = write(tmp_path, [update_question()])
    for flags in (["--answer", str(tmp_path / "out")], ["--answer", str(tmp_path), "--judge"]):
        with pytest.raises(CommandError, match="needs a chat model"):
            call_command("bench", "longmemeval", str(path), *flags)


@pytest.mark.slow
def test_answer_writes_the_official_jsonl_against_the_fake_server(tmp_path: Path) -> None:
    path = write(tmp_path, [update_question(), abstention_question()])
    out_dir = tmp_path / "answers"

    def reply(request: dict[str, Any]) -> str:
        prompt = request["messages"][-1]["content"]
        if prompt.startswith("I will give you several history chats"):
            return "Friday" if "cocktail" in prompt else "You never told me."
        return "yes"  # the judge

    chat = {"provider": "openai", "model": "answerer-1", "api_key": None, "timeout": 10.0}
    with FakeOpenAI() as fake:
        fake.set_chat_handler(reply)
        with override_settings(SPACEDUCK_CHAT={**chat, "base_url": fake.base_url}):
            call_command(
                "bench", "longmemeval", str(path), "--embedder", "hash", "--mode", "bare",
                "--answer", str(out_dir), "--judge", "--judge-model", "judge-x",
                stdout=(buf := StringIO()),
            )  # fmt: skip
        requests = [r.json for r in fake.requests_to("chat")]
    hyp_file = out_dir / "bare.jsonl"
    # Read back as the official evaluate_qa.py reads it.
    hypotheses = [json.loads(line) for line in open(hyp_file).readlines()]  # noqa: SIM115
    assert [set(h) for h in hypotheses] == [{"question_id", "hypothesis"}] * 2
    assert {h["question_id"]: h["hypothesis"] for h in hypotheses} == {
        "ku1": "Friday",
        "ssu2_abs": "You never told me.",
    }
    results = [json.loads(line) for line in (out_dir / "bare.jsonl.eval-results-judge-x").open()]
    assert [r["autoeval_label"] for r in results] == [{"model": "judge-x", "label": True}] * 2
    answers = [r for r in requests if r["model"] == "answerer-1"]
    judged = [r for r in requests if r["model"] == "judge-x"]
    assert len(answers) == 2
    assert len(judged) == 2
    first = answers[0]["messages"][-1]["content"]
    # The question, its date and the context block the service built for it.
    assert "Current Date: 2023/07/15 (Sat) 22:19" in first
    assert "Question: What day of the week do I take my cocktail-making class?" in first
    assert "cocktail-making class" in first.split("History Chats:", 1)[1].split("Current Date")[0]
    assert all(r["max_tokens"] == 10 for r in judged)
    assert "Does the model correctly identify the question as unanswerable?" in str(judged[1])
    assert "answer accuracy" in buf.getvalue()


# --- The second stage across benchmarks ------------------------------------------------------


def pool_question(name: str, cosines: list[float], evidence_at: int) -> Asked:
    """A question whose candidates differ only by cosine; the hybrid list has the evidence
    first."""
    from memories.recall import rerank

    keys = [f"{name}#{i}" for i in range(len(cosines))]
    candidates = []
    for i, cosine in enumerate(cosines):
        features = np.zeros(len(rerank.FEATURES))
        features[rerank.FEATURES.index("cosine")] = cosine
        candidates.append((features, 0.0, {keys[i]}))
    hybrid = [{keys[evidence_at]}] + [{k} for i, k in enumerate(keys) if i != evidence_at]
    session_of = {k: name for k in keys}
    found = {"hybrid": hybrid, "final": hybrid}
    return Asked(name, 0, {keys[evidence_at]}, found, candidates, session_of)  # type: ignore[arg-type]


def write_pools(path: Path, asked: list[Asked]) -> Path:
    import pickle

    plain = {"bare": [vars(a) for a in asked]}  # as locomo.write_pools writes them
    path.write_bytes(pickle.dumps({"benchmark": "longmemeval", "asked": plain}))
    return path


def test_secondstage_keeps_the_shipped_weights_when_a_held_out_part_falls_below_hybrid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memories.recall import rerank

    monkeypatch.setattr(rerank, "WEIGHTS_FILE", tmp_path / "rerank.json")
    # Trained on three questions where the evidence has the highest cosine; the fourth
    # (held out: the first three of a type are fitted on) has it lowest of 12.
    train = [pool_question(f"t{n}", [0.1 * i for i in range(12)], evidence_at=11) for n in range(3)]
    held = pool_question("h", [0.9 - 0.05 * i for i in range(12)], evidence_at=11)
    pools = write_pools(tmp_path / "pools.pkl", [*train, held])
    buf = StringIO()
    call_command("bench", "secondstage", str(pools), "--fit", stdout=buf)
    out = buf.getvalue()
    assert re.search(r"longmemeval bare\s+fitted on\s*\(\s*3 questions\)\s+hybrid 1.000", out)
    held_row = re.search(r"held out\s*\(\s*1 questions\)\s+hybrid 1.000.*refitted 0.000", out)
    assert held_row, out
    assert "not written: the refitted weights lower held-out turn recall" in out
    assert not (tmp_path / "rerank.json").exists()


def test_secondstage_writes_weights_that_keep_every_held_out_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memories.recall import rerank

    monkeypatch.setattr(rerank, "WEIGHTS_FILE", tmp_path / "rerank.json")
    monkeypatch.setattr(
        rerank, "weights", functools.lru_cache(maxsize=1)(rerank.weights.__wrapped__)
    )
    asked = [pool_question(f"q{n}", [0.1 * i for i in range(12)], evidence_at=11) for n in range(4)]
    pools = write_pools(tmp_path / "pools.pkl", asked)
    call_command("bench", "secondstage", str(pools), "--fit", stdout=(buf := StringIO()))
    assert "weights written" in buf.getvalue()
    written = json.loads((tmp_path / "rerank.json").read_text())
    assert written["fitted_on"] == ["q0", "q1", "q2"]
    assert written["validated_on"] == ["q3"]
    assert written["features"]["cosine"] > 0


def test_secondstage_refuses_a_file_that_is_not_pools(tmp_path: Path) -> None:
    bad = tmp_path / "x.pkl"
    bad.write_text("not a pickle")
    with pytest.raises(CommandError, match="not a pools file"):
        call_command("bench", "secondstage", str(bad))


def test_question_weights_let_a_small_benchmark_count_as_much_as_a_large_one() -> None:
    from memories.recall import rerank
    from spaceduck.ops.benchmarks.locomo import fit_weights

    cosine = 1 + rerank.FEATURES.index("cosine")  # column 0 is log_base
    # Nine questions where a high cosine marks the evidence, one where a low one does.
    many = [pool_question(f"m{n}", [0.1 * i for i in range(12)], evidence_at=11) for n in range(9)]
    few = [pool_question("f", [0.9 - 0.05 * i for i in range(12)], evidence_at=11)]
    assert fit_weights([*many, *few])[cosine] > 0
    assert fit_weights([*many, *few], question_weights=[1.0] * 9 + [30.0])[cosine] < 0
