"""Retrieval quality on LongMemEval: session- and turn-level recall@k, per question type and
mode, knowledge updates measured as such, and answers by a model when one is configured.

``python manage.py bench longmemeval PATH [--mode both|bare|pipeline] [--limit N]
[--types T1,T2] [--k 1,5,10] [--embedder local|hash] [--answer DIR [--judge]
[--judge-model NAME]]``

PATH is a LongMemEval JSON file in the official format (LongMemEval_S, _M or the oracle
file; Wu et al., 2024, "LongMemEval: Benchmarking Chat Assistants on Long-Term Interactive
Memory", github xiaowu0162/LongMemEval, MIT): a list of questions, each with
``question_id``, ``question_type``, ``question``, ``answer``, ``question_date``,
``haystack_session_ids``, ``haystack_dates`` ("2023/05/20 (Sat) 02:21"),
``haystack_sessions`` (lists of turns: ``role``, ``content``, ``has_answer`` on the
evidence turns) and ``answer_session_ids``. A question id ending in ``_abs`` is an
abstention question: what it asks was never said, and it is reported apart.

The file is read as a stream (ijson), one question at a time: each question's haystack
goes into fresh namespaces, is asked, and is erased (``spaceduck.ops.erasure``) before
the next is read, so memory stays bounded whatever the file's size (LongMemEval_M is
2.7 GB). The body runs in a child process on a throw-away database (scratch.py).

Two modes, as ``bench locomo`` has:

- ``bare``: each turn written through ``memories.write.ingest.memory_write``, the service
  behind ``POST /api/memories`` (gate, firewall, dedup), content ``"<role>: <text>"``,
  ``occurred_at`` the session's date: what an agent that stores its turns itself keeps.
  A turn longer than a memory may be (SPACEDUCK_MAX_MEMORY_CONTENT_CHARS) is written as
  several memories, cut at paragraph, then sentence, then word boundaries; each counts
  for its turn. The gate and the guard refuse what they would refuse from an agent.
- ``pipeline``: each session is a thread and each turn a message
  (``memories.write.ingest.message_ingest``, ``created_at`` the session's date plus the
  turn's index in seconds), extracted at once (``runner.run_extraction``: the real
  pipeline, its dedup and its supersession). A memory counts for the turn of its source
  message.

Every question is asked through ``recall()`` as of its ``question_date`` (``asked_at``:
"last Saturday" means the Saturday before it) with ``top_k = max(k)``, in four columns:
vector only, keyword only, hybrid (the first stage) and final (with the second stage).

Metrics, each the mean over questions (answerable and abstention apart):

- session recall@k: 1 when an answer session is among the sessions of the top k hits;
- sessions@k (distinct): the same over the first k *distinct* sessions of the hits, as
  the official ``evaluate_retrieval_turn2session`` counts, the figure retrieval-only
  systems publish for turn-level indexes;
- turn recall@10: the share of the question's ``has_answer`` turns among the top 10 hits
  (questions with none are left out of this one);
- knowledge updates: for knowledge-update questions with two or more answer sessions, how
  often a hit of the newest answer session ranks above every hit of the older ones (final
  column; a session with no hit in the top k ranks last);
- the context block (``memories.recall.context.build_context``, the service behind
  ``POST /api/context``, with the question): how often it holds a memory of the newest
  answer session's evidence turns ("new"), one of an older answer session's ("stale"),
  and new without stale; and how often the answer's text appears in it.

``--answer DIR`` sends each question with its context block to the configured
OpenAI-compatible chat model and writes ``DIR/<mode>.jsonl`` in the form the official
``evaluate_qa.py`` reads; ``--judge`` scores each answer with the official judging prompt
of its type (``longmemeval_answers.py``). Without a chat model both refuse.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from spaceduck.ops.benchmarks.locomo import (
    COLUMNS,
    Asked,
    ask,
    session_recall,
    turn_recall,
)
from spaceduck.ops.benchmarks.scratch import Writer, run_child, setup_child_django

TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
MODES = ("bare", "pipeline")
REQUIRED = (
    "question_id",
    "question_type",
    "question",
    "answer",
    "haystack_session_ids",
    "haystack_dates",
    "haystack_sessions",
    "answer_session_ids",
)
# "2023/05/20 (Sat) 02:21"
_DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"
TURN_K = 10
CHAT_ENV, ANSWER_ENV = "SPACEDUCK_CHAT_", "SPACEDUCK_BENCH_ANSWER_"
EMBED_BATCH = 64
GET_THE_DATA = (
    "LongMemEval is not shipped with spaceduck: its JSON files (longmemeval_s_cleaned.json, "
    "longmemeval_m_cleaned.json, longmemeval_oracle.json) are linked from the README of the "
    "GitHub repository xiaowu0162/LongMemEval (MIT); download one and pass its path"
)


class BadData(ValueError):
    """The file is not in LongMemEval's format; the message says where and why."""


# --- Reading -------------------------------------------------------------------------------


def parse_date(text: object) -> datetime | None:
    """LongMemEval's "2023/05/20 (Sat) 02:21" as a UTC datetime (None when it is not one)."""
    try:
        return datetime.strptime(str(text).strip(), _DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None


@dataclass(frozen=True)
class Turn:
    key: str  # "<session id>#<index>": unique in the question's haystack
    session: str
    date: datetime | None
    index: int
    role: str
    content: str
    has_answer: bool

    @property
    def said(self) -> str:
        return f"{self.role}: {self.content}"


@dataclass
class Question:
    id: str
    type: str
    question: str
    answer: str
    date: datetime | None
    answer_sessions: list[str]
    turns: list[Turn]
    session_dates: dict[str, datetime | None] = field(default_factory=dict)

    @property
    def abstention(self) -> bool:
        return self.id.endswith("_abs")

    @property
    def evidence(self) -> set[str]:
        """The ``has_answer`` turns' keys."""
        return {turn.key for turn in self.turns if turn.has_answer}

    @property
    def session_of(self) -> dict[str, str]:
        return {turn.key: turn.session for turn in self.turns}

    def answer_sessions_by_date(self) -> list[str]:
        """The answer sessions of the haystack, oldest first (file order breaks ties)."""
        held = [s for s in self.answer_sessions if s in self.session_dates]
        order = {s: n for n, s in enumerate(self.session_dates)}
        oldest = datetime.min.replace(tzinfo=UTC)
        return sorted(held, key=lambda s: (self.session_dates[s] or oldest, order[s]))


def question_from(record: object, number: int) -> Question:
    """One official record as a Question, or BadData naming the record and the problem."""
    if not isinstance(record, dict):
        raise BadData(f"record {number} is not a JSON object")
    name = f"record {number} ({record.get('question_id', 'no question_id')})"
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        raise BadData(f"{name} has no {', '.join(missing)}")
    ids, dates, sessions = (
        record["haystack_session_ids"],
        record["haystack_dates"],
        record["haystack_sessions"],
    )
    if not all(isinstance(x, list) for x in (ids, dates, sessions)) or not (
        len(ids) == len(dates) == len(sessions)
    ):
        raise BadData(
            f"{name}: haystack_session_ids, haystack_dates and haystack_sessions must be "
            "lists of one length"
        )
    turns: list[Turn] = []
    session_dates: dict[str, datetime | None] = {}
    for session_id, date_text, session in zip(ids, dates, sessions, strict=True):
        sid, when = str(session_id), parse_date(date_text)
        session_dates[sid] = when
        if not isinstance(session, list):
            raise BadData(f"{name}: session {sid} is not a list of turns")
        for index, turn in enumerate(session):
            if not isinstance(turn, dict) or "role" not in turn or "content" not in turn:
                raise BadData(f"{name}: turn {index} of session {sid} has no role or content")
            turns.append(
                Turn(
                    key=f"{sid}#{index}",
                    session=sid,
                    date=when,
                    index=index,
                    role=str(turn["role"]),
                    content=str(turn["content"]),
                    has_answer=bool(turn.get("has_answer")),
                )
            )
    return Question(
        id=str(record["question_id"]),
        type=str(record["question_type"]),
        question=str(record["question"]),
        answer=str(record["answer"]),
        date=parse_date(record.get("question_date", "")),
        answer_sessions=[str(s) for s in record["answer_session_ids"]],
        turns=turns,
        session_dates=session_dates,
    )


def read_questions(
    path: Path, *, limit: int = 0, types: tuple[str, ...] = ()
) -> Iterator[Question]:
    """The file's questions in order, parsed one at a time (``types``: only those;
    ``limit``: at most that many of them)."""
    import ijson

    given = 0
    with path.open("rb") as stream:
        try:
            for number, record in enumerate(ijson.items(stream, "item", use_float=True)):
                if types and isinstance(record, dict) and record.get("question_type") not in types:
                    continue
                yield question_from(record, number)
                given += 1
                if limit and given >= limit:
                    return
        except ijson.JSONError as exc:
            raise BadData(f"{path} is not a JSON list of questions ({exc})") from None


def check_file(path: Path) -> None:
    """A CommandError unless ``path`` opens as LongMemEval (its first record is checked)."""
    from django.core.management import CommandError

    if not path.is_file():
        raise CommandError(f"{path}: no such file. {GET_THE_DATA}.")
    try:
        first = next(read_questions(path, limit=1), None)
    except (BadData, UnicodeDecodeError) as exc:
        raise CommandError(f"{path} is not LongMemEval data: {exc}. {GET_THE_DATA}.") from None
    if first is None:
        raise CommandError(f"{path} holds no questions. {GET_THE_DATA}.")


# --- The command ---------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help=f"LongMemEval JSON (official format). {GET_THE_DATA}.")
    parser.add_argument("--embedder", default="local", choices=["local", "hash"])
    parser.add_argument("--mode", default="both", choices=["both", *MODES])
    parser.add_argument("--k", default="1,5,10", help="cut-offs for session recall@k")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument(
        "--types",
        default="",
        help=f"only these question types, comma-separated: {', '.join(TYPES)}",
    )
    parser.add_argument(
        "--answer",
        metavar="DIR",
        help="answer each question with the configured chat model from its context block; "
        "writes DIR/<mode>.jsonl ({question_id, hypothesis}, as evaluate_qa.py reads)",
    )
    parser.add_argument(
        "--judge",
        action="store_true",
        help="score the answers with the official judging prompts (needs --answer)",
    )
    parser.add_argument(
        "--judge-model", default="", help="the judge's model (default: the chat model)"
    )
    parser.add_argument(
        "--pools",
        metavar="FILE",
        default="",
        help="write every question's second-stage candidates to FILE, for bench secondstage",
    )


def _cutoffs(text: str) -> list[int]:
    from django.core.management import CommandError

    try:
        cutoffs = sorted({int(k) for k in text.split(",") if k.strip()})
    except ValueError:
        cutoffs = []
    if not cutoffs or cutoffs[0] < 1:
        raise CommandError(f"--k must be positive integers separated by commas, got {text!r}")
    return cutoffs


def _types(text: str) -> list[str]:
    from django.core.management import CommandError

    chosen = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in chosen if t not in TYPES]
    if unknown:
        raise CommandError(f"--types: unknown {', '.join(unknown)}; choose from {', '.join(TYPES)}")
    return chosen


def run(options: dict[str, Any], stdout: Writer) -> None:
    from django.conf import settings
    from django.core.management import CommandError

    path = Path(options["path"])
    cutoffs, types = _cutoffs(str(options["k"])), _types(str(options["types"]))
    if options["limit"] < 0:
        raise CommandError("--limit must be 0 (every question) or more")
    check_file(path)
    env: dict[str, str] = {"SPACEDUCK_EMBEDDING_PROVIDER": options["embedder"]}
    answer_dir = ""
    if options["judge"] and not options["answer"]:
        raise CommandError("--judge scores the answers of --answer DIR: give both")
    if options["answer"]:
        from spaceduck.ops.benchmarks.longmemeval_answers import chat_env, require_model

        require_model(settings.SPACEDUCK_CHAT, "--judge" if options["judge"] else "--answer")
        # Under other names: the child's memory pipeline keeps the offline classifier, so
        # the recall figures do not change with --answer (nor cost a model call a message).
        env.update(
            {
                k.replace(CHAT_ENV, ANSWER_ENV): v
                for k, v in chat_env(settings.SPACEDUCK_CHAT).items()
            }
        )
        directory = Path(options["answer"]).resolve()
        directory.mkdir(parents=True, exist_ok=True)
        answer_dir = str(directory)
    config = {
        "path": str(path.resolve()),
        "cutoffs": cutoffs,
        "limit": options["limit"],
        "types": types,
        "modes": list(MODES) if options["mode"] == "both" else [options["mode"]],
        "answer_dir": answer_dir,
        "judge": bool(options["judge"]),
        "judge_model": options["judge_model"],
        "pools": str(Path(options["pools"]).resolve()) if options["pools"] else "",
    }
    run_child("spaceduck.ops.benchmarks.longmemeval", [json.dumps(config)], stdout, **env)


# --- Storing a haystack (in the child) ------------------------------------------------------

_PARAGRAPH = re.compile(r"\n\s*\n|\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def pieces(text: str, limit: int) -> list[str]:
    """``text`` cut into parts of at most ``limit`` characters: whole paragraphs where they
    fit, else sentences, else words (a word longer than the limit is cut)."""
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    units: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        for sentence in (
            _SENTENCE.split(paragraph.strip()) if len(paragraph) > limit else [paragraph]
        ):
            words = sentence.split() if len(sentence) > limit else [sentence]
            units.extend(w[i : i + limit] for w in words for i in range(0, len(w), limit))
    out: list[str] = []
    for unit in (u.strip() for u in units):
        if not unit:
            continue
        if out and len(out[-1]) + 1 + len(unit) <= limit:
            out[-1] = f"{out[-1]} {unit}"
        else:
            out.append(unit)
    return out


def bare_texts(turn: Turn, limit: int) -> list[str]:
    """The memories a turn is written as in bare mode: ``"<role>: <part>"`` each."""
    prefix = f"{turn.role}: "
    return [prefix + part for part in pieces(turn.content, limit - len(prefix))]


class PrimedEmbedder:
    """The write path's embedder, answering from vectors computed ahead.

    The write path embeds each memory alone. Here a question's texts are embedded in
    batches sorted by length (less padding), on a thread, while the previous question is
    written, asked and erased (numpy releases the GIL in its products), and handed over
    when the write path asks for one of them: the same vectors to float rounding. Bare
    mode went from ~37 to ~26 s a LongMemEval-S question on this 2-core machine."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.ready: dict[str, np.ndarray] = {}

    def vectors(self, texts: list[str]) -> dict[str, np.ndarray]:
        todo = sorted(set(texts), key=len)
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start : start + EMBED_BATCH]
            out.update(zip(batch, self.embedder.embed(batch), strict=True))
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if all(t in self.ready for t in texts):
            return np.stack([self.ready[t] for t in texts])
        return self.embedder.embed(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.embedder, name)


def primed(
    questions: Iterator[Question], embedder: PrimedEmbedder, modes: list[str]
) -> Iterator[tuple[Question, dict[str, np.ndarray]]]:
    """Each question with its texts' vectors (the question's own and, for bare mode, its
    memories'), the next question's computed on a thread while this one is used: two
    haystacks at most in memory."""
    from concurrent.futures import Future, ThreadPoolExecutor

    def texts(question: Question) -> list[str]:
        limit = _limit()
        stored = [t for turn in question.turns for t in bare_texts(turn, limit)]
        return [question.question, *(stored if "bare" in modes else [])]

    with ThreadPoolExecutor(1, thread_name_prefix="embed-ahead") as pool:
        pending: tuple[Question, Future[dict[str, np.ndarray]]] | None = None
        for question in questions:
            future = pool.submit(embedder.vectors, texts(question))
            if pending is not None:
                yield pending[0], pending[1].result()
            pending = (question, future)
        if pending is not None:
            yield pending[0], pending[1].result()


def store_bare(namespace: str, question: Question) -> tuple[dict[int, set[str]], int]:
    """Every turn through memory_write; memory id -> the turn keys it holds, and how many
    turns left no memory (refused by the gate or the guard)."""
    from memories.extraction.gate import has_action
    from memories.extraction.types import candidate_from_api
    from memories.write.ingest import memory_write

    limit = _limit()
    turns_of: dict[int, set[str]] = defaultdict(set)
    refused = 0
    for turn in question.turns:
        kept = False
        for text in bare_texts(turn, limit):
            kind = "episode" if has_action(text) else "fact"
            candidate = candidate_from_api(
                {"kind": kind, "content": text, "occurred_at": turn.date}
            )
            verdict = memory_write(candidate, namespace=namespace, actor="bench:longmemeval")
            memory_id = verdict.memory_id or verdict.matched_memory_id
            if memory_id:
                turns_of[memory_id].add(turn.key)
                kept = True
        refused += not kept
    return turns_of, refused


def store_pipeline(namespace: str, question: Question) -> tuple[dict[int, set[str]], int]:
    """Every session a thread, every turn a message, each extracted at once; memory id ->
    the turn of its source message, and how many messages left no memory."""
    from memories.models import Memory
    from memories.write.ingest import message_ingest
    from memories.write.runner import run_extraction
    from memories.write.services import create_thread

    turn_of_message: dict[str, str] = {}
    threads: dict[str, str] = {}
    for turn in question.turns:
        if turn.session not in threads:
            threads[turn.session] = str(create_thread(namespace, f"session {turn.session}").id)
        at = (turn.date or datetime(2000, 1, 1, tzinfo=UTC)) + timedelta(seconds=turn.index)
        role = turn.role if turn.role in ("user", "assistant") else "user"
        ingested = message_ingest(threads[turn.session], role, turn.content, created_at=at)
        turn_of_message[ingested.message.pk] = turn.key
        if ingested.extraction is not None:
            run_extraction(ingested.extraction.pk)
    turns_of: dict[int, set[str]] = {}
    for memory_id, message_id in Memory.objects.filter(namespace=namespace).values_list(
        "id", "source_message_id"
    ):
        if message_id in turn_of_message:
            turns_of[memory_id] = {turn_of_message[message_id]}
    sources = {key for keys in turns_of.values() for key in keys}
    return turns_of, len(question.turns) - len(sources)


# --- Asking --------------------------------------------------------------------------------


@dataclass
class Result:
    """One question as asked of one mode: the metrics' inputs, nothing of the haystack."""

    asked: Asked
    type: str
    abstention: bool
    memories: int
    unstored: int
    newer_first: bool | None = None  # knowledge updates: None when not measured
    context: dict[str, bool] = field(default_factory=dict)
    seconds: float = 0.0


def distinct_session_recall(asked: Asked, hits: list[set[str]], k: int) -> float:
    """The official turn-to-session count: 1 when an answer session is among the first k
    distinct sessions of the hits (evaluate_retrieval_turn2session's effective k)."""
    seen: list[Any] = []
    for hit in hits:
        for key in sorted(hit):
            session = asked.session_of[key]
            if session not in seen:
                seen.append(session)
    return float(bool(asked.evidence_sessions & set(seen[:k])))


def session_rank(hits: list[set[str]], session_of: dict[str, str], session: str) -> int:
    """The rank (0-based) of the first hit holding a turn of ``session``; len(hits) if none."""
    for rank, hit in enumerate(hits):
        if any(session_of[key] == session for key in hit):
            return rank
    return len(hits)


def newer_ranks_first(question: Question, hits: list[set[str]]) -> bool | None:
    """Knowledge update: whether the newest answer session's best hit ranks above every
    older answer session's (None: not a knowledge update with two answer sessions)."""
    sessions = question.answer_sessions_by_date()
    if question.type != "knowledge-update" or len(sessions) < 2:
        return None
    session_of = question.session_of
    newest = session_rank(hits, session_of, sessions[-1])
    older = min(session_rank(hits, session_of, s) for s in sessions[:-1])
    return newest < len(hits) and newest < older


def context_check(
    question: Question, turns_of: dict[int, set[str]], memory_ids: list[int], block: str
) -> dict[str, bool]:
    """What the context block holds of the answer: the newest answer session's evidence
    turns ("new"), an older answer session's ("stale"), and the answer's own text."""
    sessions = question.answer_sessions_by_date()
    evidence = {t.key: t.session for t in question.turns if t.has_answer}
    held = {evidence[key] for m in memory_ids for key in turns_of.get(m, ()) if key in evidence}
    out = {"answer_text": question.answer.strip().lower() in block.lower()}
    if sessions:
        out["new"] = sessions[-1] in held
        if len(sessions) > 1:
            out["stale"] = bool(held & set(sessions[:-1]))
            out["new_not_stale"] = out["new"] and not out["stale"]
    return out


def ask_question(
    question: Question,
    namespace: str,
    turns_of: dict[int, set[str]],
    vector: np.ndarray,
    top_k: int,
) -> tuple[Asked, bool | None, dict[str, bool], str]:
    """Recall in every column, the knowledge-update order, and the context block."""
    from memories.recall.context import build_context

    evidence = question.evidence
    found, pool = ask(
        namespace, turns_of, {"question": question.question}, evidence, vector, top_k, question.date
    )
    asked = Asked(question.id, 0, evidence, found, pool, question.session_of)  # type: ignore[arg-type]
    context = build_context(
        namespace=namespace, thread_id=None, query=question.question, asked_at=question.date
    )
    ids = [item.memory.pk for item in context.memories]
    check = context_check(question, turns_of, ids, context.system_block)
    return asked, newer_ranks_first(question, found["final"]), check, context.system_block


# --- The child -----------------------------------------------------------------------------


def child_main(config: dict[str, Any]) -> None:
    setup_child_django()
    from tqdm import tqdm

    import memories.write.dedup as dedup
    from spaceduck.core.providers import get_embedder
    from spaceduck.ops.erasure import erase_namespace

    embedder = get_embedder()
    ahead = PrimedEmbedder(embedder)
    dedup.get_embedder = lambda: ahead  # type: ignore[assignment,return-value]
    cutoffs, modes = list(config["cutoffs"]), list(config["modes"])
    top_k = max([*cutoffs, TURN_K])
    answers = _answerers(config, modes)
    results: dict[str, list[Result]] = {mode: [] for mode in modes}
    path = Path(config["path"])
    total = config["limit"] or sum(1 for _ in _ids(path, tuple(config["types"])))
    fp = embedder.fingerprint
    print(
        f"longmemeval: {path.name}, {total} questions, modes {', '.join(modes)}, "
        f"embedder {fp.provider}/{fp.model}"
    )
    started = time.perf_counter()
    questions = read_questions(path, limit=config["limit"], types=tuple(config["types"]))
    bar = tqdm(total=total, unit="question", file=sys.stdout, ncols=90, mininterval=0)
    for question, vectors in primed(questions, ahead, modes):
        vector, ahead.ready = vectors[question.question], vectors
        for mode in modes:
            namespace = f"agent:lme-{mode}-{question.id}"
            began = time.perf_counter()
            store = store_bare if mode == "bare" else store_pipeline
            turns_of, unstored = store(namespace, question)
            asked, newer, check, block = ask_question(question, namespace, turns_of, vector, top_k)
            result = Result(asked, question.type, question.abstention, len(turns_of), unstored)
            result.newer_first, result.context = newer, check
            result.seconds = time.perf_counter() - began
            results[mode].append(result)
            if mode in answers:
                answers[mode].answer(
                    question.id,
                    question.type,
                    question.question,
                    _date_text(question),
                    question.answer,
                    block,
                )
            erase_namespace(namespace, by="bench:longmemeval")
        bar.update()
    bar.close()
    took = time.perf_counter() - started
    report(results, cutoffs, took)
    print(f"peak memory of the benchmark's process: {_peak_mb():.0f} MB")
    if config.get("pools"):
        from spaceduck.ops.benchmarks.locomo import write_pools

        pools = {mode: [_typed(r) for r in rows] for mode, rows in results.items()}
        write_pools(config["pools"], "longmemeval", pools)
    for mode, answerer in answers.items():
        print(f"\n=== answers, {mode} mode ===")
        for line in answerer.summary():
            print(line)


def _typed(result: Result) -> Asked:
    """The question's Asked, its ``category`` the index of its type (for splits by type)."""
    result.asked.category = TYPES.index(result.type) if result.type in TYPES else len(TYPES)
    return result.asked


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _limit() -> int:
    from django.conf import settings

    return int(settings.MAX_MEMORY_CONTENT_CHARS)


def _date_text(question: Question) -> str:
    return question.date.strftime(_DATE_FORMAT) if question.date else ""


def _ids(path: Path, types: tuple[str, ...]) -> Iterator[str]:
    """The question ids of the file (of ``types``), for the progress bar's total."""
    import ijson

    with path.open("rb") as stream:
        for record in ijson.items(stream, "item", use_float=True):
            if not types or record.get("question_type") in types:
                yield str(record.get("question_id"))


def _answerers(config: dict[str, Any], modes: list[str]) -> dict[str, Any]:
    if not config["answer_dir"]:
        return {}
    import os

    from spaceduck.core.providers.chat.openai import OpenAIChat
    from spaceduck.ops.benchmarks.longmemeval_answers import Answers

    def given(name: str) -> str | None:
        return os.environ.get(ANSWER_ENV + name) or None

    chat = OpenAIChat.from_settings(
        {
            "model": given("MODEL"),
            "base_url": given("BASE_URL"),
            "api_key": given("API_KEY"),
            "timeout": float(given("TIMEOUT") or 60.0),
        }
    )
    judge_model = config["judge_model"] or chat.model
    return {
        mode: Answers(Path(config["answer_dir"]), mode, chat, judge_model, judge=config["judge"])
        for mode in modes
    }


# --- The report ----------------------------------------------------------------------------


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def report(results: dict[str, list[Result]], cutoffs: list[int], took: float) -> None:
    some = next(iter(results.values()))
    print(f"\n{len(some)} questions in {took:.0f} s ({took / max(1, len(some)):.1f} s a question)")
    print(
        "session recall@k: an answer session among the sessions of the top k hits; "
        "distinct@k: among the first k distinct sessions (the official turn-to-session "
        f"count); turn@{TURN_K}: the share of has_answer turns among the top {TURN_K} hits"
    )
    for mode, rows in results.items():
        print(f"\n=== {mode} mode ===")
        memories = sum(r.memories for r in rows)
        unstored = sum(r.unstored for r in rows)
        turns = sum(len(r.asked.session_of) for r in rows)
        print(f"{turns} turns, {memories} memories, {unstored} turns left no memory")
        answerable = [r for r in rows if not r.abstention]
        abstention = [r for r in rows if r.abstention]
        for label, part in (("answerable", answerable), ("abstention", abstention)):
            if part:
                table(label, part, cutoffs)
        split_by_fit(answerable)
        updates(rows)


def _cells(rows: list[Result], column: str, cutoffs: list[int]) -> list[float]:
    cells = [
        _mean([session_recall(r.asked, r.asked.found[column], k) for r in rows]) for k in cutoffs
    ]
    cells += [
        _mean([distinct_session_recall(r.asked, r.asked.found[column], k) for r in rows])
        for k in cutoffs
    ]
    with_turns = [r for r in rows if r.asked.evidence]
    cells.append(_mean([turn_recall(r.asked, r.asked.found[column], TURN_K) for r in with_turns]))
    return cells


def table(label: str, rows: list[Result], cutoffs: list[int]) -> None:
    names = [f"s@{k}" for k in cutoffs] + [f"dist@{k}" for k in cutoffs] + [f"turn@{TURN_K}"]
    by_type = defaultdict(list)
    for r in rows:
        by_type[r.type].append(r)
    print(f"{label} ({len(rows)} questions)".ljust(40) + "".join(f"{n:>8}" for n in names))
    groups = [("overall", rows)] + [(t, by_type[t]) for t in TYPES if by_type[t]]
    for name, part in groups:
        for column in COLUMNS:
            if name != "overall" and column in ("vector", "keyword"):
                continue  # per type: the first stage and the final order only
            head = f"  {name[:26]} ({len(part)}) {column}"
            print(head.ljust(40) + "".join(_cell(v) for v in _cells(part, column, cutoffs)))


def split_by_fit(rows: list[Result]) -> None:
    """Hybrid against final apart for the questions the shipped second stage was fitted on
    and the others (held out), as far as this file holds them (bench secondstage)."""
    from memories.recall import rerank

    shipped = rerank.weights()
    fitted_on = set(shipped.fitted_on) if shipped else set()
    for label, part in (
        ("fitted on", [r for r in rows if r.asked.conversation in fitted_on]),
        ("held out", [r for r in rows if r.asked.conversation not in fitted_on]),
    ):
        with_turns = [r.asked for r in part if r.asked.evidence]
        if not with_turns:
            continue
        cells = "  ".join(
            f"{column} turn@{TURN_K} "
            f"{_mean([turn_recall(a, a.found[column], TURN_K) for a in with_turns]):.3f}"
            for column in ("hybrid", "final")
        )
        print(f"  second stage {label} ({len(with_turns)} questions): {cells}")


def _cell(value: float) -> str:
    """A figure, or "-" where no question had one (turn recall without has_answer turns)."""
    return f"{'-':>8}" if np.isnan(value) else f"{value:>8.3f}"


def updates(rows: list[Result]) -> None:
    measured = [r for r in rows if r.newer_first is not None]
    if measured:
        share = _mean([float(bool(r.newer_first)) for r in measured])
        print(
            f"knowledge update: the newest answer session ranks above the older ones in "
            f"{share:.3f} of {len(measured)} questions (final column)"
        )
    updated = [r for r in rows if r.type == "knowledge-update" and "new_not_stale" in r.context]
    if updated:
        parts = {
            key: _mean([float(r.context[key]) for r in updated])
            for key in ("new", "stale", "new_not_stale", "answer_text")
        }
        print(
            f"knowledge update, context block ({len(updated)} questions): new value "
            f"{parts['new']:.3f}, stale value {parts['stale']:.3f}, new and not stale "
            f"{parts['new_not_stale']:.3f}, the answer's text {parts['answer_text']:.3f}"
        )


if __name__ == "__main__":
    try:
        child_main(json.loads(sys.argv[1]))
    except BadData as exc:
        print(f"longmemeval: {exc}")
        sys.exit(2)
