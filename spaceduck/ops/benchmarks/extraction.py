"""Extraction quality: precision, recall and F1 of the deterministic pipeline on a labelled set.

Each labelled message (tests/data/extraction_labelled.json) lists the memories it
should yield. The pipeline (``memories.extraction.pipeline.propose``: injection
check, regex stage, classifier, gate, guard) runs on every message without the
database; dedup and contradiction handling are not part of it.

Matching rule: a produced candidate matches an expected memory when

- the kinds are equal,
- every ``must_contain`` term appears in the candidate's content, case-insensitive
  (a term may list alternatives separated by "|": "not|no longer"),
- ``slot`` and ``subtype`` are equal when the expected memory gives them, and
- the candidate's confidence is below ``confidence_below`` when given (hedged
  statements must not be stored as certain).

Expected and produced memories are paired one-to-one (maximum matching).
Recall = matched expected / expected. Precision = correct produced / produced,
where a produced candidate is correct when it is paired, or when it matches an
expected memory already paired with another candidate: such a duplicate is
merged by dedup later, so it is reported separately but not counted as wrong.

Two data sets:

- ``--data FILE`` (default tests/data/extraction_labelled.json, 334 messages): the set the
  offline rules were written against. ``manage.py bench extraction`` scores it alone.
- ``--split tune|heldout|all``: the corpus in tests/data/extraction_corpus/*.json (one file per
  register: casual chat, non-native English, lists, questions carrying facts, assistant and tool
  output, secrets/injections/hypotheticals, work, personal life), cut by ``split_of`` into a
  tuning part and a held-out part. The report adds a table per file and, for comparison, the
  overall numbers of the ``--data`` set. Tune on ``--split tune`` only; ``--split heldout`` is
  for reporting.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings

from memories.extraction.types import PROCEDURE_SUBTYPES, SLOTS, Candidate, Source, Verdict
from spaceduck.core.providers.chat.base import ChatProvider

DEFAULT_DATA = Path(settings.BASE_DIR) / "tests" / "data" / "extraction_labelled.json"
CORPUS_DIR = Path(settings.BASE_DIR) / "tests" / "data" / "extraction_corpus"
SPLITS = ("tune", "heldout", "all")
ROLES = ("user", "assistant", "tool")
KINDS = ("fact", "episode", "procedure")
_SOURCE_TYPES = {"user": "user_message", "assistant": "assistant_message", "tool": "tool_result"}

# The candidates kept, and the verdicts on those dropped (empty for the classifier alone).
Propose = Callable[[Source, ChatProvider], tuple[list[Candidate], list[Verdict]]]


class _Writer(Protocol):
    def write(self, msg: str) -> Any: ...


# --- the labelled set ------------------------------------------------------------------------
@dataclass(frozen=True)
class Expected:
    kind: str
    must_contain: tuple[str, ...]
    slot: str | None = None
    subtype: str | None = None
    confidence_below: float | None = None

    def matches(self, candidate: Candidate) -> bool:
        content = candidate.content.lower()
        return (
            candidate.kind == self.kind
            and all(any(alt in content for alt in term.split("|")) for term in self.must_contain)
            and (self.slot is None or candidate.slot == self.slot)
            and (self.subtype is None or candidate.procedure_subtype == self.subtype)
            and (self.confidence_below is None or candidate.confidence < self.confidence_below)
        )

    def describe(self) -> str:
        extra = "".join(
            f" {name}={value}"
            for name, value in (
                ("slot", self.slot),
                ("subtype", self.subtype),
                ("confidence below", self.confidence_below),
            )
            if value is not None
        )
        return f"{self.kind}{extra} containing {list(self.must_contain)}"


@dataclass(frozen=True)
class Case:
    id: str
    role: str
    text: str
    category: str
    expected: tuple[Expected, ...]
    task_id: str = ""

    def source(self) -> Source:
        return Source(
            role=self.role,
            text=self.text,
            source_type=_SOURCE_TYPES[self.role],
            task_id=self.task_id,
        )


def load_cases(path: Path) -> list[Case]:
    """The labelled set, checked; ValueError names the first bad entry."""
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a JSON list of messages")
    cases = [_case(entry, index) for index, entry in enumerate(raw)]
    ids = [case.id for case in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"{path}: duplicate ids {duplicates}")
    return cases


def _case(entry: Any, index: int) -> Case:
    where = f"entry #{index} ({entry.get('id', '?') if isinstance(entry, dict) else '?'})"
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: not an object")
    for key, kind in (("id", str), ("role", str), ("text", str), ("category", str)):
        if not isinstance(entry.get(key), kind) or not entry[key]:
            raise ValueError(f"{where}: {key!r} must be a non-empty string")
    if entry["role"] not in ROLES:
        raise ValueError(f"{where}: role must be one of {ROLES}")
    if not isinstance(entry.get("task_id", ""), str):
        raise ValueError(f"{where}: task_id must be a string")
    expected = entry.get("expected")
    if not isinstance(expected, list):
        raise ValueError(f"{where}: 'expected' must be a list")
    return Case(
        id=entry["id"],
        role=entry["role"],
        text=entry["text"],
        category=entry["category"],
        expected=tuple(_expected(item, where) for item in expected),
        task_id=entry.get("task_id", ""),
    )


def _expected(item: Any, where: str) -> Expected:
    if not isinstance(item, dict) or item.get("kind") not in KINDS:
        raise ValueError(f"{where}: each expected memory needs a kind in {KINDS}")
    terms = item.get("must_contain")
    if not isinstance(terms, list) or not terms or not all(isinstance(t, str) and t for t in terms):
        raise ValueError(f"{where}: must_contain must be a non-empty list of strings")
    below = item.get("confidence_below")
    if below is not None and not isinstance(below, int | float):
        raise ValueError(f"{where}: confidence_below must be a number")
    if item.get("slot") is not None and item["slot"] not in SLOTS:
        raise ValueError(f"{where}: slot must be one of {SLOTS}")
    if item.get("subtype") is not None and (
        item["kind"] != "procedure" or item["subtype"] not in PROCEDURE_SUBTYPES
    ):
        raise ValueError(f"{where}: subtype is for procedures, one of {PROCEDURE_SUBTYPES}")
    return Expected(
        kind=item["kind"],
        must_contain=tuple(t.lower() for t in terms),
        slot=item.get("slot"),
        subtype=item.get("subtype"),
        confidence_below=below,
    )


def load_corpus(directory: Path = CORPUS_DIR) -> list[Case]:
    """Every ``*.json`` file of the corpus, in name order; ids must start with "<file stem>-"
    and be unique across files (ValueError otherwise)."""
    files = sorted(Path(directory).glob("*.json"))
    if not files:
        raise ValueError(f"{directory}: no *.json files")
    cases: list[Case] = []
    for path in files:
        for case in load_cases(path):
            if not case.id.startswith(f"{path.stem}-"):
                raise ValueError(f"{path}: id {case.id!r} must start with {path.stem!r}-")
            cases.append(case)
    ids = [case.id for case in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"{directory}: duplicate ids {duplicates}")
    return cases


def split_of(case_id: str) -> str:
    """Which part ``case_id`` is in: "heldout" when sha256(id)[0] < 77 (~30%), else "tune".

    The rule depends on the id alone, so a message never changes side when files are added or
    reordered. The held-out part must NEVER be used for tuning the extractor (rules, word
    lists, thresholds, prompts): do not read its misses, do not run --show-errors on it. Tune on
    "tune" and only report "heldout".
    """
    return "heldout" if hashlib.sha256(case_id.encode("utf-8")).digest()[0] < 77 else "tune"


def select(cases: Sequence[Case], split: str) -> list[Case]:
    """The cases of one part of the split ("all" keeps every case)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}")
    return [c for c in cases if split == "all" or split_of(c.id) == split]


# --- scoring -
@dataclass
class Outcome:
    case: Case
    produced: list[Candidate]
    pairs: dict[int, int]  # expected index -> produced index
    duplicates: list[int]  # produced indexes matching an already paired expected memory
    seconds: float
    error: str = ""
    dropped: list[Verdict] = field(default_factory=list)

    @property
    def correct(self) -> int:
        return len(self.pairs) + len(self.duplicates)

    @property
    def missed(self) -> list[Expected]:
        return [e for i, e in enumerate(self.case.expected) if i not in self.pairs]

    @property
    def false_positives(self) -> list[Candidate]:
        used = set(self.pairs.values()) | set(self.duplicates)
        return [c for i, c in enumerate(self.produced) if i not in used]


def score(
    case: Case,
    produced: list[Candidate],
    seconds: float,
    error: str = "",
    dropped: Sequence[Verdict] = (),
) -> Outcome:
    pairs = _max_matching(case.expected, produced)
    paired = set(pairs.values())
    duplicates = [
        i
        for i, candidate in enumerate(produced)
        if i not in paired and any(e.matches(candidate) for e in case.expected)
    ]
    return Outcome(case, produced, pairs, duplicates, seconds, error, list(dropped))


def _max_matching(expected: Sequence[Expected], produced: Sequence[Candidate]) -> dict[int, int]:
    """Maximum one-to-one pairing (augmenting paths; the lists are a handful long)."""
    edges = [[p for p, c in enumerate(produced) if e.matches(c)] for e in expected]
    owner: dict[int, int] = {}  # produced -> expected

    def assign(e: int, seen: set[int]) -> bool:
        for p in edges[e]:
            if p not in seen:
                seen.add(p)
                if p not in owner or assign(owner[p], seen):
                    owner[p] = e
                    return True
        return False

    for e in range(len(expected)):
        assign(e, set())
    return {e: p for p, e in owner.items()}


@dataclass
class Tally:
    messages: int = 0
    expected: int = 0
    produced: int = 0
    matched: int = 0  # expected memories paired
    correct: int = 0  # produced candidates paired or duplicate
    exact: int = 0  # messages with no miss and no false positive
    errors: int = 0
    seconds: list[float] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.messages += 1
        self.expected += len(outcome.case.expected)
        self.produced += len(outcome.produced)
        self.matched += len(outcome.pairs)
        self.correct += outcome.correct
        self.exact += not (outcome.missed or outcome.false_positives or outcome.error)
        self.errors += bool(outcome.error)
        self.seconds.append(outcome.seconds)

    @property
    def precision(self) -> float | None:
        return self.correct / self.produced if self.produced else None

    @property
    def recall(self) -> float | None:
        return self.matched / self.expected if self.expected else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 2 * p * r / (p + r) if p + r else 0.0


# --- running -
def _classifier_only(source: Source, chat: ChatProvider) -> tuple[list[Candidate], list[Verdict]]:
    from memories.extraction.pipeline import classify

    found = classify(chat, text=source.text, role=source.role)
    return [c for c in found if c.retention == "store"], []


def _make_chat(provider: str) -> ChatProvider:
    if provider == "heuristic":
        from spaceduck.core.providers.chat.heuristic import HeuristicChat

        return HeuristicChat()
    from spaceduck.core.providers import get_chat

    return get_chat()  # "settings": whatever SPACEDUCK_CHAT configures


def evaluate(cases: Sequence[Case], chat: ChatProvider, propose: Propose) -> list[Outcome]:
    from spaceduck.core.providers.errors import ProviderError

    outcomes = []
    for case in cases:
        start = time.perf_counter()
        verdicts: list[Verdict] = []
        try:
            produced, verdicts = propose(case.source(), chat)
            error = ""
        except ProviderError as exc:
            produced, error = [], str(exc)
        dropped = [v for v in verdicts if v.candidate.content]
        outcomes.append(score(case, produced, time.perf_counter() - start, error, dropped))
    return outcomes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="labelled JSON file scored without --split (with --split: the reference set)",
    )
    parser.add_argument(
        "--split",
        choices=SPLITS,
        help="score this part of the corpus (--corpus) instead; never tune on 'heldout'",
    )
    parser.add_argument(
        "--corpus", type=Path, default=CORPUS_DIR, help="directory of the labelled corpus"
    )
    parser.add_argument(
        "--provider",
        choices=("heuristic", "settings"),
        default="heuristic",
        help="chat provider: the offline rules, or the one SPACEDUCK_CHAT configures",
    )
    parser.add_argument(
        "--stage",
        choices=("pipeline", "classifier"),
        default="pipeline",
        help="score the whole deterministic pipeline, or the classifier alone",
    )
    parser.add_argument(
        "--show-errors", action="store_true", help="list misses and false positives"
    )


def run(options: dict[str, Any], stdout: _Writer) -> None:
    split = options.get("split")
    corpus = options.get("corpus") or CORPUS_DIR
    if split in ("heldout", "all") and options["show_errors"]:
        from django.core.management.base import CommandError

        # Reading the held-out misses is tuning on them.
        raise CommandError("--show-errors is only for --split tune: the held-out part is not read")
    if split:
        every = load_corpus(corpus)
        cases = select(every, split)
        where = f"{corpus} (split {split}: {len(cases)} of {len(every)})"
    else:
        cases, where = load_cases(options["data"]), str(options["data"])
    chat = _make_chat(options["provider"])
    propose: Propose
    if options["stage"] == "classifier":
        propose, label = _classifier_only, "classifier only"
    else:
        from memories.extraction.pipeline import propose

        label = "pipeline (injection, regex, classifier, gate, guard)"
    outcomes = evaluate(cases, chat, propose)
    stdout.write(f"extraction: {len(cases)} messages from {where}\n")
    if split in ("heldout", "all"):
        stdout.write("held-out messages: report only, never tune on them\n")
    stdout.write(f"provider: {chat.name}/{chat.model}; stage: {label}\n")
    _write_table(outcomes, stdout)
    if split:
        stdout.write("\nby file:\n")
        _write_rows(outcomes, lambda o: o.case.id.rsplit("-", 1)[0], "file", stdout)
        reference = evaluate(load_cases(options["data"]), chat, propose)
        stdout.write("\ncomparison:\n")
        for name, group in ((f"corpus {split}", outcomes), ("labelled set", reference)):
            t = _tally(group)
            stdout.write(
                f"  {name:<16} {t.messages:>5} msgs  P {_fmt(t.precision)}  "
                f"R {_fmt(t.recall)}  F1 {_fmt(t.f1)}\n"
            )
        stdout.write(f"  (labelled set: {options['data']}, the set the rules were tuned on)\n")
    if options["show_errors"]:
        _write_errors(outcomes, stdout)


def _fmt(value: float | None) -> str:
    return "    -" if value is None else f"{value:.3f}"


def _tally(outcomes: Sequence[Outcome]) -> Tally:
    total = Tally()
    for outcome in outcomes:
        total.add(outcome)
    return total


def _write_rows(
    outcomes: Sequence[Outcome], key: Callable[[Outcome], str], title: str, stdout: _Writer
) -> Tally:
    """One row per group of ``key`` and an overall row; returns the overall tally."""
    groups: dict[str, Tally] = {}
    total = Tally()
    for outcome in outcomes:
        groups.setdefault(key(outcome), Tally()).add(outcome)
        total.add(outcome)
    header = (
        f"{title:<16} {'msgs':>4} {'exp':>4} {'prod':>4} {'ok':>4}  "
        f"{'P':>5}  {'R':>5}  {'F1':>5}  exact"
    )
    stdout.write(header + "\n")
    rows = [*sorted(groups.items()), ("overall", total)]
    for name, t in rows:
        if name == "overall":
            stdout.write("-" * len(header) + "\n")
        stdout.write(
            f"{name:<16} {t.messages:>4} {t.expected:>4} {t.produced:>4} {t.matched:>4}  "
            f"{_fmt(t.precision)}  {_fmt(t.recall)}  {_fmt(t.f1)}  {t.exact}/{t.messages}\n"
        )
    return total


def _write_table(outcomes: Sequence[Outcome], stdout: _Writer) -> None:
    total = _write_rows(outcomes, lambda o: o.case.category, "category", stdout)
    duplicates = sum(len(o.duplicates) for o in outcomes)
    ms = [s * 1000 for s in total.seconds]
    stdout.write(
        f"overall: precision {_fmt(total.precision)}, recall {_fmt(total.recall)}, "
        f"F1 {_fmt(total.f1)}; duplicates {duplicates}; provider errors {total.errors}\n"
    )
    stdout.write(f"time per message: median {statistics.median(ms):.3f} ms, max {max(ms):.3f} ms\n")


def _write_errors(outcomes: Sequence[Outcome], stdout: _Writer) -> None:
    stdout.write("\nerrors:\n")
    for outcome in outcomes:
        if not (outcome.missed or outcome.false_positives or outcome.error):
            continue
        case = outcome.case
        stdout.write(f"[{case.id}] ({case.role}) {case.text!r}\n")
        if outcome.error:
            stdout.write(f"  provider error: {outcome.error}\n")
        for expected in outcome.missed:
            stdout.write(f"  missed: {expected.describe()}\n")
            for verdict in outcome.dropped:
                if expected.matches(verdict.candidate):
                    stdout.write(
                        f"    dropped by the pipeline ({verdict.decision}: {verdict.reason}): "
                        f"{verdict.candidate.content!r}\n"
                    )
        for c in outcome.false_positives:
            detail = "/".join(x for x in (c.kind, c.procedure_subtype, c.slot) if x)
            stdout.write(f"  unexpected: {detail} {c.content!r} (confidence {c.confidence})\n")
