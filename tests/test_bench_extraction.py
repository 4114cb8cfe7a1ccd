"""``manage.py bench extraction``: the labelled set, the matching rule, and the report.

No test asserts a precision or recall threshold: the command prints the numbers.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from memories.extraction.types import Candidate
from spaceduck.benchmarks.extraction import DEFAULT_DATA, Case, Expected, load_cases, score

# Every kind of message the issue asks the set to cover.
CATEGORIES = {
    "identity",
    "preference",
    "fact",
    "correction",
    "episode",
    "constraint",
    "workflow",
    "behavioral",
    "chitchat",
    "question",
    "injection",
    "assistant",
    "tool",
    "negation",
    "reported_speech",
    "hedged",
    "mixed",
}
NOTHING_TO_LEARN = {"chitchat", "question", "injection", "assistant", "tool"}
NUMBER = r"(\d\.\d{3}|    -)"


# --- the labelled set -
def test_the_labelled_set_is_large_valid_and_covers_every_category() -> None:
    cases = load_cases(DEFAULT_DATA)

    assert len(cases) >= 150
    counts = Counter(case.category for case in cases)
    assert set(counts) == CATEGORIES
    assert all(count >= 3 for count in counts.values()), counts


def test_noise_questions_injections_and_other_roles_expect_nothing() -> None:
    for case in load_cases(DEFAULT_DATA):
        if case.category in NOTHING_TO_LEARN or case.role != "user":
            assert case.expected == (), case.id


def test_the_set_has_task_sourced_injections_and_non_user_roles() -> None:
    cases = load_cases(DEFAULT_DATA)

    assert any(c.task_id and c.category == "injection" for c in cases)
    assert {c.role for c in cases} == {"user", "assistant", "tool"}
    assert {e.subtype for c in cases for e in c.expected if e.kind == "procedure"} == {
        "constraint",
        "workflow",
        "behavioral",
    }
    assert any(e.confidence_below for c in cases for e in c.expected)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"id": "x", "role": "bot", "text": "t", "category": "c", "expected": []}, "role"),
        ({"id": "x", "role": "user", "text": "", "category": "c", "expected": []}, "'text'"),
        ({"id": "x", "role": "user", "text": "t", "category": "c"}, "'expected'"),
        (
            {"id": "x", "role": "user", "text": "t", "category": "c", "expected": [{"kind": "x"}]},
            "kind",
        ),
        (
            {
                "id": "x",
                "role": "user",
                "text": "t",
                "category": "c",
                "expected": [{"kind": "fact", "must_contain": ["a"], "slot": "shoe_size"}],
            },
            "slot",
        ),
        (
            {
                "id": "x",
                "role": "user",
                "text": "t",
                "category": "c",
                "expected": [{"kind": "fact", "must_contain": []}],
            },
            "must_contain",
        ),
    ],
)
def test_load_cases_names_a_bad_entry(
    tmp_path: Path, entry: dict[str, object], problem: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([entry]), encoding="utf-8")

    with pytest.raises(ValueError, match=problem):
        load_cases(path)


def test_load_cases_rejects_duplicate_ids(tmp_path: Path) -> None:
    entry = {"id": "same", "role": "user", "text": "t", "category": "c", "expected": []}
    path = tmp_path / "dup.json"
    path.write_text(json.dumps([entry, entry]), encoding="utf-8")

    with pytest.raises(ValueError, match="duplicate ids"):
        load_cases(path)


# --- the matching rule -
def fact(content: str, **fields: object) -> Candidate:
    return Candidate(kind="fact", content=content, **fields)  # type: ignore[arg-type]


def test_a_match_needs_the_kind_and_every_term_case_insensitive() -> None:
    expected = Expected(kind="fact", must_contain=("tea", "coffee"))

    assert expected.matches(fact("The user prefers Tea over COFFEE."))
    assert not expected.matches(fact("The user prefers tea."))
    assert not expected.matches(Candidate(kind="episode", content="tea and coffee"))


def test_a_term_may_list_alternatives() -> None:
    expected = Expected(kind="fact", must_contain=("not|no longer", "meat"))

    assert expected.matches(fact("The user no longer eats meat."))
    assert expected.matches(fact("The user does not eat meat."))
    assert not expected.matches(fact("The user eats meat."))


def test_slot_subtype_and_confidence_must_match_when_given() -> None:
    assert not Expected("fact", ("tokyo",), slot="location").matches(fact("Tokyo"))
    assert Expected("fact", ("tokyo",), slot="location").matches(fact("Tokyo", slot="location"))
    rule = Candidate(kind="procedure", content="Never X.", procedure_subtype="workflow")
    assert not Expected("procedure", ("x",), subtype="constraint").matches(rule)
    assert not Expected("fact", ("x",), confidence_below=0.7).matches(fact("x", confidence=0.8))
    assert Expected("fact", ("x",), confidence_below=0.7).matches(fact("x", confidence=0.4))


def test_scoring_pairs_one_to_one_and_counts_duplicates_as_correct() -> None:
    case = Case(
        id="c",
        role="user",
        text="t",
        category="c",
        expected=(Expected("fact", ("tea",)), Expected("fact", ("tea", "green"))),
    )
    produced = [fact("tea"), fact("green tea"), fact("tea again"), fact("coffee")]

    outcome = score(case, produced, seconds=0.0)

    # "green tea" must go to the stricter expectation so both are matched.
    assert len(outcome.pairs) == 2
    assert outcome.missed == []
    assert [produced[i].content for i in outcome.duplicates] == ["tea again"]
    assert [c.content for c in outcome.false_positives] == ["coffee"]
    assert outcome.correct == 3


# --- the command -
def test_bench_extraction_prints_precision_recall_and_f1_per_category() -> None:
    buf = StringIO()

    call_command("bench", "extraction", stdout=buf)

    out = buf.getvalue()
    assert "provider: heuristic/rules-v1" in out
    for category in CATEGORIES:
        assert re.search(
            rf"^{category} +\d+ +\d+ +\d+ +\d+  {NUMBER}  {NUMBER}  {NUMBER}", out, re.M
        )
    assert re.search(r"overall: precision \d\.\d{3}, recall \d\.\d{3}, F1 \d\.\d{3}", out)
    assert re.search(r"time per message: median \d+\.\d{3} ms", out)
    assert "errors:" not in out


def test_bench_extraction_show_errors_lists_misses_and_false_positives(tmp_path: Path) -> None:
    data = [
        {
            "id": "miss-1",
            "role": "user",
            "text": "I prefer tea over coffee.",
            "category": "preference",
            "expected": [{"kind": "fact", "must_contain": ["lemonade"]}],
        }
    ]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    buf = StringIO()

    call_command(
        "bench",
        "extraction",
        "--data",
        str(path),
        "--stage",
        "classifier",
        "--show-errors",
        stdout=buf,
    )

    out = buf.getvalue()
    assert "stage: classifier only" in out
    assert "[miss-1] (user) 'I prefer tea over coffee.'" in out
    assert "missed: fact containing ['lemonade']" in out
    assert "unexpected: fact 'The user prefers tea over coffee.'" in out
