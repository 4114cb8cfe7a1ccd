"""The second stage across benchmarks: hybrid against final on each, fitted on a training
part of every benchmark and judged on the held-out rest of each.

``python manage.py bench secondstage POOLS [POOLS ...] [--fit] [--l2 1.0]``

Each POOLS file is written by ``bench locomo --pools FILE`` or ``bench longmemeval --pools
FILE``: every question's first-stage candidates with the second stage's features, per
mode. Nothing is stored or embedded again here, so fitting takes seconds.

Splits, fixed so that a report can be repeated:

- LoCoMo: fitted on conv-26, conv-30 and conv-41, held out conv-42 and conv-43 (and any
  other conversation);
- LongMemEval: fitted on the first three questions of each question type in file order,
  held out the rest (abstention questions have no evidence turn and teach nothing).

The report gives, per benchmark, mode and part, turn recall@10 of the first stage
(hybrid), of the shipped weights (final) and, with ``--fit``, of the weights fitted on
the training parts of all the files together (both modes pooled). ``--fit`` writes
``memories/recall/rerank.json`` only when the new weights keep every benchmark's
held-out turn recall@10 at or above its hybrid in every mode; otherwise it says which
fell below and leaves the shipped weights alone.
"""

from __future__ import annotations

import argparse
import pickle
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from spaceduck.ops.benchmarks.locomo import (
    FIT_ON,
    Asked,
    fit_weights,
    recall_at,
    rescored_recall,
    write_weights,
)
from spaceduck.ops.benchmarks.scratch import Writer

K = 10
PER_TYPE = 3  # LongMemEval: the first three of each type are fitted on


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "pools", nargs="+", help="files of bench locomo --pools and bench longmemeval --pools"
    )
    parser.add_argument(
        "--fit",
        action="store_true",
        help="fit on the training parts and write memories/recall/rerank.json if no held-out "
        "part falls below its hybrid",
    )
    parser.add_argument("--l2", type=float, default=1.0, help="the fit's L2 penalty")


def load(path: Path) -> dict[str, Any]:
    from django.core.management import CommandError

    try:
        with path.open("rb") as stream:
            # Only a file a benchmark of this repository wrote: pickle runs what it holds.
            data = pickle.load(stream)
    except (OSError, pickle.UnpicklingError, EOFError) as exc:
        raise CommandError(f"{path}: not a pools file of a benchmark ({exc})") from None
    if not isinstance(data, dict) or data.get("benchmark") not in ("locomo", "longmemeval"):
        raise CommandError(f"{path}: not a pools file of bench locomo/longmemeval")
    return data


def training_names(benchmark: str, asked: list[Asked]) -> set[str]:
    """The questions (LongMemEval) or conversations (LoCoMo) the fit learns from."""
    if benchmark == "locomo":
        return set(FIT_ON)
    seen: dict[int, list[str]] = defaultdict(list)
    for a in asked:
        if a.conversation not in seen[a.category]:
            seen[a.category].append(a.conversation)
    return {name for names in seen.values() for name in names[:PER_TYPE]}


def run(options: dict[str, Any], stdout: Writer) -> None:
    from memories.recall import rerank

    files = [load(Path(p)) for p in options["pools"]]
    parts: list[tuple[str, str, list[Asked], list[Asked]]] = []  # benchmark, mode, fit, held
    for data in files:
        benchmark = data["benchmark"]
        first_mode = next(iter(data["asked"].values()))
        train = training_names(benchmark, first_mode)
        for mode, asked in data["asked"].items():
            answerable = [a for a in asked if a.evidence]
            parts.append(
                (
                    benchmark,
                    mode,
                    [a for a in answerable if a.conversation in train],
                    [a for a in answerable if a.conversation not in train],
                )
            )
    shipped = rerank.weights()
    new = None
    if options["fit"]:
        new = fit_weights([a for _, _, fit, _ in parts for a in fit], l2=options["l2"])
    stdout.write(f"turn recall@{K}: hybrid (first stage), final (shipped weights)")
    if shipped:
        stdout.write(f"  shipped weights fitted on: {', '.join(shipped.fitted_on)}")
    below: list[str] = []
    for benchmark, mode, fit, held in parts:
        for label, subset in (("fitted on", fit), ("held out", held)):
            if not subset:
                continue
            hybrid = _mean([recall_at(a, "hybrid", K) for a in subset])
            final = _mean([recall_at(a, "final", K) for a in subset])
            line = (
                f"  {benchmark:<12}{mode:<9}{label:<10}({len(subset):>4} questions)  "
                f"hybrid {hybrid:.3f}  final {final:.3f}"
            )
            if new is not None:
                refit = _mean([rescored_recall(a, new, K) for a in subset])
                line += f"  refitted {refit:.3f}"
                if label == "held out" and refit < hybrid:
                    below.append(f"{benchmark} {mode} ({refit:.3f} < {hybrid:.3f})")
            stdout.write(line)
    if new is None:
        return
    if below:
        stdout.write(
            "not written: the refitted weights lower held-out turn recall below the first "
            f"stage on {', '.join(below)}"
        )
        return
    fitted = sorted({a.conversation for _, _, fit, _ in parts for a in fit})
    validated = sorted({a.conversation for _, _, _, h in parts for a in h})
    write_weights(new, fitted, validated)
    stdout.write(
        f"weights written to memories/recall/rerank.json (fitted on {len(fitted)} "
        f"conversations and questions, validated on {len(validated)})"
    )


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")
