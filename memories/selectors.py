"""Read queries on memories, used by the JSON API, the dashboard and the CLI."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from memories.models import Fact, Memory, MemoryEvent, Message, Thread
from spaceduck.errors import InvalidInput, NotFound
from spaceduck.namespaces import InvalidNamespace, normalize_namespace

MEMORY_LIST_LIMIT = 200
MEMORY_LIST_MAX = 1000


def memory_list(
    *,
    namespaces: Iterable[str] | None = None,
    kinds: Iterable[str] | None = None,
    statuses: Iterable[str] | None = None,
    scopes: Iterable[str] | None = None,
    limit: int = MEMORY_LIST_LIMIT,
) -> QuerySet[Memory]:
    """Newest ``updated_at`` first; an empty or None filter does not filter."""
    queryset = Memory.objects.all()
    if namespaces is not None:
        queryset = queryset.filter(namespace__in=list(namespaces))
    if kinds:
        queryset = queryset.filter(kind__in=list(kinds))
    if statuses:
        queryset = queryset.filter(status__in=list(statuses))
    if scopes:
        queryset = queryset.filter(scope__in=list(scopes))
    return queryset.order_by("-updated_at", "-id")[:limit]


def parse_choices(raw: str | None, allowed: Sequence[str], name: str) -> list[str]:
    """A comma-separated query value as a list of allowed values, in the given order.

    None or blank means "no filter" (an empty list). Blanks around and between
    items are ignored, repeats are dropped. An unknown value is an InvalidInput
    naming the allowed ones: a typo must not silently widen or empty a result.
    """
    if raw is None:
        return []
    chosen: list[str] = []
    for item in (part.strip() for part in raw.split(",")):
        if not item or item in chosen:
            continue
        if item not in allowed:
            raise InvalidInput(f"unknown {name} {item!r}; allowed: {', '.join(allowed)}")
        chosen.append(item)
    return chosen


def clean_page_limit(limit: int, maximum: int = MEMORY_LIST_MAX) -> int:
    """A result-size limit within 1..maximum, or InvalidInput saying the bounds."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInput(f"limit must be an integer between 1 and {maximum}, got {limit!r}")
    return limit


def memory_get(*, memory_id: int) -> Memory | None:
    return Memory.objects.filter(pk=memory_id).first()


def skill_namespaces(*, skill_id: str) -> list[str]:
    """The namespaces holding memories a skill wrote."""
    rows = Memory.objects.filter(source_skill_id=skill_id).values_list("namespace", flat=True)
    return sorted(set(rows))


def memory_history(*, memory_id: int) -> QuerySet[MemoryEvent]:
    return MemoryEvent.objects.filter(memory_id=memory_id).order_by("created_at", "id")


# --- Facts, threads and messages ------------------------------------------------
# The issue fixes these names and positional signatures (``get_fact(ns, key)``),
# so they differ from the keyword-only ``memory_*`` functions above. The
# validators live here because both the reads below and the writes in
# memories.services need them, and services may import selectors (not the
# other way round).

MAX_FACT_KEY_LENGTH = 255
MAX_MESSAGE_ID_LENGTH = 64


def clean_namespace(ns: object) -> str:
    """The canonical namespace, or InvalidInput saying what is wrong with it."""
    if not isinstance(ns, str):
        raise InvalidInput(f"namespace must be a string like 'user:alice', got {ns!r}")
    try:
        return normalize_namespace(ns)
    except InvalidNamespace as exc:
        raise InvalidInput(f"invalid namespace: {exc}") from None


def clean_fact_key(key: object) -> str:
    if not isinstance(key, str) or not key:
        raise InvalidInput(f"fact key must be a non-empty string, got {key!r}")
    if len(key) > MAX_FACT_KEY_LENGTH:
        raise InvalidInput(f"fact key is longer than {MAX_FACT_KEY_LENGTH} characters")
    if _has_control_characters(key):
        raise InvalidInput("fact key must not contain control characters")
    return key


def clean_message_id(message_id: object, what: str = "message id") -> str:
    if not isinstance(message_id, str) or not message_id:
        raise InvalidInput(f"{what} must be a non-empty string, got {message_id!r}")
    if len(message_id) > MAX_MESSAGE_ID_LENGTH:
        raise InvalidInput(f"{what} is longer than {MAX_MESSAGE_ID_LENGTH} characters")
    if _has_control_characters(message_id):
        raise InvalidInput(f"{what} must not contain control characters")
    return message_id


def clean_limit(limit: object) -> int | None:
    # bool is an int subclass; True as a limit is a caller bug, not "1".
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise InvalidInput(f"limit must be a non-negative integer or None, got {limit!r}")
    return limit


def _has_control_characters(text: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in text)


def _live(now: datetime) -> Q:
    # Expiry is checked on every read, so an expired fact disappears at once,
    # not when the garbage collector happens to run.
    return Q(expires_at__isnull=True) | Q(expires_at__gt=now)


def get_fact(ns: str, key: str) -> Fact | None:
    """The live fact at (namespace, key), or None when missing or expired."""
    namespace, key = clean_namespace(ns), clean_fact_key(key)
    return Fact.objects.filter(_live(timezone.now()), namespace=namespace, key=key).first()


def list_facts(ns: str) -> list[Fact]:
    """The namespace's live facts, by key."""
    namespace = clean_namespace(ns)
    return list(Fact.objects.filter(_live(timezone.now()), namespace=namespace).order_by("key"))


def list_all_facts() -> list[Fact]:
    """Every live fact, by namespace then key."""
    return list(Fact.objects.filter(_live(timezone.now())).order_by("namespace", "key"))


_THREAD_SQL = "SELECT * FROM memories_thread WHERE id = %s"


def get_thread(thread_id: str) -> Thread:
    # raw(): no ORM query compilation on the message-saving hot path.
    found = Thread.objects.raw(_THREAD_SQL, [clean_message_id(thread_id, "thread id")])
    thread = next(iter(found), None)
    if thread is None:
        raise NotFound(f"thread {thread_id!r} not found")
    return thread


def list_threads(ns: str | None = None) -> list[Thread]:
    """Oldest first; every namespace when ``ns`` is None."""
    threads = Thread.objects.order_by("created_at", "id")
    if ns is not None:
        threads = threads.filter(namespace=clean_namespace(ns))
    return list(threads)


def count_messages(thread_id: str) -> int:
    return Message.objects.filter(thread=get_thread(thread_id)).count()


def list_messages(
    thread_id: str,
    limit: int | None = None,
    before: str | None = None,
    after: str | None = None,
) -> list[Message]:
    """Messages in chronological order: ``created_at``, then ``id``.

    ``before``/``after`` are message ids of this thread; results lie strictly
    before/after that message in the same order. With ``limit``, paging forward
    (``after`` given) returns the oldest N after the cursor; otherwise the newest
    N, because context building needs the recent end. Either way the list comes
    back oldest first.
    """
    limit = clean_limit(limit)
    thread = get_thread(thread_id)
    messages = Message.objects.filter(thread=thread)
    if before is not None:
        messages = messages.filter(_before(_cursor(thread, before, "before")))
    if after is not None:
        messages = messages.filter(_after(_cursor(thread, after, "after")))
    if limit is None:
        return list(messages.order_by("created_at", "id"))
    if limit == 0:
        return []
    if after is not None:
        return list(messages.order_by("created_at", "id")[:limit])
    newest_first = list(messages.order_by("-created_at", "-id")[:limit])
    return newest_first[::-1]


def _cursor(thread: Thread, message_id: str, name: str) -> tuple[datetime, str]:
    message_id = clean_message_id(message_id, f"{name} cursor")
    found = Message.objects.filter(thread=thread, pk=message_id).values_list("created_at", "id")
    cursor = found.first()
    if cursor is None:
        raise InvalidInput(f"{name} cursor {message_id!r} is not a message of this thread")
    return cursor


def _before(cursor: tuple[datetime, str]) -> Q:
    created_at, message_id = cursor
    return Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=message_id)


def _after(cursor: tuple[datetime, str]) -> Q:
    created_at, message_id = cursor
    return Q(created_at__gt=created_at) | Q(created_at=created_at, id__gt=message_id)


# --- Thread order: (created_at, id) ------------------------------------------------
# The message before / after a point in a thread: one seek each on the
# (thread, created_at, id) index. Raw SQL: both run on hot paths (recall, extraction).
_BEFORE = (
    "SELECT {column} FROM memories_message p WHERE p.thread_id = {thread} "
    "AND (p.created_at, p.id) < ({at}, {id}) ORDER BY p.created_at DESC, p.id DESC LIMIT 1"
)
_AFTER = (
    "SELECT {column} FROM memories_message p WHERE p.thread_id = {thread} "
    "AND (p.created_at, p.id) > ({at}, {id}) ORDER BY p.created_at, p.id LIMIT 1"
)
_AROUND = {"column": "p.id", "thread": "m.thread_id", "at": "m.created_at", "id": "m.id"}
_NEIGHBOURS_SQL = (
    f"SELECT m.id, ({_BEFORE.format(**_AROUND)}), ({_AFTER.format(**_AROUND)}) "
    "FROM memories_message m WHERE m.id IN ({marks})"
)
_PREVIOUS_CONTENT_SQL = _BEFORE.format(column="p.content", thread="%s", at="%s", id="%s")


def message_neighbours(message_ids: set[str]) -> dict[str, tuple[str | None, str | None]]:
    """message id -> (previous, next) message id in its thread; None at either end."""
    if not message_ids:
        return {}
    ids = sorted(message_ids)
    with connection.cursor() as cursor:
        rows = cursor.execute(_NEIGHBOURS_SQL.format(marks=", ".join(["%s"] * len(ids))), ids)
        return {str(m): (p, n) for m, p, n in rows.fetchall()}


def previous_message_content(message: Message) -> Any:
    """The content (decoded JSON) of the message before ``message`` in its thread, or None."""
    at = connection.ops.adapt_datetimefield_value(message.created_at)
    with connection.cursor() as cursor:
        row = cursor.execute(_PREVIOUS_CONTENT_SQL, [message.thread_id, at, message.pk]).fetchone()
    return None if row is None else json.loads(row[0])
