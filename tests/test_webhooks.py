"""Webhooks (spaceduck.core.webhooks, spaceduck.tasks.deliver_webhook): a new conflict, a new
candidate and a pending note are POSTed, signed, to ``SPACEDUCK_WEBHOOK_URL`` once the write
commits; failures are retried with doubling delays and every attempt is logged; Settings
sends a test. The receiver is a real HTTP server on 127.0.0.1 (nothing else is called)."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from huey.contrib.djhuey import HUEY

from notes.services import save_note
from spaceduck.core import webhooks
from spaceduck.core.env import env_http_url
from spaceduck.models import WebhookDelivery
from tests.conftest import Actor
from tests.memories.test_conflict_inbox import flip

pytestmark = pytest.mark.django_db
SECRET = "hook-secret-for-tests"
NS = "user:alice"
HX = {"HX-Request": "true"}


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict[str, Any]:
        return json.loads(self.body)

    def signed_rightly(self) -> bool:
        """The receiver's check, written out here rather than with ``webhooks.sign``."""
        stamp = self.headers["X-Spaceduck-Timestamp"]
        mac = hmac.new(SECRET.encode(), stamp.encode() + b"." + self.body, hashlib.sha256)
        return hmac.compare_digest(
            self.headers["X-Spaceduck-Signature"], f"sha256={mac.hexdigest()}"
        )


@dataclass
class Receiver:
    """An HTTP server on loopback answering each POST with the next of ``answers``
    (then 200), recording what it got."""

    url: str
    answers: list[int]
    got: list[Received] = field(default_factory=list)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver(url="", answers=[])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state.got.append(Received(self.path, dict(self.headers.items()), body))
            self.send_response(state.answers.pop(0) if state.answers else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_port}/hooks/k3y?token=abc"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _empty_schedule() -> Iterator[None]:
    HUEY.flush()  # immediate mode: the in-memory queue and schedule of this process
    yield
    HUEY.flush()


def _run_due_retries() -> list[datetime]:
    """What the consumer would do once the delays pass: run every scheduled retry (the
    ones they schedule in turn too). Returns the etas, to check the backoff."""
    etas: list[datetime] = []
    far = datetime.now(UTC).replace(tzinfo=None) + timedelta(days=1)
    while due := HUEY.read_schedule(far):
        for task in due:
            etas.append(task.eta)
            HUEY.execute(task, timestamp=far)
    return etas


def _hooked(url: str, **more: Any) -> Any:
    return override_settings(WEBHOOK_URL=url, WEBHOOK_SECRET=SECRET, **more)


def test_a_new_conflict_is_posted_signed_once_the_write_commits(
    owner: Actor, receiver: Receiver, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    with _hooked(receiver.url), django_capture_on_commit_callbacks(execute=True):
        conflict = flip(owner)
    [sent] = [r for r in receiver.got if r.headers["X-Spaceduck-Event"] == "conflict.opened"]
    assert sent.path == "/hooks/k3y?token=abc"
    assert sent.headers["Content-Type"] == "application/json"
    assert sent.signed_rightly()
    body = sent.json()
    assert body["event"] == "conflict.opened"
    assert body["id"] == sent.headers["X-Spaceduck-Delivery"]
    assert body["data"] == {
        "conflict_id": conflict["id"],
        "namespace": NS,
        "old_memory_id": conflict["old"]["id"],
        "new_memory_id": conflict["new"]["id"],
        "url": f"/review/conflicts/?namespace={NS}",
    }
    assert b"coffee" not in sent.body  # ids and links, never what the memories say
    # The candidate waiting in the conflict is told once, as the conflict.
    assert [r.headers["X-Spaceduck-Event"] for r in receiver.got] == ["conflict.opened"]
    [row] = WebhookDelivery.objects.all()
    assert (row.event, row.attempt, row.status_code, row.ok, row.error) == (
        "conflict.opened",
        1,
        200,
        True,
        "",
    )
    assert row.url == f"http://127.0.0.1:{receiver.url.split(':')[2].split('/')[0]}/…"


def test_a_new_candidate_and_a_pending_note_are_posted(
    owner: Actor, receiver: Receiver, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    memory = {
        "namespace": NS,
        "kind": "fact",
        "content": "The user might enjoy opera concerts.",
        "confidence": 0.3,
    }
    with _hooked(receiver.url), django_capture_on_commit_callbacks(execute=True):
        written = owner.post("/api/memories", memory)
        save_note(NS, "Prefers the blue mug.", author="token:owner", status="pending", id="n-1")
        save_note(NS, "An accepted note tells no one.", author="token:owner")
    assert written.status_code == 201, written.content
    memory_id = written.json()["memory"]["id"]
    assert written.json()["memory"]["status"] == "candidate"
    events = {r.headers["X-Spaceduck-Event"]: r for r in receiver.got}
    assert set(events) == {"memory.candidate", "note.pending"}
    assert all(r.signed_rightly() for r in receiver.got)
    assert events["memory.candidate"].json()["data"] == {
        "memory_id": memory_id,
        "namespace": NS,
        "kind": "fact",
        "confidence": 0.3,
        "url": f"/memories/{memory_id}/",
    }
    note = events["note.pending"].json()["data"]
    assert note == {
        "note_id": "n-1",
        "namespace": NS,
        "kind": "",
        "author": "token:owner",
        "url": "/notes/n-1/",
    }


def test_nothing_is_sent_when_the_write_rolls_back_or_no_url_is_set(
    receiver: Receiver, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    with django_capture_on_commit_callbacks(execute=True) as queued:
        save_note(NS, "No URL set.", status="pending")
    assert queued == []
    with _hooked(receiver.url), django_capture_on_commit_callbacks(execute=False) as queued:
        save_note(NS, "Rolled back.", status="pending")
    assert len(queued) == 1  # queued on commit: a rolled-back write never runs it
    assert receiver.got == []
    assert not WebhookDelivery.objects.exists()


def test_a_500_is_retried_later_with_the_same_delivery_id(
    receiver: Receiver, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    receiver.answers = [500]
    with _hooked(receiver.url, WEBHOOK_RETRY_SECONDS=30.0, WEBHOOK_RETRIES=3):
        before = datetime.now(UTC).replace(tzinfo=None)
        with django_capture_on_commit_callbacks(execute=True):
            save_note(NS, "Please review.", status="pending")
        rows = list(WebhookDelivery.objects.order_by("id"))
        assert [(r.attempt, r.status_code, r.ok, r.error) for r in rows] == [
            (1, 500, False, "HTTP 500 Internal Server Error")
        ]
        [eta] = _run_due_retries()
    assert timedelta(seconds=29) < eta - before < timedelta(seconds=40)
    rows = list(WebhookDelivery.objects.order_by("id"))
    assert [(r.attempt, r.status_code, r.ok) for r in rows] == [(1, 500, False), (2, 200, True)]
    assert len({r.delivery for r in rows}) == 1
    first, second = receiver.got
    assert first.body == second.body
    assert first.headers["X-Spaceduck-Delivery"] == second.headers["X-Spaceduck-Delivery"]
    assert second.signed_rightly()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_receiver_is_logged_as_failed_and_never_breaks_the_write(
    owner: Actor, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/hook"
    memory = {
        "namespace": NS,
        "kind": "fact",
        "content": "The user might enjoy jazz concerts.",
        "confidence": 0.3,
    }
    with _hooked(url, WEBHOOK_RETRY_SECONDS=10.0, WEBHOOK_RETRIES=2):
        with django_capture_on_commit_callbacks(execute=True):
            written = owner.post("/api/memories", memory)
        assert written.status_code == 201, written.content
        etas = _run_due_retries()
    rows = list(WebhookDelivery.objects.order_by("id"))
    assert [(r.attempt, r.ok, r.status_code) for r in rows] == [
        (1, False, None),
        (2, False, None),
        (3, False, None),
    ]
    assert all("Connection refused" in r.error for r in rows)
    assert len(etas) == 2  # two retries, then it stops
    # Each retry is due its delay after the attempt before it failed: 10 s, then 20 s.
    waited = [
        eta.replace(tzinfo=UTC) - row.created_at for eta, row in zip(etas, rows, strict=False)
    ]
    assert timedelta(seconds=9.9) < waited[0] < timedelta(seconds=11)
    assert timedelta(seconds=19.9) < waited[1] < timedelta(seconds=21)
    assert owner.get(f"/api/memories/{written.json()['memory']['id']}").status_code == 200


def test_an_answer_that_is_not_http_is_a_failed_attempt(
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    """A receiver that answers garbage (not a status line) and hangs up."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def answer_garbage() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"not http at all\r\n\r\n")

    thread = threading.Thread(target=answer_garbage, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    try:
        with _hooked(url, WEBHOOK_RETRIES=0), django_capture_on_commit_callbacks(execute=True):
            save_note(NS, "Please review.", status="pending")
    finally:
        thread.join(timeout=5)
        listener.close()
    [row] = WebhookDelivery.objects.all()
    assert (row.ok, row.status_code) == (False, None)
    assert "BadStatusLine" in row.error
    assert _run_due_retries() == []  # no retries configured: nothing scheduled


def test_a_queue_that_fails_does_not_fail_the_write(
    monkeypatch: pytest.MonkeyPatch,
    receiver: Receiver,
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    def broken(*args: Any) -> None:
        raise ConnectionError("queue down")

    monkeypatch.setattr(webhooks, "enqueue", broken)
    with _hooked(receiver.url), django_capture_on_commit_callbacks(execute=True):
        note = save_note(NS, "Still saved.", status="pending")
    assert note.pk is not None
    assert receiver.got == []


def test_the_shown_url_keeps_no_key() -> None:
    assert webhooks.shown_url("https://u:p@hooks.example.org/services/T0/B0/XYZ") == (
        "https://hooks.example.org/…"
    )
    assert webhooks.shown_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/"
    assert webhooks.shown_url("http://127.0.0.1:8080?key=1") == "http://127.0.0.1:8080/…"


def test_settings_says_off_without_a_url(staff_client: Client) -> None:
    page = staff_client.get("/settings/memory/").content.decode()
    assert "Set <code>SPACEDUCK_WEBHOOK_URL</code>" in page
    assert "Send a test webhook" not in page


@pytest.mark.parametrize("headers", [{}, HX])
def test_settings_refuses_a_test_without_a_url(
    staff_client: Client, headers: dict[str, str]
) -> None:
    answer = staff_client.post("/settings/memory/", {"form": "webhook-test"}, headers=headers)
    assert answer.status_code == 409
    assert "set SPACEDUCK_WEBHOOK_URL" in answer.content.decode()
    assert not WebhookDelivery.objects.exists()


def test_settings_sends_a_test_and_shows_the_answer(
    staff_client: Client, receiver: Receiver
) -> None:
    with _hooked(receiver.url):
        page = staff_client.get("/settings/memory/").content.decode()
        assert "Send a test webhook" in page
        assert "http://127.0.0.1:" in page
        assert "k3y" not in page  # the path and query may be the receiver's key
        assert "token=abc" not in page
        plain = staff_client.post("/settings/memory/", {"form": "webhook-test"})
        assert plain.status_code == 302
        shown = staff_client.get(plain["Location"]).content.decode()
        assert "Test webhook delivered: HTTP 200." in shown
        receiver.answers = [503]
        part = staff_client.post("/settings/memory/", {"form": "webhook-test"}, headers=HX)
    html = part.content.decode()
    assert part.status_code == 200
    assert html.lstrip().startswith('<section id="webhooks">')
    assert "Test webhook failed: HTTP 503" in html
    assert html.count('class="webhook-') == 2  # both attempts in the log
    assert [r.json()["event"] for r in receiver.got] == ["test", "test"]
    assert receiver.got[0].json()["data"] == {"sent_by": "staff:staff"}
    assert all(r.signed_rightly() for r in receiver.got)
    assert WebhookDelivery.objects.filter(event="test").count() == 2


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("ftp://127.0.0.1/hook", "must be an http:// or https:// URL"),
        ("127.0.0.1:8000/hook", "must be an http:// or https:// URL"),
        ("http:///hook", "must be an http:// or https:// URL"),
        ("http://127.0.0.1:99999/hook", "has no valid port"),
    ],
)
def test_a_webhook_url_that_cannot_work_stops_the_start(
    monkeypatch: pytest.MonkeyPatch, raw: str, said: str
) -> None:
    monkeypatch.setenv("SPACEDUCK_WEBHOOK_URL", raw)
    with pytest.raises(ImproperlyConfigured, match=said):
        env_http_url("SPACEDUCK_WEBHOOK_URL")


def test_a_webhook_url_is_optional(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPACEDUCK_WEBHOOK_URL", raising=False)
    assert env_http_url("SPACEDUCK_WEBHOOK_URL") == ""
    monkeypatch.setenv("SPACEDUCK_WEBHOOK_URL", " https://hooks.example.org/x ")
    assert env_http_url("SPACEDUCK_WEBHOOK_URL") == "https://hooks.example.org/x"
