"""Messages per second through the whole write path, into a namespace of 0 / 10k / 100k memories.

``python manage.py bench ingest [--embedders hash,local] [--sizes 0,10000,100000]``

Each (embedder, size) runs in a child process on a throw-away database (see
scratch.py): the namespace is first filled with ``size`` memories (random unit
vectors, inserted in bulk: embedding 100k texts with MiniLM would take minutes
and measure the embedder, not ingest), then ``--messages`` generated chat
messages go through ``message_ingest`` with huey in immediate mode, so each
timed message includes saving it, the extraction record, every extraction
stage, embedding, dedup/contradiction search and the writes. Peak memory is the
child's peak RSS.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from typing import Any

import numpy as np

from spaceduck.benchmarks.scratch import Writer, run_child, setup_child_django

NAMESPACE = "user:bench"
FILL_BATCH = 2_000

TEMPLATES = [
    "I live in {city}.",
    "I moved to {city} last month.",
    "I work at {company} as a {job}.",
    "My name is {name}.",
    "I prefer {drink} over {drink2}.",
    "I love {hobby} on weekends.",
    "We never deploy {thing} on Fridays.",
    "Please keep your answers short and in {lang}.",
    "I decided to switch our {thing} to {tool} yesterday.",
    "Thanks, that's helpful!",
    "What time is it in {city}?",
    "Remember that my {relative}'s birthday is in {month}.",
    "I'm allergic to {food}.",
    "ok",
    "To release, first run the tests, then tag the commit and push to {tool}.",
]
WORDS = {
    "city": ["Paris", "Tokyo", "Lisbon", "Oslo", "Nairobi", "Lima", "Seoul", "Austin"],
    "company": ["CERN", "Acme", "Globex", "Initech", "Umbrella", "Hooli"],
    "job": ["nurse", "designer", "data engineer", "teacher", "pilot"],
    "name": ["Ada", "Grace", "Linus", "Barbara", "Alan", "Katherine"],
    "drink": ["tea", "coffee", "mate", "cocoa"],
    "drink2": ["juice", "soda", "water"],
    "hobby": ["hiking", "climbing", "chess", "baking", "sailing"],
    "thing": ["the backend", "the app", "migrations", "the website"],
    "lang": ["French", "English", "Spanish"],
    "tool": ["Postgres", "GitHub", "Kubernetes", "SQLite"],
    "relative": ["sister", "father", "partner", "son"],
    "month": ["May", "June", "October", "March"],
    "food": ["peanuts", "shellfish", "gluten", "lactose"],
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--embedders", default="hash,local")
    parser.add_argument("--sizes", default="0,10000,100000")
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)


def run(options: dict[str, Any], stdout: Writer) -> None:
    for embedder in str(options["embedders"]).split(","):
        for size in str(options["sizes"]).split(","):
            args = [size, str(options["messages"]), str(options["seed"])]
            run_child(
                "spaceduck.benchmarks.ingest",
                args,
                stdout,
                SPACEDUCK_EMBEDDING_PROVIDER=embedder.strip(),
                SPACEDUCK_HUEY_IMMEDIATE="1",
            )


def messages(count: int, rng: random.Random) -> list[str]:
    out = []
    for _ in range(count):
        template = rng.choice(TEMPLATES)
        out.append(template.format(**{k: rng.choice(v) for k, v in WORDS.items()}))
    return out


def fill(size: int, dims: int, seed: int) -> None:
    """Insert ``size`` memories with random unit vectors (FTS rows follow by trigger)."""
    from django.db import connection, transaction

    from memories.models import Memory
    from memories.services import content_hash

    rng = np.random.default_rng(seed)
    for start in range(0, size, FILL_BATCH):
        n = min(FILL_BATCH, size - start)
        topics = rng.integers(1_000_000_000, size=n)
        texts = [f"Background fact {start + i} about topic {t}." for i, t in enumerate(topics)]
        with transaction.atomic():
            rows = Memory.objects.bulk_create(
                Memory(namespace=NAMESPACE, kind="fact", content=t, content_hash=content_hash(t))
                for t in texts
            )
            vectors = rng.standard_normal((n, dims)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            with connection.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO memories_vec(memory_id, namespace, embedding) VALUES (%s, %s, %s)",
                    [(m.pk, NAMESPACE, v.tobytes()) for m, v in zip(rows, vectors, strict=True)],
                )


def child(size: int, count: int, seed: int) -> None:
    setup_child_django()
    from memories import vector_index
    from memories.extraction.pipeline import warm
    from memories.ingest import message_ingest
    from memories.models import Extraction, Memory
    from memories.services import create_thread
    from spaceduck.providers import get_embedder

    embedder = get_embedder()
    started = time.perf_counter()
    fill(size, embedder.fingerprint.dimensions, seed)
    filled = time.perf_counter() - started
    vector_index.search(NAMESPACE, embedder.embed(["warm-up"])[0], 1)  # load the cache once
    embedder.embed(["warm the model up"])
    warm()  # the firewall's tables, as the worker loads them at start
    texts = messages(count, random.Random(seed))
    thread = create_thread(NAMESPACE, title="bench")
    started = time.perf_counter()
    for text in texts:
        message_ingest(thread.id, "user", text)
    elapsed = time.perf_counter() - started
    failed = Extraction.objects.exclude(status="done").count()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"ingest: {embedder.fingerprint.provider:5s} namespace={size:>6} memories "
        f"(filled in {filled:.1f}s): {count} messages in {elapsed:.2f}s = "
        f"{count / elapsed:.1f} msg/s, {elapsed / count * 1000:.2f} ms/msg; "
        f"memories now {Memory.objects.filter(namespace=NAMESPACE).count()}, "
        f"extractions not done {failed}, peak RSS {peak_mb:.0f} MB"
    )


if __name__ == "__main__":
    child(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
