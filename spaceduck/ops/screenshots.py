"""Screenshots of the dashboard for the docs: ``python manage.py screenshots [--out DIR]``.

Runs in a child process on a throw-away database (spaceduck.ops.benchmarks.scratch):
migrates it, loads the demo data (spaceduck.ops.demo) plus what makes the pages
worth looking at (a second and third namespace, candidates learnt from
messages with their extraction records, a superseded pair, history, task and
skill ids, ages from minutes to months), creates a staff user, serves the
site with a real WSGI server on 127.0.0.1 (a free port, in a thread, static
files included) and drives Chromium (Debian's /usr/bin/chromium) with
Playwright: it logs in through the admin login form, then takes full-page
screenshots at a 1280 px wide viewport (and two more: a phone, dark mode):

- ``viewer.png``: the memory viewer, every namespace;
- ``viewer-search.png``: a recall query in ``user:demo`` with its hits and the
  first hit's "why" panel open;
- ``memory.png``: a memory's page (provenance, supersession, history);
- ``candidates.png``: the candidate queue;
- ``conflicts.png``: the conflict inbox (two preference flips the engine would not decide);
- ``overview.png``: the overview (namespaces, work waiting, queue, worker, the last day's
  extractions with the failure linked);
- ``extractions.png``: the extraction log, every status;
- ``extraction.png``: an extraction's page (the message, each candidate's decision and the
  memories it names);
- ``extraction-failed.png``: a failed extraction's page (its errors, the retry button);
- ``thread.png``: a thread's page (a compaction summary, each message's extraction);
- ``settings.png``: Settings > Memory, with where each value comes from and the changes made;
- ``memory-phone.png``: the memory's page on a 390 px wide phone (one column, the menu folded);
- ``candidates-phone.png``: the candidate queue on the phone (each candidate a card, its
  Approve and Reject on the screen);
- ``viewer-dark.png``: the memory viewer with the system's colour scheme dark;
- ``context.png``: the agent view (the context block for user:demo's thread and a query);
- ``tokens.png``: the API tokens page (in use, expiring, revoked);
- ``people.png``: a person's data: a search for "Ada" across every namespace;
- ``memory-diff.png``: the history of the memory's page (an edit as a diff field by field,
  with *Restore this version*);
- ``belief.png``: what we believed when: the user's location over time (Bristol, then London);
- ``activity.png``: the activity log: every decision and change, by people and agents.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.request import ProxyHandler, build_opener

from spaceduck.ops.benchmarks.scratch import Writer, run_child, setup_child_django

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-proxy-server",
]
WIDTH = 1280
HEIGHT = 800
PHONE_WIDTH = 390
PHONE_HEIGHT = 844
PHONE_CLIP = 1100
SEARCH = "deploy on a Friday"
SHOTS = (
    "viewer.png",
    "viewer-search.png",
    "memory.png",
    "candidates.png",
    "conflicts.png",
    "overview.png",
    "extractions.png",
    "extraction.png",
    "extraction-failed.png",
    "thread.png",
    "settings.png",
    "memory-phone.png",
    "candidates-phone.png",
    "viewer-dark.png",
    "context.png",
    "tokens.png",
    "people.png",
    "memory-diff.png",
    "belief.png",
    "activity.png",
)


def take(*, out: Path, embedder: str, chromium: str, stdout: Writer) -> None:
    """Write the screenshots into ``out`` (created if missing); CommandError when it cannot."""
    from django.core.management import CommandError

    if not Path(chromium).exists():
        raise CommandError(
            f"{chromium} is missing: screenshots need Chromium "
            "(Debian: `apt-get install chromium`, or `make test-deps`)"
        )
    try:
        import playwright  # noqa: F401
    except ImportError:
        raise CommandError(
            "Playwright is missing: install the dev dependencies (`pip install -e '.[dev]'`)"
        ) from None
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    config = {"out": str(out), "chromium": chromium}
    run_child(
        "spaceduck.ops.screenshots",
        [json.dumps(config)],
        stdout,
        SPACEDUCK_EMBEDDING_PROVIDER=embedder,
        # Playwright's sync API keeps an event loop in the child's main thread.
        DJANGO_ALLOW_ASYNC_UNSAFE="true",
    )


# --- The child: data ----------------------------------------------------------------


def _age(memory_ids: list[int], days: float) -> None:
    """Make memories look ``days`` old (created, updated and last seen then)."""
    from django.utils import timezone

    from memories.models import Memory

    at = timezone.now() - timedelta(days=days)
    Memory.objects.filter(pk__in=memory_ids).update(created_at=at, updated_at=at, last_seen_at=at)


def _message(thread: Any, message_id: str, role: str, text: str, minutes_ago: float) -> Any:
    from django.utils import timezone

    from memories.models import Message

    return Message.objects.create(
        id=message_id,
        thread=thread,
        role=role,
        content=text,
        created_at=timezone.now() - timedelta(minutes=minutes_ago),
    )


def _extraction(
    message: Any,
    verdicts: list[dict[str, Any]],
    *,
    status: str = "done",
    provider: str = "heuristic",
    failures: Sequence[tuple[float, str]] = (),
    duration_ms: float = 42.0,
    task_id: str = "",
) -> Any:
    """The record the runner leaves for ``message``, created two seconds after it was said;
    ``failures``: each failed attempt's end (seconds after the start) and error."""
    from memories.models import Extraction

    at = message.created_at + timedelta(seconds=2)
    errors = [
        {"attempt": n, "error": error, "at": (at + timedelta(seconds=after)).isoformat()}
        for n, (after, error) in enumerate(failures, start=1)
    ]
    # The last attempt ends the run: the failure's, or the one that went through.
    ended = failures[-1][0] if status == "failed" and failures else duration_ms / 1000
    return Extraction.objects.create(
        message=message,
        thread_id=message.thread_id,
        namespace=message.thread.namespace,
        status=status,
        attempts=len(errors) + (status == "done"),
        provider=provider,
        candidates=verdicts,
        errors=errors,
        task_id=task_id,
        duration_ms=duration_ms,
        created_at=at,
        started_at=at,
        finished_at=at + timedelta(seconds=ended),
    )


def _verdict(memory: Any, decision: str, reason: str, stage: str = "rules") -> dict[str, Any]:
    """A verdict as memories.write.runner records it: a stored candidate names the
    memory it created, a duplicate the one it matched."""
    matched = decision == "duplicate"
    return {
        "candidate": {
            "kind": memory.kind,
            "content": memory.content,
            "confidence": memory.confidence,
            "importance": memory.importance,
            "stage": stage,
        },
        "decision": decision,
        "reason": reason,
        "memory_id": None if matched else memory.pk,
        "matched_memory_id": memory.pk if matched else None,
    }


def _learnt(thread: Any, message: Any, **fields: Any) -> Any:
    """A memory created as the extraction pipeline would: from a message, with its words."""
    from memories.models import Memory
    from memories.write.services import memory_create

    memory = memory_create(
        actor="extraction",
        source_type="user_message" if message.role == "user" else "assistant_message",
        context=f"{message.role}: {message.content}",
        **fields,
    )
    Memory.objects.filter(pk=memory.pk).update(source_message=message, source_thread=thread)
    memory.refresh_from_db()
    return memory


def seed() -> dict[str, int]:
    """Demo data plus candidates, a supersession, history; returns the pages' memory ids."""
    from memories.models import Memory, MemoryEvent, Message, Thread
    from memories.write import edits, lifecycle
    from memories.write.services import memory_create, memory_history_record
    from spaceduck.ops.demo import DEMO_NAMESPACE, DEMO_THREAD_ID, load_demo

    load_demo()
    demo = {m.title: m for m in Memory.objects.filter(namespace=DEMO_NAMESPACE)}
    thread = Thread.objects.get(pk=DEMO_THREAD_ID)
    ages = {"Name": 120, "Coffee": 30, "No Friday deploys": 64, "Release checklist": 9}
    for title, days in ages.items():
        _age([demo[title].pk], days)
    _age([demo["Chose SQLite"].pk], 2)

    # A supersession: the user moved; the old home is kept, superseded, on the new one's page.
    old_home = memory_create(
        namespace=DEMO_NAMESPACE,
        kind="fact",
        title="Location",
        content="The user lives in Bristol.",
        slot="location",
        tags=["identity", "location"],
        importance=0.7,
        confidence=0.9,
        actor="extraction",
    )
    _age([old_home.pk], 200)
    home = demo["Location"]
    said = Message.objects.get(pk="demo-m1")  # "Hi, I'm Ada. I live in London and ..."
    Memory.objects.filter(pk=home.pk).update(
        source_message="demo-m1",
        source_thread=thread,
        source_type="user_message",
        context=f"user: {said.content}",
    )
    home.refresh_from_db()
    Memory.objects.filter(pk=old_home.pk).update(status="superseded", superseded_by=home)
    # What both claim: the user's location, Bristol then London (a belief's timeline).
    location = {"claim_subject": "user", "claim_attribute": "location", "claim_mood": "asserted"}
    Memory.objects.filter(pk=old_home.pk).update(
        claim_value="bristol", claim_polarity="affirmed", **location
    )
    Memory.objects.filter(pk=home.pk).update(
        claim_value="london", claim_polarity="affirmed", **location
    )
    memory_history_record(
        memory=old_home,
        event=MemoryEvent.Event.SUPERSEDED,
        actor="extraction",
        reason=f"same identity slot (location) as memory {home.pk}",
        data={"superseded_by": home.pk},
    )
    learnt = _extraction(
        said,
        [
            _verdict(demo["Name"], "duplicate", "already known (same content)", stage="regex"),
            _verdict(home, "stored", f"supersedes memory {old_home.pk} (identity slot location)"),
        ],
    )
    _conversation_records(thread, demo)
    edits.memory_edit(
        memory=home,
        changes={"title": "Home in London", "tags": ["identity", "location", "home"]},
        actor="staff:ada",
    )
    lifecycle.memory_archive(memory=home, actor="staff:ada", reason="checking the old address")
    lifecycle.memory_restore(memory=home, actor="staff:ada", reason="London is right")

    # More of user:demo: episodes and facts of different ages.
    for days, spec in [
        (45, {"kind": "episode", "content": "Ada gave a talk on the analytical engine in Turin."}),
        (3, {"kind": "fact", "content": "Ada's cat is called Babbage.", "tags": ["pets"]}),
        (
            1,
            {
                "kind": "episode",
                "title": "Friday incident",
                "content": "A Friday deploy broke the release pipeline; it was rolled back.",
                "tags": ["deploy", "incident"],
                "importance": 0.8,
            },
        ),
    ]:
        memory = memory_create(namespace=DEMO_NAMESPACE, actor="extraction", **spec)  # type: ignore[arg-type]
        _age([memory.pk], days)

    # Candidates: learnt from messages with a confidence below the approval threshold.
    pending = [
        ("user", "I might switch to decaf in the afternoons, not sure yet.", "fact", 0.55),
        ("user", "We could move the weekly sync to Tuesdays, let's see.", "procedure", 0.5),
        ("assistant", "Noted: you may be travelling to Turin in May.", "episode", 0.6),
    ]
    contents = [
        "Ada may switch to decaf in the afternoons.",
        "The weekly sync may move to Tuesdays.",
        "Ada may travel to Turin in May.",
    ]
    for n, ((role, text, kind, confidence), content) in enumerate(
        zip(pending, contents, strict=True)
    ):
        message = _message(thread, f"demo-m{4 + n}", role, text, 7 - n)
        candidate = _learnt(
            thread,
            message,
            namespace=DEMO_NAMESPACE,
            kind=kind,
            content=content,
            confidence=confidence,
            status="candidate",
            procedure_subtype="workflow" if kind == "procedure" else "",
        )
        reason = f"confidence {confidence:.2f} is below the approval threshold (hedged)"
        _extraction(message, [_verdict(candidate, "stored", reason)])

    # A release bot's namespace: procedures with task and skill ids, a direct candidate.
    bot = "agent:release-bot"
    for title, content, task, skill in [
        ("Changelog", "Every release note lists breaking changes first.", "rel-2031", "notes"),
        ("Tag format", "Release tags look like v1.2.3, never v1.2.", "rel-2030", "tagging"),
        ("Freeze", "No merges to main during a release freeze.", "", "tagging"),
    ]:
        memory = memory_create(
            namespace=bot,
            kind="procedure",
            procedure_subtype="constraint",
            title=title,
            content=content,
            scope="project",
            scope_id="spaceduck",
            confidence=0.9,
            importance=0.8,
            actor="token:release-bot",
        )
        Memory.objects.filter(pk=memory.pk).update(source_task_id=task, source_skill_id=skill)
    direct = memory_create(
        namespace=bot,
        kind="fact",
        content="Release notes might need a security section.",
        confidence=0.45,
        status="candidate",
        actor="token:release-bot",
    )
    Memory.objects.filter(pk=direct.pk).update(source_task_id="rel-2031")
    memory_create(
        namespace="user:grace",
        kind="fact",
        title="Language",
        content="Grace writes her notes in COBOL-flavoured English.",
        actor="api",
    )
    failed = _release_bot_thread(bot)
    _conflicts(thread)
    _tokens()
    _running_service()
    return {"memory": home.pk, "extraction": learnt.pk, "failed": failed.pk}


def _tokens() -> None:
    """Three agents' tokens for the tokens page: one in use, one expiring, one revoked."""
    from datetime import timedelta

    from django.utils import timezone

    from spaceduck.core.tokens import token_create
    from spaceduck.models import ApiToken

    now = timezone.now()
    made = [
        token_create(
            name=name,
            namespaces=grants,
            permissions=perms,
            expires_at=expires,
            created_by="staff:ada",
        ).token
        for name, grants, perms, expires in [
            ("assistant", ["user:demo"], ["read", "write"], None),
            (
                "release-bot",
                ["agent:release-bot", "workflow:*"],
                ["read", "write"],
                now + timedelta(days=30),
            ),
            ("old laptop", ["user:demo"], ["read"], None),
        ]
    ]
    ApiToken.objects.filter(pk=made[0].pk).update(last_used_at=now - timedelta(minutes=3))
    made[2].revoke(by="staff:ada")


def _conflicts(thread: Any) -> None:
    """Two flips the engine would not decide alone: a preference said twice, then the other
    way round in a message that does not say it changed (the conflict inbox)."""
    from django.utils import timezone

    from memories.extraction.types import candidate_from_api
    from memories.models import Memory
    from memories.write.ingest import memory_write
    from spaceduck.ops.demo import DEMO_NAMESPACE

    flips = [
        (
            "The user prefers window seats over aisle seats.",
            "I prefer aisle seats over window seats.",
        ),
        ("The user prefers Python over Rust for side projects.", "I prefer Rust over Python."),
    ]
    for n, (held, said) in enumerate(flips):
        for _ in range(2):  # said twice: confirmed
            old = memory_write(
                candidate_from_api({"kind": "fact", "content": held}),
                namespace=DEMO_NAMESPACE,
                actor="token:travel-agent",
            )
        Memory.objects.filter(pk=old.matched_memory_id).update(
            created_at=timezone.now() - timedelta(days=40 + n)
        )
        message = _message(thread, f"demo-m{20 + n}", "user", said, 30 - n)
        new = memory_write(
            candidate_from_api({"kind": "fact", "content": f"The user prefers {said[9:]}"}),
            namespace=DEMO_NAMESPACE,
            actor="extraction",
            context=f"user: {said}",
        )
        Memory.objects.filter(pk=new.memory_id).update(
            source_message=message, source_thread=thread, source_type="user_message"
        )


def _conversation_records(thread: Any, demo: dict[str, Any]) -> None:
    """The demo thread as the pipeline leaves it: an earlier part compacted into a summary,
    and an extraction record for the messages the demo data loads without one."""
    from django.utils import timezone

    from memories.models import Message, Thread
    from memories.upkeep.compaction import SUMMARY_MARKER

    started = timezone.now() - timedelta(minutes=12)
    Message.objects.create(
        id="demo-m0",
        thread=thread,
        role="system",
        content="Summary of the earlier conversation: Ada introduced the analytical engine "
        "project and asked for help keeping its release process safe.",
        provenance={SUMMARY_MARKER: {"replaces": ["demo-old-1", "demo-old-2"], "by": "heuristic"}},
        created_at=started,
    )
    Thread.objects.filter(pk=thread.pk).update(created_at=started)
    rejected = {
        "candidate": {
            "kind": "episode",
            "content": "The assistant greeted Ada.",
            "confidence": 0.4,
            "importance": 0.1,
            "stage": "rules",
        },
        "decision": "rejected",
        "reason": "small talk: nothing durable to remember",
        "memory_id": None,
        "matched_memory_id": None,
    }
    _extraction(Message.objects.get(pk="demo-m2"), [rejected], duration_ms=31.0)
    _extraction(
        Message.objects.get(pk="demo-m3"),
        [_verdict(demo["No Friday deploys"], "duplicate", "already known (cosine 0.98)")],
        duration_ms=57.0,
    )


def _release_bot_thread(bot: str) -> Any:
    """A task's thread where the chat provider failed three times (the log's failure) and
    a later message that went through; returns the failed record."""
    from django.utils import timezone

    from memories.models import Memory, Thread

    thread = Thread.objects.create(
        id="release-2031",
        namespace=bot,
        title="Release 2.4.0",
        created_at=timezone.now() - timedelta(minutes=4),
    )
    asked = _message(
        thread,
        "rel-m1",
        "user",
        "Tag 2.4.0 once CI is green, and from now on put breaking changes first in the notes.",
        4,
    )
    # A timeout, then two 503s after the retry delays (10 s, 20 s).
    failures = [
        (30.0, "chat provider: timed out after 30.0 s"),
        (40.4, "chat provider: 503 Service Unavailable (upstream overloaded)"),
        (60.7, "chat provider: 503 Service Unavailable (upstream overloaded)"),
    ]
    failed = _extraction(
        asked,
        [],
        status="failed",
        provider="openai:gpt-4o-mini",
        failures=failures,
        duration_ms=312.0,
        task_id="rel-2031",
    )
    done = _message(thread, "rel-m2", "assistant", "Tagged v2.4.0; the changelog is updated.", 2)
    changelog = Memory.objects.get(namespace=bot, title="Changelog")
    _extraction(
        done,
        [_verdict(changelog, "duplicate", "already known (cosine 0.96)")],
        provider="openai:gpt-4o-mini",
        duration_ms=812.0,
        task_id="rel-2031",
    )
    return failed


def _running_service() -> None:
    """A worker that has just beaten (the overview shows it alive) and two settings changed
    on the settings page (its history)."""
    from spaceduck.core import runtime
    from spaceduck.core.worker import heartbeat_beat

    heartbeat_beat(worker="spaceduck-host:4242")
    runtime.settings_update(values={"extraction_retries": 5}, actor="staff:ada")
    runtime.settings_update(values={"task_max_memory_writes": 20}, actor="staff:grace")


# --- The child: server and browser --------------------------------------------------------


@contextmanager
def serving() -> Iterator[str]:
    """The site (static files too) on 127.0.0.1 at a free port, in a thread; yields its URL."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler, allow_reuse_address=False)
    server.set_app(StaticFilesHandler(get_wsgi_application()))
    # Chromium asks for /favicon.ico (a 404); only errors are worth printing. After
    # get_wsgi_application(), which configures logging again.
    logging.getLogger("django.request").setLevel(logging.ERROR)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _check_static(base: str) -> None:
    direct = build_opener(ProxyHandler({}))  # never through a developer's HTTP(S)_PROXY
    with direct.open(f"{base}/static/css/spaceduck.css", timeout=10) as response:
        kind = response.headers.get("Content-Type", "")
        if response.status != 200 or "css" not in kind:
            raise SystemExit(f"the stylesheet did not load: {response.status} {kind}")


def shoot(
    base: str, out: Path, chromium: str, username: str, password: str, ids: dict[str, int]
) -> None:
    from playwright.sync_api import sync_playwright

    from spaceduck.ops.demo import DEMO_THREAD_ID

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.goto(f"{base}/admin/login/?next=/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("input[type=submit]")
        page.wait_for_url(f"{base}/")

        page.wait_for_selector("#memory-list table.memories")
        page.screenshot(path=str(out / "viewer.png"), full_page=True)
        print("viewer.png: the memory viewer, every namespace")

        page.goto(f"{base}/?{_query({'namespace': 'user:demo', 'q': SEARCH})}")
        first = page.locator("#memory-list table.recall tbody tr").first
        first.locator("details.why summary").click()
        page.wait_for_selector("#memory-list details.why[open] table.why-table")
        page.screenshot(path=str(out / "viewer-search.png"), full_page=True)
        print(f"viewer-search.png: recall of {SEARCH!r} in user:demo, the first hit's why open")

        plain_pages = [
            (
                f"/memories/{ids['memory']}/",
                "#memory-page ol.timeline",
                "memory.png",
                f"memory {ids['memory']}'s page",
            ),
            ("/review/memories/", "#queue table.queue", "candidates.png", "the candidate queue"),
            (
                "/review/conflicts/",
                "#inbox article.conflict",
                "conflicts.png",
                "the conflict inbox",
            ),
            ("/overview/", "#overview #worker-card.worker-alive", "overview.png", "the overview"),
            (
                "/extractions/",
                "#extraction-list table.extractions",
                "extractions.png",
                "the extraction log",
            ),
            (
                f"/extractions/{ids['extraction']}/",
                "#extraction-page #candidates",
                "extraction.png",
                f"extraction {ids['extraction']}'s page",
            ),
            (
                f"/extractions/{ids['failed']}/",
                "#extraction-page #extraction-status form.retry-form",
                "extraction-failed.png",
                f"failed extraction {ids['failed']}'s page",
            ),
            (
                f"/threads/{DEMO_THREAD_ID}/",
                "#messages ol.thread-messages li.compaction-summary",
                "thread.png",
                f"thread {DEMO_THREAD_ID}'s page",
            ),
            ("/settings/memory/", "#memory-settings", "settings.png", "Settings > Memory"),
            (
                "/context/?"
                + _query({"namespace": "user:demo", "thread": DEMO_THREAD_ID, "query": SEARCH}),
                "#system-block",
                "context.png",
                "the agent view: the context block an agent gets",
            ),
            ("/tokens/", "#token-table", "tokens.png", "the API tokens"),
            (
                f"/people/?{_query({'q': 'Ada'})}",
                "#people-results .people-hit",
                "people.png",
                "a person's data: a search across namespaces",
            ),
        ]
        for path, ready, name, what in plain_pages:
            page.goto(base + path)
            page.wait_for_selector(ready)  # the page's main part is there: nothing half-drawn
            page.screenshot(path=str(out / name), full_page=True)
            print(f"{name}: {what}")
        page.goto(f"{base}/memories/{ids['memory']}/")
        # The page's width, from the history's heading down: the edit's diff and its button.
        box = page.locator("ol.timeline.history").bounding_box()
        assert box is not None
        top = max(0.0, box["y"] - 60)
        page.screenshot(
            path=str(out / "memory-diff.png"),
            full_page=True,
            clip={"x": 0, "y": top, "width": WIDTH, "height": max(HEIGHT, box["height"] + 80)},
        )
        print(f"memory-diff.png: memory {ids['memory']}'s history, an edit as a diff")
        page.goto(
            f"{base}/beliefs/?"
            + _query({"namespace": "user:demo", "subject": "user", "attribute": "location"})
        )
        page.wait_for_selector("#belief ol.belief-timeline")
        page.screenshot(path=str(out / "belief.png"), full_page=True)
        print("belief.png: what we believed when (the user's location)")

        page.goto(f"{base}/activity/")
        page.wait_for_selector("#activity-list")
        page.screenshot(path=str(out / "activity.png"), full_page=True)
        print("activity.png: who did what, newest first (people and agents)")

        # The same session on a phone (390 px, drawn at twice the density) and in dark mode.
        session = context.storage_state()
        phone = browser.new_context(
            viewport={"width": PHONE_WIDTH, "height": PHONE_HEIGHT},
            device_scale_factor=2,
            storage_state=session,
        )
        page = phone.new_page()
        page.set_default_timeout(20_000)
        page.goto(f"{base}/memories/{ids['memory']}/")
        page.wait_for_selector("#memory-page ol.timeline")
        # The top of the page (the folded menu, the memory, its details and the section stacked
        # below them): the whole page would be a strip too tall to read beside the others.
        page.screenshot(
            path=str(out / "memory-phone.png"),
            full_page=True,
            clip={"x": 0, "y": 0, "width": PHONE_WIDTH, "height": PHONE_CLIP},
        )
        print(f"memory-phone.png: memory {ids['memory']}'s page {PHONE_WIDTH} px wide")
        page.goto(f"{base}/review/memories/")
        page.wait_for_selector("#queue table.memories")
        page.screenshot(
            path=str(out / "candidates-phone.png"),
            full_page=True,
            clip={"x": 0, "y": 0, "width": PHONE_WIDTH, "height": PHONE_CLIP},
        )
        print(f"candidates-phone.png: the candidate queue {PHONE_WIDTH} px wide, as cards")
        phone.close()
        dark = browser.new_context(
            viewport={"width": WIDTH, "height": HEIGHT}, color_scheme="dark", storage_state=session
        )
        page = dark.new_page()
        page.set_default_timeout(20_000)
        page.goto(f"{base}/")
        page.wait_for_selector("#memory-list table.memories")
        page.screenshot(path=str(out / "viewer-dark.png"), full_page=True)
        print("viewer-dark.png: the memory viewer in dark mode")
        dark.close()
        context.close()
        browser.close()


def _query(params: dict[str, str]) -> str:
    from urllib.parse import urlencode

    return urlencode(params)


def child_main(config: dict[str, Any]) -> None:
    setup_child_django()
    from django.contrib.auth import get_user_model

    ids = seed()
    password = secrets.token_urlsafe(16)
    get_user_model().objects.create_user("ada", password=password, is_staff=True)
    out = Path(config["out"])
    with serving() as base:
        _check_static(base)
        shoot(base, out, config["chromium"], "ada", password, ids)
    for name in SHOTS:
        size = (out / name).stat().st_size
        print(f"wrote {out / name} ({size // 1024} KB)")


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    child_main(json.loads(sys.argv[1]))
