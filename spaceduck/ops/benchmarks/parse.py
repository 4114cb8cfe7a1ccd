"""The parser's cost: load time, memory, and parse time per message.

``python manage.py bench parse [--limit N]``

Parses the user messages of ``bench beliefs``' tune split (never the held-out or fresh
parts) one at a time, as extraction would, after timing the first load of the pipeline
(spaceduck/core/parse.py). Prints the load time, the resident memory the pipeline added,
and milliseconds per message and per sentence (p50, p95).
"""

from __future__ import annotations

import argparse
import resource
import time
from typing import Any

import numpy as np

from spaceduck.ops.benchmarks.scratch import Writer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=0, help="only the first N messages")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run(options: dict[str, Any], stdout: Writer) -> None:
    from spaceduck.core import parse
    from spaceduck.ops.benchmarks.beliefs_corpus import conversations

    said = [m for c in conversations("tune") for s in c.sessions for m in s]
    messages = [m for m in said if not m.startswith("assistant: ")]  # the user's turns
    if options["limit"]:
        messages = messages[: options["limit"]]
    before = _rss_mb()
    started = time.perf_counter()
    nlp = parse.pipeline()
    loaded = time.perf_counter() - started
    stdout.write(
        f"parser {parse.MODEL_PACKAGE} ({', '.join(nlp.pipe_names)}): loaded in {loaded:.2f} s, "
        f"+{_rss_mb() - before:.0f} MB peak resident memory"
    )
    took, sentences = [], 0
    for text in messages:
        began = time.perf_counter()
        doc = nlp(text)  # the parse itself, not parse.parse's remembered docs
        took.append(time.perf_counter() - began)
        sentences += sum(1 for _ in doc.sents)
    if not took:
        stdout.write("no messages to parse")
        return
    ms = np.array(took) * 1000
    stdout.write(
        f"{len(took)} messages, {sentences} sentences: per message p50 {np.percentile(ms, 50):.2f} "
        f"ms, p95 {np.percentile(ms, 95):.2f} ms; per sentence {ms.sum() / sentences:.2f} ms"
    )
