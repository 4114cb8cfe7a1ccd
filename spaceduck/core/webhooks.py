"""Webhooks: tell a reviewer that something waits (a new conflict, a new candidate memory,
a pending note), and a test from Settings.

Optional: nothing happens unless ``SPACEDUCK_WEBHOOK_URL`` is set. The write that has
something to tell calls ``notify`` inside its transaction; the delivery is queued once the
transaction commits (a rolled-back write tells nobody) and the worker sends it
(``spaceduck.tasks.deliver_webhook``): a slow or dead receiver never slows or breaks the
write. A failed attempt is retried ``SPACEDUCK_WEBHOOK_RETRIES`` times, the delay doubling
from ``SPACEDUCK_WEBHOOK_RETRY_SECONDS``; every attempt is a WebhookDelivery row.

The request: ``POST`` of a JSON body ``{"id", "event", "created_at", "data"}`` with

- ``X-Spaceduck-Event``: the event (``conflict.opened``, ``memory.candidate``,
  ``note.pending``, ``test``);
- ``X-Spaceduck-Delivery``: the delivery's id, the same on every retry (deduplicate on it);
- ``X-Spaceduck-Timestamp``: Unix seconds when this attempt was signed;
- ``X-Spaceduck-Signature``: ``sha256=<hex>``, the HMAC-SHA256 with the secret
  (``SPACEDUCK_WEBHOOK_SECRET``) of ``<timestamp>.<raw body>``. The timestamp is signed
  with the body so a captured request cannot be replayed later with a fresh timestamp: a
  receiver checks the signature, then that the timestamp is recent. Without a secret the
  header is left out.

The body names ids, namespaces and links, never what a memory or note says: the receiver
is another system (a chat, a ticket queue) and needs to know *that* something waits.
Redirects are not followed and no proxy from the environment is used: the request goes to
the configured URL and nowhere else.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import uuid
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from spaceduck.core.queue import enqueue
from spaceduck.models import WebhookDelivery

if TYPE_CHECKING:
    import urllib.request

logger = logging.getLogger(__name__)

CONFLICT_OPENED = "conflict.opened"
MEMORY_CANDIDATE = "memory.candidate"
NOTE_PENDING = "note.pending"
TEST = "test"
SIGNATURE_HEADER = "X-Spaceduck-Signature"
TIMESTAMP_HEADER = "X-Spaceduck-Timestamp"
EVENT_HEADER = "X-Spaceduck-Event"
DELIVERY_HEADER = "X-Spaceduck-Delivery"
ERROR_CHARS = 500


def enabled() -> bool:
    return bool(settings.WEBHOOK_URL)


def shown_url(url: str) -> str:
    """Where the URL points, without what may be its secret: many receivers (a chat's
    incoming webhook) put the key in the path or the query, and a login may be in it."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    rest = "/…" if parts.path.strip("/") or parts.query else "/"
    return f"{parts.scheme}://{host}{rest}"


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=<hex>`` of ``<timestamp>.<body>``: what a receiver recomputes and compares
    (with ``hmac.compare_digest``)."""
    message = timestamp.encode("ascii") + b"." + body
    return "sha256=" + hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def body_of(event: str, data: dict[str, Any], delivery: str) -> str:
    payload = {
        "id": delivery,
        "event": event,
        "created_at": timezone.now().isoformat(),
        "data": data,
    }
    return json.dumps(payload, ensure_ascii=False, sort_keys=True)


def notify(event: str, data: dict[str, Any]) -> None:
    """Queue ``event`` for delivery when the current transaction commits (at once outside
    one). Never raises: telling a reviewer must not undo or fail the write that told."""
    if not enabled():
        return
    try:
        delivery = uuid.uuid4().hex
        body = body_of(event, data, delivery)
        transaction.on_commit(lambda: _enqueue(event, body, delivery), robust=True)
    except Exception:
        logger.exception("webhook %s could not be queued", event)


def _enqueue(event: str, body: str, delivery: str) -> None:
    try:
        enqueue("deliver_webhook", event, body, delivery, 1)
    except Exception:
        logger.exception("webhook %s (%s) could not be queued", event, delivery)


def backoff(attempt: int) -> float:
    """Seconds before the attempt after ``attempt``: the base delay, doubling."""
    return float(settings.WEBHOOK_RETRY_SECONDS * 2 ** (attempt - 1))


@dataclass(frozen=True)
class _Answer:
    status_code: int | None
    error: str


@cache
def _opener() -> urllib.request.OpenerDirector:
    """No proxy from the environment, and a redirect is an answer (a failed attempt), not
    a new address to send the body to. Built on first use: urllib.request costs every
    process that imports this module (all of them) ~10 ms of start-up otherwise."""
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())


def deliver(event: str, body: str, delivery: str, attempt: int) -> WebhookDelivery:
    """One attempt: POST, signed now, and the row that records it. Any answer but 2xx, and
    any failure to get one (refused, timed out), is a failed attempt with its reason."""
    url = settings.WEBHOOK_URL
    raw = body.encode("utf-8")
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "spaceduck-webhook/1",
        EVENT_HEADER: event,
        DELIVERY_HEADER: delivery,
        TIMESTAMP_HEADER: timestamp,
    }
    if settings.WEBHOOK_SECRET:
        headers[SIGNATURE_HEADER] = sign(settings.WEBHOOK_SECRET, timestamp, raw)
    started = time.perf_counter()
    answer = _post(url, raw, headers)
    record = WebhookDelivery.objects.create(
        delivery=delivery,
        event=event,
        url=shown_url(url),
        attempt=attempt,
        status_code=answer.status_code,
        ok=not answer.error,
        error=answer.error[:ERROR_CHARS],
        duration_ms=(time.perf_counter() - started) * 1000.0,
    )
    if answer.error:
        logger.warning("webhook %s attempt %d failed: %s", event, attempt, answer.error)
    return record


def _post(url: str, raw: bytes, headers: dict[str, str]) -> _Answer:
    import http.client
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=raw, headers=headers, method="POST")
    try:
        with _opener().open(request, timeout=settings.WEBHOOK_TIMEOUT_SECONDS) as response:
            status = int(response.status)
    except urllib.error.HTTPError as error:
        return _Answer(error.code, f"HTTP {error.code} {error.reason}")
    # Refused, unreachable, timed out, a bad URL, or an answer that is not HTTP.
    except (OSError, ValueError, http.client.HTTPException) as error:
        reason = getattr(error, "reason", None) or error
        return _Answer(None, f"{type(error).__name__}: {reason}")
    if not 200 <= status < 300:
        return _Answer(status, f"HTTP {status}")
    return _Answer(status, "")


def send_test(actor: str) -> WebhookDelivery:
    """Settings' *Send a test webhook*: one attempt now, in the request, so the person sees
    the answer (no retries: they can press again)."""
    delivery = uuid.uuid4().hex
    body = body_of(TEST, {"sent_by": actor}, delivery)
    return deliver(TEST, body, delivery, 1)


def recent(limit: int = 10) -> list[WebhookDelivery]:
    return list(WebhookDelivery.objects.all()[:limit])
