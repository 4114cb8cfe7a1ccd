"""A small demo data set for `make run`. Idempotent: loading it twice adds nothing."""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from memories.models import Fact, Memory, Message, Thread
from memories.write.services import content_hash, memory_create
from notes.models import Note

DEMO_NAMESPACE = "user:demo"
DEMO_THREAD_ID = "demo-thread"

DEMO_MEMORIES: list[dict[str, object]] = [
    {
        "kind": "fact",
        "title": "Name",
        "content": "The user's name is Ada Lovelace.",
        "slot": "name",
        "tags": ["identity"],
        "importance": 0.85,
        "confidence": 0.95,
    },
    {
        "kind": "fact",
        "title": "Location",
        "content": "The user lives in London.",
        "slot": "location",
        "tags": ["identity", "location"],
        "importance": 0.7,
        "confidence": 0.95,
    },
    {
        "kind": "fact",
        "title": "Coffee",
        "content": "Ada prefers oat-milk flat whites.",
        "tags": ["preference", "food"],
        "importance": 0.5,
        "confidence": 0.8,
    },
    {
        "kind": "procedure",
        "title": "No Friday deploys",
        "procedure_subtype": "constraint",
        "content": "Never deploy to production on a Friday.",
        "tags": ["deploy"],
        "importance": 1.0,
        "confidence": 0.95,
    },
    {
        "kind": "procedure",
        "title": "Release checklist",
        "procedure_subtype": "workflow",
        "content": "Before a release: run the tests, update the changelog, tag the commit.",
        "tags": ["release"],
        "importance": 0.7,
        "confidence": 0.8,
    },
    {
        "kind": "episode",
        "title": "Chose SQLite",
        "content": "Ada decided to store memories in "
        "SQLite with sqlite-vec instead of a separate vector database.",
        "tags": ["decision"],
        "importance": 0.7,
        "confidence": 0.95,
    },
]

DEMO_MESSAGES = [
    ("demo-m1", "user", "Hi, I'm Ada. I live in London and I'm building an analytical engine."),
    ("demo-m2", "assistant", "Nice to meet you, Ada! How can I help with the engine?"),
    ("demo-m3", "user", "Remember that we never deploy to production on a Friday."),
]


@transaction.atomic
def load_demo() -> dict[str, int]:
    """Load the demo set; returns how many rows of each kind were created."""
    created = {"memories": 0, "facts": 0, "messages": 0, "notes": 0}
    for spec in DEMO_MEMORIES:
        content = str(spec["content"])
        if not Memory.objects.filter(
            namespace=DEMO_NAMESPACE, content_hash=content_hash(content)
        ).exists():
            memory_create(namespace=DEMO_NAMESPACE, actor="demo", reason="demo data", **spec)  # type: ignore[arg-type]
            created["memories"] += 1
    _, fact_created = Fact.objects.get_or_create(
        namespace=DEMO_NAMESPACE, key="onboarding.step", defaults={"value": {"step": 2, "of": 5}}
    )
    created["facts"] += int(fact_created)
    thread, _ = Thread.objects.get_or_create(
        id=DEMO_THREAD_ID, defaults={"namespace": DEMO_NAMESPACE, "title": "Getting started"}
    )
    start = timezone.now() - timedelta(minutes=10)
    for offset, (message_id, role, text) in enumerate(DEMO_MESSAGES):
        _, message_created = Message.objects.get_or_create(
            id=message_id,
            defaults={
                "thread": thread,
                "role": role,
                "content": text,
                "created_at": start + timedelta(minutes=offset),
            },
        )
        created["messages"] += int(message_created)
    _, note_created = Note.objects.get_or_create(
        uid="demo-note-1",
        defaults={
            "namespace": DEMO_NAMESPACE,
            "namespace_kind": "user",
            "kind": "runbook",
            "body": "If the worker stops, restart it with `make run`; queued jobs are kept.",
            "author": "demo",
        },
    )
    created["notes"] += int(note_created)
    return created
