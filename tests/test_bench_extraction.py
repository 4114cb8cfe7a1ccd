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
from django.core.management.base import CommandError

from memories.extraction.types import KINDS, PROCEDURE_SUBTYPES, SLOTS, Candidate
from spaceduck.ops.benchmarks.extraction import (
    CORPUS_DIR,
    DEFAULT_DATA,
    Case,
    Expected,
    load_cases,
    load_corpus,
    score,
    select,
    split_of,
)

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


# --- the corpus (tests/data/extraction_corpus) and its tune/held-out split -
# The registers the corpus is written in: one file each.
CORPUS_FILES = {
    "adversarial",
    "assorted",
    "chatlog",
    "casual",
    "life",
    "nonnative",
    "questions",
    "roles",
    "structured",
    "work",
}
# Categories whose messages must yield nothing, whatever the role.
CORPUS_NOTHING = {
    "assistant",
    "chitchat",
    "fiction",
    "hypothetical",
    "injection",
    "question",
    "quote",
    "secret",
    "tool",
    "translation",
}


@pytest.fixture(scope="module")
def corpus() -> list[Case]:
    return load_corpus(CORPUS_DIR)


def test_the_corpus_loads_with_unique_ids_prefixed_by_its_file(corpus: list[Case]) -> None:
    assert len(corpus) >= 1000
    ids = [case.id for case in corpus]
    assert len(set(ids)) == len(ids)
    assert {path.stem for path in CORPUS_DIR.glob("*.json")} == CORPUS_FILES
    assert {case.id.rsplit("-", 1)[0] for case in corpus} == CORPUS_FILES


def test_every_corpus_label_is_valid(corpus: list[Case]) -> None:
    # load_cases already rejects unknown kinds/slots/subtypes; check the values again here.
    for case in corpus:
        assert case.role in ("user", "assistant", "tool"), case.id
        assert case.text.strip(), case.id
        for e in case.expected:
            assert e.kind in KINDS, case.id
            assert e.slot is None or e.slot in SLOTS, case.id
            assert (e.subtype in PROCEDURE_SUBTYPES) == (e.kind == "procedure"), case.id
            assert all(t == t.lower() and t.strip() for t in e.must_contain), case.id
            assert e.confidence_below is None or 0 < e.confidence_below < 1, case.id
    assert {e.slot for c in corpus for e in c.expected if e.slot} == set(SLOTS)
    assert {e.subtype for c in corpus for e in c.expected if e.subtype} == set(PROCEDURE_SUBTYPES)


def test_the_corpus_mixes_registers_roles_and_nothing_to_store(corpus: list[Case]) -> None:
    nothing = [case for case in corpus if not case.expected]
    assert 0.30 <= len(nothing) / len(corpus) <= 0.50
    for case in corpus:
        if case.category in CORPUS_NOTHING or case.role != "user":
            assert case.expected == (), case.id
    counts = Counter(case.category for case in corpus)
    assert CORPUS_NOTHING | {"question_fact", "typo", "mixed", "hedged"} <= set(counts)
    for category, least in (("assistant", 30), ("tool", 30), ("secret", 20), ("injection", 20)):
        assert counts[category] >= least, counts
    assert any(case.task_id and case.category == "injection" for case in corpus)


def test_the_split_is_a_fixed_hash_of_the_id_holding_out_about_30_percent(
    corpus: list[Case],
) -> None:
    assert split_of("casual-001") == split_of("casual-001")
    # sha256("a")[0] == 0xca, sha256("c")[0] == 0x2e (46 < 77).
    assert (split_of("a"), split_of("c")) == ("tune", "heldout")
    heldout, tune = select(corpus, "heldout"), select(corpus, "tune")
    assert len(heldout) + len(tune) == len(corpus) == len(select(corpus, "all"))
    assert {c.id for c in heldout}.isdisjoint(c.id for c in tune)
    assert 0.25 <= len(heldout) / len(corpus) <= 0.35
    # Every file contributes to both parts.
    assert {c.id.rsplit("-", 1)[0] for c in heldout} == CORPUS_FILES
    with pytest.raises(ValueError, match="split"):
        select(corpus, "test")


def test_load_corpus_rejects_ids_not_prefixed_by_their_file(tmp_path: Path) -> None:
    entry = {"id": "other-1", "role": "user", "text": "t", "category": "c", "expected": []}
    (tmp_path / "mine.json").write_text(json.dumps([entry]), encoding="utf-8")

    with pytest.raises(ValueError, match="must start with 'mine'-"):
        load_corpus(tmp_path)


def test_bench_extraction_split_heldout_prints_the_corpus_and_the_labelled_set(
    corpus: list[Case],
) -> None:
    buf = StringIO()

    call_command("bench", "extraction", "--split", "heldout", stdout=buf)

    out = buf.getvalue()
    heldout = len(select(corpus, "heldout"))
    assert f"extraction: {heldout} messages from" in out
    assert f"(split heldout: {heldout} of {len(corpus)})" in out
    assert re.search(rf"^secret +\d+ +0 +\d+ +0  {NUMBER}  {NUMBER}  {NUMBER}", out, re.M)
    assert re.search(rf"^casual +\d+ +\d+ +\d+ +\d+  {NUMBER}  {NUMBER}  {NUMBER}", out, re.M)
    assert re.search(r"overall: precision \d\.\d{3}, recall \d\.\d{3}, F1 \d\.\d{3}", out)
    assert re.search(rf"corpus heldout +{heldout} msgs  P {NUMBER}  R {NUMBER}", out)
    assert re.search(r"labelled set +\d+ msgs  P \d\.\d{3}  R \d\.\d{3}  F1 \d\.\d{3}", out)
    assert "errors:" not in out


def test_bench_extraction_refuses_to_show_held_out_errors() -> None:
    with pytest.raises(CommandError, match="show-errors"):
        call_command("bench", "extraction", "--split", "heldout", "--show-errors")
