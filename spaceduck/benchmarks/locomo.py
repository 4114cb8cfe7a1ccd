"""Retrieval quality on LoCoMo: evidence recall@k of vector-only, keyword-only and hybrid recall.

``python manage.py bench locomo PATH [--embedder local|hash] [--k 5,10] [--limit N]``

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

Every question of categories 1-4 (category 5, adversarial, has no answer to
find) is then asked through ``recall()`` with ``top_k = max(k)`` in three
modes: vector only (``lists=("vector",)``), keyword only
(``lists=("keyword",)``) and hybrid (both, the default). The neighbour bonus
is part of recall and so applies in every mode.

Metric, per question: evidence recall@k = |evidence dia_ids among the dia_ids
of the top k hits| / |evidence dia_ids|; reported as the mean over questions,
overall and per category. Evidence ids are normalised (``"D8:6; D9:17"`` is two
ids, ``"D:11:26"`` is ``D11:26``); questions left with no evidence id are
skipped; an evidence id that names no stored turn counts as missed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from spaceduck.benchmarks.scratch import Writer, run_child, setup_child_django

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
MODES = {"vector": ("vector",), "keyword": ("keyword",), "hybrid": ("vector", "keyword")}
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
    check_data(Path(options["path"]))
    path = str(Path(options["path"]).resolve())
    args = [path, str(options["k"]), str(options["limit"])]
    run_child(
        "spaceduck.benchmarks.locomo",
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

    from memories import vector_index
    from memories.models import Memory, Message, SourceType, Thread
    from memories.services import content_hash, embedding_text
    from spaceduck.providers import get_embedder

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


def child_main(path: str, cutoffs: list[int], limit: int) -> None:
    setup_child_django()
    from memories.recall import RecallQuery, recall
    from spaceduck.providers import get_embedder

    data = json.loads(Path(path).read_text())
    if limit:
        data = data[:limit]
    embedder = get_embedder()
    top_k = max(cutoffs)
    # scores[mode][category] -> list of per-question recall@k, one list per cut-off
    scores: dict[str, dict[int, list[list[float]]]] = {
        mode: defaultdict(lambda: [[] for _ in cutoffs]) for mode in MODES
    }
    stored = asked = 0
    store_s = ask_s = 0.0
    for sample in data:
        namespace = f"agent:locomo-{sample.get('sample_id', len(scores))}"
        started = time.perf_counter()
        dia_of = store(namespace, turns(sample["conversation"]))
        store_s += time.perf_counter() - started
        stored += len(dia_of)
        questions = [
            (q, evidence_ids(q.get("evidence", [])))
            for q in sample["qa"]
            if q.get("category") in CATEGORIES
        ]
        questions = [(q, ev) for q, ev in questions if ev]
        if not questions:
            continue
        vectors = embedder.embed([q["question"] for q, _ in questions])
        started = time.perf_counter()
        for (q, evidence), vector in zip(questions, vectors, strict=True):
            asked += 1
            for mode, lists in MODES.items():
                query = RecallQuery(
                    namespace, q["question"], top_k=top_k, vector=np.asarray(vector), lists=lists
                )
                found = [dia_of.get(hit.memory.pk) for hit in recall(query)]
                row = scores[mode][q["category"]]
                for i, k in enumerate(cutoffs):
                    row[i].append(len(evidence & set(found[:k])) / len(evidence))
        ask_s += time.perf_counter() - started

    fp = embedder.fingerprint
    print(
        f"locomo: {len(data)} conversations, {stored} turns stored in {store_s:.1f} s "
        f"({fp.provider}/{fp.model}), {asked} questions (categories 1-4) x {len(MODES)} modes "
        f"in {ask_s:.1f} s"
    )
    header = "evidence recall@k".ljust(18) + "".join(
        f"{name:>13}" for name in ("overall", *(f"{c}:{n}"[:12] for c, n in CATEGORIES.items()))
    )
    for i, k in enumerate(cutoffs):
        print(f"\n{header.replace('@k', f'@{k}')}")
        for mode in MODES:
            per = scores[mode]
            everything = [v for cat in per.values() for v in cat[i]]
            cells = [np.mean(everything) if everything else float("nan")]
            cells += [np.mean(per[c][i]) if per[c][i] else float("nan") for c in CATEGORIES]
            print(f"  {mode:<16}" + "".join(f"{v:>13.3f}" for v in cells))
    counts = {c: len(scores["hybrid"][c][0]) for c in CATEGORIES}
    print(f"\nquestions per category: {counts}")


if __name__ == "__main__":
    child_main(sys.argv[1], [int(k) for k in sys.argv[2].split(",") if k.strip()], int(sys.argv[3]))
