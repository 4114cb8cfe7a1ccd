"""Retrieval quality on LoCoMo: turn- and session-level evidence recall@k of vector-only,
keyword-only and hybrid recall, and after the second stage.

``python manage.py bench locomo PATH [--embedder local|hash] [--k 5,10] [--limit N]
[--fit] [--fit-on conv-26,conv-30,conv-41]``

PATH is a LoCoMo JSON file. The data set is not part of this repository: it is
LoCoMo (Maharana et al., 2024, "Evaluating Very Long-Term Conversational Memory
of LLM Agents"), published by snap-research in the GitHub repository
snap-research/LoCoMo as ``data/locomo10.json`` (ten conversations) under
CC BY-NC 4.0 (non-commercial use, attribution). Any file with the same shape
works: a list of samples, each with a ``conversation`` (``session_<n>`` turn
lists and ``session_<n>_date_time``) and a ``qa`` list (``question``,
``evidence`` dia_ids, ``category``). Keep the conversations you tune on apart
from the ones you report.

Runs in a child process on a throw-away database (see scratch.py) with the
chosen embedder. Each conversation gets its own namespace
(``agent:locomo-<sample_id>``); each of its sessions is stored as a thread
whose messages are the session's turns, in order (``created_at`` = the session
date + the turn's index in seconds; content ``"<speaker>: <text>"``). Every
turn is also stored as one memory (no extraction), kind ``episode``:

- ``content``: ``"[<session date>] <speaker>: <text>"`` plus
  ``" [shares a photo: <caption>]"`` when the turn has a ``blip_caption``;
  this is what the embedder sees (``services.embedding_text``), in batches of 64;
- ``context``: the previous turn of the same session, ``"<speaker>: <text>"``
  (empty for a session's first turn): what the turn answers or continues.
  As for memories the extraction pipeline stores (where it puts the previous
  message and the source message), it is keyword-searched, not embedded;
- ``occurred_at``: the session date; ``source_thread`` / ``source_message``:
  the session's thread and the turn's message, which recall's neighbour bonus
  uses (hits from adjacent messages of one thread lift each other).

Every conversation is stored twice, in two modes reported side by side:

- ``pipeline``: as above (date prefix, previous turn as context, thread and source
  message, so the neighbour bonus applies): what the extraction pipeline stores;
- ``bare``: each turn written through ``memories.write.ingest.memory_write``, the service
  behind ``POST /api/memories`` (gate, firewall, dedup), content = ``"<speaker>:
  <text>"`` only, ``occurred_at`` = the session date, no context, no source message:
  what an agent that extracts for itself stores. Kind ``episode`` when the turn has an
  action verb (``gate.has_action``: the gate refuses an episode without one), else
  ``fact``. The gate and the guard still refuse what they would refuse from an agent
  (a turn that only asks, greetings, fragments); the report says how many. Recall's
  neighbours there are the memories written just before and after (``recall.widen``),
  not thread messages.

Every question of categories 1-4 (category 5, adversarial, has no answer to find)
is then asked through ``recall()`` with ``top_k = max(k)`` and four columns: vector
only, keyword only, hybrid (both lists fused: the first stage), each with the
second stage off, and ``final`` (hybrid + the second stage, memories.recall.rerank).
Relative dates in questions are resolved against the day after the last session.

``--fit`` fits the second stage's weights on the ``--fit-on`` conversations of the
file (both modes' candidates pooled) and writes ``memories/recall/rerank.json``. The report
gives hybrid and final for the conversations the weights behind the final columns
were fitted on and for the file's other conversations (held out) apart; a file with
none of them is all held out. The shipped weights were fitted on conv-26, conv-30,
conv-41 of ``locomo-dev.json`` and are validated on conv-42 and conv-43.

Metrics, per question, each reported as the mean over questions, overall and per
category:

- turn recall@k (evidence recall) = |evidence dia_ids among the dia_ids of the top k
  hits| / |evidence dia_ids|;
- session recall@k = 1 when a session holding one of the evidence turns is among the
  sessions of the top k hits (each hit counts for the session its turn came from),
  else 0: the figure other long-term memory systems publish for LoCoMo.

Evidence ids are normalised (``"D8:6; D9:17"`` is two ids, ``"D:11:26"`` is
``D11:26``); questions left with no evidence id are skipped; an evidence id that
names no stored turn counts as missed (and holds no session).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from spaceduck.ops.benchmarks.scratch import Writer, run_child, setup_child_django

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# The columns: each first-stage list alone, both fused, and after the second stage.
COLUMNS = {
    "vector": ("vector",),
    "keyword": ("keyword",),
    "hybrid": ("vector", "keyword"),
    "final": ("vector", "keyword"),
}
STORES = ("pipeline", "bare")
# The dev conversations the second stage is fitted on; the others are held out.
FIT_ON = ("conv-26", "conv-30", "conv-41")
EMBED_BATCH = 64
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)$")
# LoCoMo's session dates look like "1:56 pm on 8 May, 2023".
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


GET_THE_DATA = (
    "LoCoMo is not shipped with spaceduck: download data/locomo10.json from the GitHub "
    "repository snap-research/LoCoMo (CC BY-NC 4.0) and pass its path"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path", help=f"LoCoMo JSON (a list of conversations with qa). {GET_THE_DATA}."
    )
    parser.add_argument("--embedder", default="local", choices=["local", "hash"])
    parser.add_argument("--k", default="5,10", help="cut-offs for recall@k")
    parser.add_argument("--limit", type=int, default=0, help="only the first N conversations")
    parser.add_argument(
        "--fit",
        action="store_true",
        help="fit the second stage on --fit-on alone and write memories/recall/rerank.json "
        "(the shipped weights come from bench secondstage --fit, on LoCoMo and LongMemEval)",
    )
    parser.add_argument(
        "--fit-on",
        default=",".join(FIT_ON),
        help="conversations (sample_id) the second stage is fitted on; the rest are held out",
    )
    parser.add_argument(
        "--pools",
        metavar="FILE",
        default="",
        help="write every question's second-stage candidates to FILE, for bench secondstage",
    )


def sample_names(data: list[dict[str, Any]]) -> list[str]:
    return [str(sample.get("sample_id", number)) for number, sample in enumerate(data)]


def check_fit_on(data: list[dict[str, Any]], fit_on: str, path: Path) -> None:
    """--fit needs at least one of --fit-on in the file (nothing else is fitted on)."""
    from django.core.management import CommandError

    names = sample_names(data)
    if not any(name in names for name in fit_on.split(",")):
        raise CommandError(
            f"--fit: none of --fit-on ({fit_on}) is a conversation of {path}; "
            f"name some of its own: {', '.join(names)}"
        )


def split(names: list[str], fit_on: list[str]) -> tuple[list[str], list[str]]:
    """The file's conversations the weights were fitted on, and the rest (held out)."""
    return [n for n in names if n in fit_on], [n for n in names if n not in fit_on]


def check_data(path: Path) -> list[dict[str, Any]]:
    """The samples in ``path``, or a CommandError that says what is wrong and where to get it."""
    from django.core.management import CommandError

    if not path.is_file():
        raise CommandError(f"{path}: no such file. {GET_THE_DATA}.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CommandError(f"{path} is not JSON ({exc}). {GET_THE_DATA}.") from None
    shaped = isinstance(data, list) and all(
        isinstance(s, dict) and isinstance(s.get("conversation"), dict) and "qa" in s for s in data
    )
    if not shaped or not data:
        raise CommandError(
            f"{path} is not LoCoMo data: expected a list of samples with "
            f'"conversation" and "qa". {GET_THE_DATA}.'
        )
    return data


def run(options: dict[str, Any], stdout: Writer) -> None:
    data = check_data(Path(options["path"]))
    if options["fit"]:
        # --limit drops conversations before the fit: check what is left.
        check_fit_on(
            data[: options["limit"] or None], str(options["fit_on"]), Path(options["path"])
        )
    path = str(Path(options["path"]).resolve())
    args = [
        path,
        str(options["k"]),
        str(options["limit"]),
        str(options["fit_on"]),
        "fit" if options["fit"] else "report",
        str(Path(options["pools"]).resolve()) if options.get("pools") else "",
    ]
    run_child(
        "spaceduck.ops.benchmarks.locomo",
        args,
        stdout,
        SPACEDUCK_EMBEDDING_PROVIDER=options["embedder"],
    )


# --- The child ------------------------------------------------------------------------


def evidence_ids(evidence: list[str]) -> set[str]:
    return {f"D{a}:{b}" for item in evidence for a, b in _EVIDENCE.findall(str(item))}


@dataclass
class Turn:
    dia_id: str
    session: int
    date: str  # the session's date as written in the data
    index: int  # position in the session
    said: str  # "<speaker>: <text>[ [shares a photo: <caption>]]"
    previous: str  # the previous turn's ``said`` in the same session, or ""

    @property
    def content(self) -> str:
        return f"[{self.date}] {self.said}"

    @property
    def occurred_at(self) -> datetime | None:
        try:
            return datetime.strptime(self.date, _DATE_FORMAT).replace(tzinfo=UTC)
        except ValueError:
            return None


def turns(conversation: dict[str, Any]) -> list[Turn]:
    """Every turn, in session order."""
    sessions = sorted((int(m.group(1)), key) for key in conversation if (m := _SESSION.match(key)))
    out = []
    for number, key in sessions:
        when = conversation.get(f"session_{number}_date_time", "")
        previous = ""
        for index, turn in enumerate(conversation[key]):
            said = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                said += f" [shares a photo: {turn['blip_caption']}]"
            out.append(Turn(turn["dia_id"], number, when, index, said, previous))
            previous = said
    return out


def store(namespace: str, rows: list[Turn]) -> dict[int, str]:
    """Insert the sessions as threads and the turns as memories with their vectors.

    Returns memory id -> dia_id.
    """
    from django.db import transaction

    from memories.models import Memory, Message, SourceType, Thread
    from memories.store import vector_index
    from memories.write.services import content_hash, embedding_text
    from spaceduck.core.providers import get_embedder

    embedder = get_embedder()
    with transaction.atomic():
        threads = {
            turn.session: Thread.objects.create(
                namespace=namespace, title=f"session {turn.session} ({turn.date})"
            )
            for turn in rows
        }
        messages = Message.objects.bulk_create(
            Message(
                thread=threads[turn.session],
                role="user",
                content=turn.said,
                provenance={"dia_id": turn.dia_id},
                created_at=(turn.occurred_at or datetime(2000, 1, 1, tzinfo=UTC))
                + timedelta(seconds=turn.index),
            )
            for turn in rows
        )
        memories = Memory.objects.bulk_create(
            Memory(
                namespace=namespace,
                kind="episode",
                content=turn.content,
                context=turn.previous,
                content_hash=content_hash(turn.content),
                occurred_at=turn.occurred_at,
                source_type=SourceType.USER_MESSAGE,
                source_thread=threads[turn.session],
                source_message=message,
            )
            for turn, message in zip(rows, messages, strict=True)
        )
    for start in range(0, len(memories), EMBED_BATCH):
        batch = memories[start : start + EMBED_BATCH]
        vectors = embedder.embed([embedding_text(m) for m in batch])
        vector_index.upsert((m.pk, namespace, v) for m, v in zip(batch, vectors, strict=True))
    return {m.pk: turn.dia_id for m, turn in zip(memories, rows, strict=True)}


def store_bare(namespace: str, rows: list[Turn]) -> dict[int, set[str]]:
    """The ``bare`` mode: each turn written as an agent would through ``POST /api/memories``
    (memories.write.ingest.memory_write: gate, firewall, dedup), content = the turn as said,
    ``occurred_at`` = the session date, no context, no source message (so no thread
    neighbours; the second stage still sees the memories written before and after).

    Returns memory id -> the dia_ids written to it (a turn deduplicated against an
    earlier one counts for that memory).
    """
    from memories.extraction.gate import has_action
    from memories.extraction.types import candidate_from_api
    from memories.write.ingest import memory_write

    dia_of: dict[int, set[str]] = defaultdict(set)
    for turn in rows:
        # As an agent labels what it stores: something that happened is an episode (the
        # gate refuses an episode with no action verb), anything else a fact.
        kind = "episode" if has_action(turn.said) else "fact"
        candidate = candidate_from_api(
            {"kind": kind, "content": turn.said, "occurred_at": turn.occurred_at}
        )
        verdict = memory_write(candidate, namespace=namespace, actor="bench:locomo")
        memory_id = verdict.memory_id or verdict.matched_memory_id
        if memory_id:
            dia_of[memory_id].add(turn.dia_id)
    return dia_of


@dataclass
class Asked:
    """One question as asked of one stored mode."""

    conversation: str
    category: int
    evidence: set[str]
    found: dict[str, list[set[str]]]  # column -> the dia_ids of each hit, best first
    candidates: list[tuple[np.ndarray, float, set[str]]]  # (features, log_base, dia_ids)
    session_of: dict[str, int]  # dia_id -> its session, for every turn of the conversation

    @property
    def evidence_sessions(self) -> set[int]:
        return {self.session_of[e] for e in self.evidence if e in self.session_of}


def ask(
    namespace: str,
    dia_of: dict[int, set[str]],
    question: dict[str, Any],
    evidence: set[str],
    vector: np.ndarray,
    top_k: int,
    asked_at: datetime | None,
) -> tuple[dict[str, list[set[str]]], list[tuple[np.ndarray, float, set[str]]]]:
    from memories.recall import rerank
    from memories.recall.hybrid import RecallQuery, first_stage, recall, rerank_inputs, widen

    found: dict[str, list[set[str]]] = {}
    for column, lists in COLUMNS.items():
        query = RecallQuery(
            namespace,
            question["question"],
            top_k=top_k,
            vector=vector,
            lists=lists,
            second_stage=column == "final",
            asked_at=asked_at,
        )
        found[column] = [dia_of.get(hit.memory.pk, set()) for hit in recall(query)]
    # The pool the second stage re-scores: the first stage's, widened as recall() does.
    query = RecallQuery(
        namespace, question["question"], top_k=top_k, vector=vector, asked_at=asked_at
    )
    first = first_stage(query)
    widen(query, first)
    evidence_of, candidates = rerank_inputs(query, first)
    matrix = rerank.feature_matrix(evidence_of, candidates)
    pool = [
        (row_features, log_base, dia_of.get(row.id, set()))
        for row, log_base, row_features in zip(
            first.rows, candidates.log_base.tolist(), matrix, strict=True
        )
    ]
    return found, pool


def turn_recall(asked: Asked, hits: list[set[str]], k: int) -> float:
    """The share of the question's evidence turns among the top k hits."""
    return len(asked.evidence & set().union(*hits[:k])) / len(asked.evidence)


def session_recall(asked: Asked, hits: list[set[str]], k: int) -> float:
    """1.0 when a session holding an evidence turn is a session of one of the top k hits."""
    sessions = {asked.session_of[dia_id] for hit in hits[:k] for dia_id in hit}
    return float(bool(asked.evidence_sessions & sessions))


Metric = Callable[[Asked, list[set[str]], int], float]
METRICS: dict[str, Metric] = {"turn": turn_recall, "session": session_recall}


def recall_at(asked: Asked, column: str, k: int, metric: str = "turn") -> float:
    return METRICS[metric](asked, asked.found[column], k)


def last_session_date(rows: list[Turn]) -> datetime | None:
    dates = [turn.occurred_at for turn in rows if turn.occurred_at is not None]
    return max(dates) + timedelta(days=1) if dates else None


def child_main(
    path: str, cutoffs: list[int], limit: int, fit_on: list[str], fit: bool, pools: str = ""
) -> None:
    setup_child_django()
    from memories.recall import rerank
    from spaceduck.core.providers import get_embedder

    data = json.loads(Path(path).read_text())
    if limit:
        data = data[:limit]
    embedder = get_embedder()
    top_k = max(cutoffs)
    asked: dict[str, list[Asked]] = {store_mode: [] for store_mode in STORES}
    stored = bare_memories = refused = 0
    started = time.perf_counter()
    for number, sample in enumerate(data):
        name = str(sample.get("sample_id", number))
        rows = turns(sample["conversation"])
        # memory id -> the dia_ids written to it, in each mode
        stores: dict[str, dict[int, set[str]]] = {
            "pipeline": {k: {v} for k, v in store(f"agent:locomo-{name}", rows).items()},
            "bare": store_bare(f"agent:locomo-bare-{name}", rows),
        }
        stored += len(rows)
        bare_memories += len(stores["bare"])
        refused += len(rows) - sum(len(dia_ids) for dia_ids in stores["bare"].values())
        questions = [
            (q, evidence_ids(q.get("evidence", [])))
            for q in sample["qa"]
            if q.get("category") in CATEGORIES
        ]
        questions = [(q, ev) for q, ev in questions if ev]
        vectors: Any = embedder.embed([q["question"] for q, _ in questions]) if questions else []
        when = last_session_date(rows)
        session_of = {turn.dia_id: turn.session for turn in rows}
        for store_mode, dia_of in stores.items():
            namespace = (
                f"agent:locomo-{name}" if store_mode == "pipeline" else f"agent:locomo-bare-{name}"
            )
            for (q, evidence), vector in zip(questions, vectors, strict=True):
                found, pool = ask(namespace, dia_of, q, evidence, np.asarray(vector), top_k, when)
                asked[store_mode].append(
                    Asked(name, q["category"], evidence, found, pool, session_of)
                )
    took = time.perf_counter() - started
    fp = embedder.fingerprint
    print(
        f"locomo: {len(data)} conversations, {stored} turns per mode ({fp.provider}/{fp.model}), "
        f"{len(asked['pipeline'])} questions (categories 1-4) per mode, {took:.1f} s"
    )
    print(
        f"bare: {bare_memories} memories stored; {refused} turns refused by the gate or the "
        "guard (a turn that only asks, greetings, fragments); the rest merged by dedup"
    )
    names = sample_names(data)
    # The final columns use the weights in place before any --fit of this run: the split
    # reported beside them is what those weights were fitted on, as far as this file holds it.
    shipped = rerank.weights()
    weights_fitted_on = shipped.fitted_on if shipped else []
    fitted, held_out = split(names, weights_fitted_on)
    print(f"second stage weights fitted on: {', '.join(weights_fitted_on) or 'nothing'}")
    print(
        f"  in this file: fitted on {', '.join(fitted) or 'none'}; "
        f"held out {', '.join(held_out) or 'none'}{'' if fitted else ' (the whole file)'}"
    )
    if pools:
        write_pools(pools, "locomo", asked)
    if fit:
        refit(asked, cutoffs, *split(names, fit_on))
    print(f"turn recall@k: {TURN_RECALL}")
    print(f"session recall@k: {SESSION_RECALL}")
    for store_mode in STORES:
        report(store_mode, asked[store_mode], cutoffs, fitted, held_out)


TURN_RECALL = "the share of a question's evidence turns among the top k hits"
SESSION_RECALL = (
    "the share of questions with an evidence turn's session among the sessions of the "
    "top k hits (the figure other memory systems publish)"
)


def refit(
    asked: dict[str, list[Asked]], cutoffs: list[int], fit_on: list[str], held_out: list[str]
) -> None:
    """--fit: fit the second stage on ``fit_on`` (the file's conversations of --fit-on),
    write the weights and say what they give on the fitted and the held-out ones."""
    w = fit_weights([a for m in STORES for a in asked[m] if a.conversation in fit_on])
    write_weights(w, fit_on, held_out)
    print(
        f"second stage refitted on {', '.join(fit_on)}; "
        "weights written to memories/recall/rerank.json"
    )
    print("  the final columns below used the previous weights; with the new ones:")
    for store_mode in STORES:
        for label, part in (("fitted on", fit_on), ("held out", held_out)):
            subset = [a for a in asked[store_mode] if a.conversation in part]
            for metric in METRICS if subset else ():
                cells = "  ".join(
                    f"final@{k} {np.mean([rescored_recall(a, w, k, metric) for a in subset]):.3f}"
                    for k in cutoffs
                )
                print(f"  {store_mode:<8} {label:<10} ({len(subset)} questions), {metric}: {cells}")


def report(
    store_mode: str, asked: list[Asked], cutoffs: list[int], fit_on: list[str], held_out: list[str]
) -> None:
    print(f"\n=== {store_mode} mode ===")
    for metric in METRICS:
        for k in cutoffs:
            table(asked, metric, k)
    for label, part in (("fitted on", fit_on), ("held out", held_out)):
        subset = [a for a in asked if a.conversation in part]
        if not subset:
            continue
        for metric in METRICS:
            line = "  ".join(
                f"{column}@{k} {np.mean([recall_at(a, column, k, metric) for a in subset]):.3f}"
                for k in cutoffs
                for column in ("hybrid", "final")
            )
            print(f"  {label:<10} ({len(subset)} questions), {metric}: {line}")


def table(asked: list[Asked], metric: str, k: int) -> None:
    """One row per column: ``metric`` recall@k overall and per category."""
    categories = (f"{c}:{n}"[:12] for c, n in CATEGORIES.items())
    print(f"{metric} recall@{k}".ljust(18) + "".join(f"{n:>13}" for n in ("overall", *categories)))
    for column in COLUMNS:
        cells = [float(np.mean([recall_at(a, column, k, metric) for a in asked]))]
        for category in CATEGORIES:
            values = [recall_at(a, column, k, metric) for a in asked if a.category == category]
            cells.append(float(np.mean(values)) if values else float("nan"))
        print(f"  {column:<16}" + "".join(f"{v:>13.3f}" for v in cells))


# --- Fitting the second stage -----------------------------------------------------------


def _design(asked: Asked) -> tuple[np.ndarray, np.ndarray]:
    """[log_base, features...] per candidate, and which candidates hold evidence."""
    x = np.array([np.concatenate([[log_base], f]) for f, log_base, _ in asked.candidates])
    y = np.array([float(bool(dias & asked.evidence)) for _, _, dias in asked.candidates])
    return x, y


Group = tuple[np.ndarray, np.ndarray, float]  # candidates' rows, target shares, weight


def _listwise(groups: list[Group], w: np.ndarray, l2: float) -> float:
    loss = 0.5 * l2 * float(w @ w)
    for x, target, weight in groups:
        z = x @ w
        top = z.max()
        loss -= weight * (float(target @ (z - top)) - float(np.log(np.exp(z - top).sum())))
    return loss


def fit_weights(
    asked: list[Asked],
    l2: float = 1.0,
    rounds: int = 100,
    question_weights: list[float] | None = None,
) -> np.ndarray:
    """A listwise model: per question, a softmax over its candidates of [log_base,
    features] . w, fitted (damped Newton, L2) to put the probability on the evidence.
    Returns [w_base, w_features...]. Questions whose evidence is not in the pool teach
    nothing and are left out. ``question_weights`` (one per question, default 1) lets a
    small benchmark count as much as a large one when both are fitted on together."""
    weights = question_weights or [1.0] * len(asked)
    groups: list[Group] = [
        (x, y / y.sum(), weight)
        for (x, y), weight in zip(map(_design, asked), weights, strict=True)
        if len(y) and y.sum()
    ]
    w = np.zeros(groups[0][0].shape[1])
    loss = _listwise(groups, w, l2)
    for _ in range(rounds):
        gradient = l2 * w
        hessian = np.diag(np.full(len(w), l2))
        for x, target, weight in groups:
            z = x @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            gradient = gradient + weight * (x.T @ (p - target))
            mean = p @ x
            hessian = hessian + weight * ((x * p[:, None]).T @ x - np.outer(mean, mean))
        step = np.linalg.solve(hessian, gradient)
        scale = 1.0
        while scale > 1e-4 and _listwise(groups, w - scale * step, l2) > loss:
            scale /= 2  # a full Newton step can overshoot far from the optimum
        w = w - scale * step
        new_loss = _listwise(groups, w, l2)
        if loss - new_loss < 1e-9:
            break
        loss = new_loss
    return w


def rescored_recall(asked: Asked, w: np.ndarray, k: int, metric: str = "turn") -> float:
    """recall@k of the pool ordered by the model: what recall() gives with these weights."""
    if not asked.candidates:
        return 0.0
    x, _ = _design(asked)
    order = np.argsort(-(x @ w), kind="stable")[:k]
    return METRICS[metric](asked, [asked.candidates[i][2] for i in order], k)


def write_pools(path: str, benchmark: str, asked: dict[str, list[Asked]]) -> None:
    """Every question's candidates with their features, per mode, for ``bench secondstage``
    (a pickle: it holds numpy arrays, and only this code writes and reads it)."""
    import pickle

    # Plain dicts: the child runs as __main__, whose classes a reader cannot import.
    plain = {mode: [vars(a) for a in rows] for mode, rows in asked.items()}
    with open(path, "wb") as out:
        pickle.dump({"benchmark": benchmark, "asked": plain}, out, protocol=5)
    print(f"candidates of {sum(map(len, asked.values()))} questions written to {path}")


def write_weights(w: np.ndarray, fit_on: list[str], held_out: list[str]) -> None:
    from memories.recall import rerank

    data = {
        "about": "memories/recall/rerank.py second stage; fitted by manage.py bench secondstage "
        "--fit (LoCoMo and LongMemEval) or bench locomo --fit (LoCoMo alone)",
        "base": round(float(w[0]), 6),
        "features": {
            name: round(float(v), 6) for name, v in zip(rerank.FEATURES, w[1:], strict=True)
        },
        "fitted_on": fit_on,
        "validated_on": held_out,
    }
    rerank.WEIGHTS_FILE.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    rerank.weights.cache_clear()


if __name__ == "__main__":
    child_main(
        sys.argv[1],
        [int(k) for k in sys.argv[2].split(",") if k.strip()],
        int(sys.argv[3]),
        [n for n in sys.argv[4].split(",") if n],
        sys.argv[5] == "fit",
        sys.argv[6] if len(sys.argv) > 6 else "",
    )
