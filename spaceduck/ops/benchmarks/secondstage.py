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

The fit (``--fit``), on the training parts alone:

1. the listwise model (locomo.fit_weights) on every training question of every file, both
   modes pooled, each benchmark weighing as much as the others (LoCoMo has 25 times more
   questions than the LongMemEval dev file);
2. shrunk towards the first stage: ``alpha`` x the model + (1 - alpha) x hybrid's own order,
   with ``alpha`` chosen by cross-validation on the training parts (LoCoMo one conversation
   out, LongMemEval six groups of questions) as the one whose worst (benchmark, mode) gain
   over hybrid is highest. A ranking fitted where it helps (LoCoMo) moves LongMemEval's
   extracted memories too far: fully trusted, it loses turn recall there.

The report gives, per benchmark, mode and part, turn recall@10 of the first stage
(hybrid), of the shipped weights (final) and, with ``--fit``, of the new weights. ``--fit`` writes
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
    data["asked"] = {mode: [Asked(**a) for a in rows] for mode, rows in data["asked"].items()}
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


Part = tuple[str, str, list[Asked], list[Asked]]  # benchmark, mode, fitted on, held out
ALPHAS = tuple(round(0.05 * i, 2) for i in range(21))  # 0 (the first stage) .. 1 (the model)
LONGMEMEVAL_FOLDS = 6


def parts_of(files: list[dict[str, Any]]) -> list[Part]:
    parts: list[Part] = []
    for data in files:
        benchmark = data["benchmark"]
        train = training_names(benchmark, next(iter(data["asked"].values())))
        for mode, asked in data["asked"].items():
            answerable = [a for a in asked if a.evidence]
            fit = [a for a in answerable if a.conversation in train]
            held = [a for a in answerable if a.conversation not in train]
            parts.append((benchmark, mode, fit, held))
    return parts


def balanced_fit(items: list[tuple[str, Asked]], l2: float) -> np.ndarray:
    """Fitted on every question of ``items`` (benchmark, question), each benchmark weighing
    as much as the others whatever its number of questions (LoCoMo has 25 times more)."""
    counts: dict[str, int] = defaultdict(int)
    for benchmark, _ in items:
        counts[benchmark] += 1
    weights = [len(items) / (len(counts) * counts[b]) for b, _ in items]
    return fit_weights([a for _, a in items], l2=l2, question_weights=weights)


def shrunk(w: np.ndarray, alpha: float) -> np.ndarray:
    """``alpha`` of the model and the rest of the first stage (log_base alone, weight 1):
    0 keeps the hybrid order, 1 is the fitted model."""
    first_stage = np.zeros_like(w)
    first_stage[0] = 1.0
    return alpha * w + (1 - alpha) * first_stage


def choose_alpha(parts: list[Part], l2: float) -> tuple[float, dict[float, dict[str, float]]]:
    """How far to trust the model, by cross-validation on the training parts only: LoCoMo
    one conversation out, LongMemEval in LONGMEMEVAL_FOLDS groups of questions. The alpha
    whose worst (benchmark, mode) mean gain over hybrid is highest, then the best mean."""
    items = [(b, m, a) for b, m, fit, _ in parts for a in fit]
    names = sorted({(b, a.conversation) for b, _, a in items})
    lme = [n for n in names if n[0] != "locomo"]
    fold = {
        n: n if n[0] == "locomo" else (n[0], str(lme.index(n) % LONGMEMEVAL_FOLDS)) for n in names
    }
    gains: dict[float, dict[str, list[float]]] = {x: defaultdict(list) for x in ALPHAS}
    for held in sorted(set(fold.values())):
        train = [(b, a) for b, _, a in items if fold[(b, a.conversation)] != held]
        w = balanced_fit(train, l2)
        test = [(b, m, a) for b, m, a in items if fold[(b, a.conversation)] == held]
        for alpha in ALPHAS:
            for b, m, a in test:
                gain = rescored_recall(a, shrunk(w, alpha), K) - recall_at(a, "hybrid", K)
                gains[alpha][f"{b} {m}"].append(gain)
    means = {x: {part: float(np.mean(v)) for part, v in g.items()} for x, g in gains.items()}
    best = max(
        ALPHAS, key=lambda x: (round(min(means[x].values()), 9), np.mean(list(means[x].values())))
    )
    return best, means


def run(options: dict[str, Any], stdout: Writer) -> None:
    from memories.recall import rerank

    parts = parts_of([load(Path(p)) for p in options["pools"]])
    shipped = rerank.weights()
    new = None
    if options["fit"]:
        alpha, means = choose_alpha(parts, options["l2"])
        stdout.write("cross-validated on the training parts, mean turn@10 gain over hybrid:")
        for x in ALPHAS:
            cells = "  ".join(f"{part} {v:+.3f}" for part, v in means[x].items())
            stdout.write(f"  alpha {x:.2f}: {cells}{'  <- chosen' if x == alpha else ''}")
        items = [(b, a) for b, _, fit, _ in parts for a in fit]
        new = shrunk(balanced_fit(items, options["l2"]), alpha)
    stdout.write(f"turn recall@{K}: hybrid (first stage), final (shipped weights)")
    if shipped:
        stdout.write(f"  shipped weights fitted on: {', '.join(shipped.fitted_on)}")
    below = [line for part in parts for line in _report(part, new, stdout)]
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


def _report(part: Part, new: np.ndarray | None, stdout: Writer) -> list[str]:
    """One line per split of the part; the held-out parts the new weights lower."""
    benchmark, mode, fit, held = part
    below = []
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
    return below


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")
