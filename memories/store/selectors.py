"""Read queries on memories, used by the JSON API, the dashboard and the CLI."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from memories.models import (
    Extraction,
    Fact,
    Memory,
    MemoryEvent,
    Message,
    Thread,
    message_keys,
    namespaced_message_key,
)
from memories.store.positions import Position
from spaceduck.core.db.fast import hot_cursor, read_plan
from spaceduck.core.db.locks import LOCK_EXPRESSION
from spaceduck.core.errors import InvalidInput, NotFound
from spaceduck.core.limits import MAX_SQL_INT, check_length, has_lone_surrogate
from spaceduck.core.namespaces import InvalidNamespace, normalize_namespace

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


def memory_rows(ids: Iterable[int]) -> list[Sequence[object]]:
    """The whole rows (``read_plan(Memory).columns``) of those of ``ids`` that exist.

    Raw SQL: recall reads up to 300 candidates a query and dedup the neighbours of
    every extracted memory; instances are built only for the rows that are kept."""
    ids = list(ids)
    if not ids:
        return []
    marks = ", ".join(["%s"] * len(ids))
    sql = f"SELECT {read_plan(Memory).columns} FROM memories_memory WHERE id IN ({marks})"
    with hot_cursor() as cursor:
        return list(cursor.execute(sql, ids).fetchall())


# The memory written just before / after one in its namespace: one seek each on the
# namespace index (SQLite ends every index with the rowid, so it is in id order).
_WRITTEN_AROUND_SQL = (
    "SELECT m.id, "
    "(SELECT p.id FROM memories_memory p WHERE p.namespace = m.namespace AND p.id < m.id "
    "ORDER BY p.id DESC LIMIT 1), "
    "(SELECT n.id FROM memories_memory n WHERE n.namespace = m.namespace AND n.id > m.id "
    "ORDER BY n.id LIMIT 1) "
    "FROM memories_memory m WHERE m.id IN ({marks})"
)


def written_around(ids: Iterable[int]) -> dict[int, tuple[int | None, int | None]]:
    """memory id -> (the previous, the next) memory written in its namespace, by id."""
    ids = sorted(ids)
    if not ids:
        return {}
    sql = _WRITTEN_AROUND_SQL.format(marks=", ".join(["%s"] * len(ids)))
    with connection.cursor() as cursor:
        return {int(m): (p, n) for m, p, n in cursor.execute(sql, ids).fetchall()}


def memories_by_id(ids: Sequence[int]) -> dict[int, Memory]:
    """id -> memory for those of ``ids`` that exist."""
    plan = read_plan(Memory)
    found = (plan.instance(Memory, row) for row in memory_rows(ids))
    return {memory.pk: memory for memory in found}


def message_get(message_id: str) -> Message | None:
    """The message with this id, any thread. Raw SQL: every message POST with a
    caller-chosen id looks it up (a replacement), ~1 ms less than the ORM."""
    plan = read_plan(Message)
    with hot_cursor() as cursor:
        sql = f"SELECT {plan.columns} FROM memories_message WHERE id = %s"
        row = cursor.execute(sql, [message_id]).fetchone()
    return None if row is None else plan.instance(Message, row)


@dataclass(frozen=True)
class ClientMessage:
    """What a client's message id means in one namespace."""

    message: Message | None  # the namespace's message with that id, if there is one
    key: str  # the key a new message with that id is stored under


def client_message(namespace: str, client_id: str) -> ClientMessage:
    """The namespace's message with the client's id ``client_id``, and the key a new one
    would take: the id itself, unless another namespace holds it (then the namespaced key,
    memories.models.namespaced_message_key). Another namespace's message is never returned,
    so its id neither collides nor shows. One indexed read of at most two rows."""
    plan = read_plan(Message)
    keys = message_keys(namespace, client_id)
    sql = (
        f"SELECT {plan.columns}, "
        "(SELECT t.namespace FROM memories_thread t WHERE t.id = thread_id) "
        "FROM memories_message WHERE id IN (%s, %s)"
    )
    with hot_cursor() as cursor:
        rows = cursor.execute(sql, keys).fetchall()
    own = [plan.instance(Message, row[:-1]) for row in rows if row[-1] == namespace]
    if own:
        return ClientMessage(own[0], own[0].pk)
    taken = any(row[-1] != namespace for row in rows)
    return ClientMessage(None, namespaced_message_key(namespace, client_id) if taken else client_id)


def extraction_status(extraction_id: int) -> str | None:
    with connection.cursor() as cursor:
        sql = "SELECT status FROM memories_extraction WHERE id = %s"
        row = cursor.execute(sql, [extraction_id]).fetchone()
    return None if row is None else str(row[0])


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
# memories.write.services need them, and services may import selectors (not the
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
    check_length(key, field="fact key", limit=MAX_FACT_KEY_LENGTH)
    if has_control_characters(key):
        raise InvalidInput("fact key must not contain control characters")
    if has_lone_surrogate(key):
        raise InvalidInput("fact key is not valid Unicode text (lone surrogate)")
    return key


def clean_message_id(message_id: object, what: str = "message id") -> str:
    if not isinstance(message_id, str) or not message_id:
        raise InvalidInput(f"{what} must be a non-empty string, got {message_id!r}")
    check_length(message_id, field=what, limit=MAX_MESSAGE_ID_LENGTH)
    if has_control_characters(message_id):
        raise InvalidInput(f"{what} must not contain control characters")
    if has_lone_surrogate(message_id):
        raise InvalidInput(f"{what} is not valid Unicode text (lone surrogate)")
    return message_id


def clean_limit(limit: object) -> int | None:
    # bool is an int subclass; True as a limit is a caller bug, not "1".
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= MAX_SQL_INT:
        raise InvalidInput(
            f"limit must be a non-negative integer (at most {MAX_SQL_INT}) or None, "
            f"got {limit!r:.40}"
        )
    return limit


def has_control_characters(text: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in text)


def live_facts(now: datetime) -> Q:
    # Expiry is checked on every read, so an expired fact disappears at once,
    # not when the garbage collector happens to run.
    return Q(expires_at__isnull=True) | Q(expires_at__gt=now)


def get_fact(ns: str, key: str) -> Fact | None:
    """The live fact at (namespace, key), or None when missing or expired."""
    namespace, key = clean_namespace(ns), clean_fact_key(key)
    return Fact.objects.filter(live_facts(timezone.now()), namespace=namespace, key=key).first()


def list_facts(ns: str) -> list[Fact]:
    """The namespace's live facts, by key."""
    namespace = clean_namespace(ns)
    return list(
        Fact.objects.filter(live_facts(timezone.now()), namespace=namespace).order_by("key")
    )


def list_all_facts() -> list[Fact]:
    """Every live fact, by namespace then key."""
    return list(Fact.objects.filter(live_facts(timezone.now())).order_by("namespace", "key"))


def get_thread(thread_id: str, *, lock: str = "") -> Thread:
    """The thread, or NotFound. ``lock``: a key for ``lock_for_write``, taken in the same
    statement when the thread is there (PostgreSQL; inside a transaction)."""
    # A read plan, not the ORM or raw(): every saved message looks its thread up
    # (the ingest hot path), and raw() maps columns to fields anew on each call.
    plan = read_plan(Thread)
    params = [clean_message_id(thread_id, "thread id")]
    sql = f"SELECT {plan.columns} FROM memories_thread WHERE id = %s"
    if lock and connection.vendor == "postgresql":
        sql = f"SELECT {plan.columns}, {LOCK_EXPRESSION} FROM memories_thread WHERE id = %s"
        params.insert(0, lock)
    with hot_cursor() as cursor:
        row = cursor.execute(sql, params).fetchone()
    if row is None:
        raise NotFound(f"thread {thread_id!r} not found")
    return plan.instance(Thread, row[: len(plan.names)])


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
    keys = message_keys(thread.namespace, message_id)
    found = Message.objects.filter(thread=thread, pk__in=keys).values_list("created_at", "id")
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
    with hot_cursor() as cursor:
        row = cursor.execute(_PREVIOUS_CONTENT_SQL, [message.thread_id, at, message.pk]).fetchone()
    return None if row is None else json.loads(row[0])


# --- The memory viewer: filtered pages in (updated_at, id) order -------------------
# Keyset pagination: a page starts after (or before) the last row seen, so page 50
# costs what page 1 costs; OFFSET would read and skip every earlier row.

VIEWER_PAGE_SIZE = 50
# Counting stops here: "1000+" tells a reviewer as much as the exact number, and
# counting costs one index entry per match (measured with `bench pages`).
COUNT_CAP = 1000
# The orders a page can be in: the viewer's last change first; the candidate queue's newest
# learnt first, which a decision and its undo leave as it was (an undone item comes back
# in its place). {order} is one of these, never user input.
ORDERS = ("updated_at", "created_at")
_AFTER_SQL = "(memories_memory.{order}, memories_memory.id) < (%s, %s)"
_BEFORE_SQL = "(memories_memory.{order}, memories_memory.id) > (%s, %s)"


@dataclass(frozen=True)
class MemoryFilter:
    """The viewer's filters; a blank value does not filter."""

    namespace: str = ""
    kind: str = ""
    status: str = ""
    scope: str = ""
    source_type: str = ""
    task_id: str = ""
    skill_id: str = ""
    procedure_subtype: str = ""

    def queryset(self) -> QuerySet[Memory]:
        columns = {
            "namespace": self.namespace,
            "kind": self.kind,
            "status": self.status,
            "scope": self.scope,
            "source_type": self.source_type,
            "source_task_id": self.task_id,
            "source_skill_id": self.skill_id,
            "procedure_subtype": self.procedure_subtype,
        }
        return Memory.objects.filter(**{name: value for name, value in columns.items() if value})


@dataclass
class MemoryPage:
    memories: list[Memory]
    older: Position | None  # where the next (older) page starts, None on the last page
    newer: Position | None  # where the previous (newer) page ends, None on the first page


def memory_page(
    *,
    filters: MemoryFilter,
    after: Position | None = None,
    before: Position | None = None,
    size: int = VIEWER_PAGE_SIZE,
    related: Sequence[str] = (),
    order: str = "updated_at",
) -> MemoryPage:
    """One page of memories, newest ``order`` (one of ``ORDERS``) first, strictly after
    (older than) ``after`` or strictly before (newer than) ``before``; ``related`` foreign
    keys are loaded in the same query."""
    if order not in ORDERS:
        raise ValueError(f"a memory page is in one of {ORDERS}, not {order!r}")
    queryset = filters.queryset().select_related(*related)
    if before is not None:
        where = _BEFORE_SQL.format(order=order)
        rows = list(
            queryset.extra(where=[where], params=before.sql_params()).order_by(order, "id")[
                : size + 1
            ]
        )
        more_newer = len(rows) > size
        memories = rows[:size][::-1]
        return MemoryPage(
            memories,
            older=Position.of(memories[-1], order) if memories else None,
            newer=Position.of(memories[0], order) if memories and more_newer else None,
        )
    if after is not None:
        where = _AFTER_SQL.format(order=order)
        queryset = queryset.extra(where=[where], params=after.sql_params())
    rows = list(queryset.order_by(f"-{order}", "-id")[: size + 1])
    memories = rows[:size]
    return MemoryPage(
        memories,
        older=Position.of(memories[-1], order) if len(rows) > size else None,
        newer=Position.of(memories[0], order) if after is not None and memories else None,
    )


def memory_count(*, filters: MemoryFilter, cap: int = COUNT_CAP) -> tuple[int, bool]:
    """How many memories match, counting no further than ``cap``: (count, capped)."""
    counted = filters.queryset().order_by().values("id")[: cap + 1].count()
    return min(counted, cap), counted > cap


# A skip scan: each step seeks the next namespace on the (namespace, ...) index, so
# listing n namespaces costs n seeks, not a read of every memory (DISTINCT does that).
# {table} is one of this module's callers' own table names, never user input.
_NAMESPACES_SQL = """
WITH RECURSIVE ns(name) AS (
    SELECT min(namespace) FROM {table}
    UNION ALL
    SELECT (SELECT min(namespace) FROM {table} WHERE namespace > ns.name)
    FROM ns WHERE ns.name IS NOT NULL
)
SELECT name FROM ns WHERE name IS NOT NULL LIMIT %s
"""
NAMESPACE_CHOICES = 100


def memory_namespaces(*, limit: int = NAMESPACE_CHOICES) -> list[str]:
    """The first ``limit`` namespaces holding memories, in order."""
    return namespaces_of(Memory, limit=limit)


def namespaces_of(model: type[Memory] | type[Fact], *, limit: int) -> list[str]:
    """The first ``limit`` namespaces in ``model``'s table, in order: one index seek each."""
    sql = _NAMESPACES_SQL.format(table=model._meta.db_table)
    with connection.cursor() as cursor:
        return [row[0] for row in cursor.execute(sql, [limit]).fetchall()]


# --- A memory's page: where it came from ---------------------------------------------


@dataclass
class Provenance:
    message: Message | None  # the message it was learnt from (None: written directly)
    thread: Thread | None
    extraction: Extraction | None  # the extraction of that message
    verdict: dict[str, Any] | None  # this memory's candidate in that extraction


def memory_provenance(memory: Memory) -> Provenance:
    message = memory.source_message
    thread = memory.source_thread or (message.thread if message is not None else None)
    extraction = verdict = None
    if memory.source_message_id is not None:
        extraction, verdict = _extraction_of(memory, memory.source_message_id)
    return Provenance(message, thread, extraction, verdict)


def _extraction_of(
    memory: Memory, message_id: str
) -> tuple[Extraction | None, dict[str, Any] | None]:
    """The source message's extraction that created (or matched) this memory."""
    records = Extraction.objects.filter(message_id=message_id).order_by("-created_at", "-id")
    for record in records[:5]:
        for verdict in record.candidates or []:
            if memory.pk in (verdict.get("memory_id"), verdict.get("matched_memory_id")):
                return record, verdict
    return next(iter(records[:1]), None), None


def candidate_verdicts(memories: Iterable[Memory]) -> dict[int, dict[str, Any]]:
    """memory id -> its candidate in its source message's extraction (one query)."""
    wanted = {m.pk: m.source_message_id for m in memories if m.source_message_id}
    found: dict[int, dict[str, Any]] = {}
    records = Extraction.objects.filter(message_id__in=set(wanted.values())).only("candidates")
    for record in records:
        for verdict in record.candidates or []:
            memory_id = verdict.get("memory_id")
            if memory_id in wanted:
                found.setdefault(memory_id, verdict)
    return found


def memory_tombstone(*, memory_id: int) -> MemoryEvent | None:
    """The event that deleted this memory, when it was deleted (or purged)."""
    ends = (MemoryEvent.Event.DELETED, MemoryEvent.Event.PURGED)
    return memory_history(memory_id=memory_id).filter(event__in=ends).last()


def memory_review_count(*, cap: int = COUNT_CAP) -> tuple[int, bool]:
    """Candidates waiting for a person, every namespace: (count, capped)."""
    return memory_count(filters=MemoryFilter(status="candidate"), cap=cap)


# --- A thread's recent end, read from the newest message back -------------------------
# Building context must not cost more as a thread grows: these read the newest
# messages page by page (the (thread, created_at, id) index, newest first) and
# stop as soon as the caller has enough.

HISTORY_PAGE = 64


def latest_message_with_key(thread_id: str, key: str) -> Message | None:
    """The newest message of the thread whose provenance has ``key`` (a summary marker)."""
    if connection.vendor == "postgresql":  # jsonb: the key's presence, null values included
        where, params = ["jsonb_exists(provenance, %s)"], [key]
    else:
        where, params = ["json_type(provenance, %s) IS NOT NULL"], [f'$."{key}"']
    found = _messages_newest_first(thread_id, where, params, limit=1)
    return found[0] if found else None


def message_position(thread_id: str, message_id: str) -> tuple[datetime, str] | None:
    """Where the thread's message ``message_id`` (a stored key or its client's id) stands."""
    namespace = Thread.objects.filter(pk=thread_id).values_list("namespace", flat=True).first()
    keys = [message_id] if namespace is None else message_keys(namespace, message_id)
    rows = Message.objects.filter(thread_id=thread_id, pk__in=keys)
    return rows.values_list("created_at", "id").first()


def newest_messages(
    thread_id: str, *, after: tuple[datetime, str] | None = None, role: str | None = None
) -> Iterator[Message]:
    """The thread's messages newest first (strictly after ``after``), a page at a time."""
    where: list[str] = []
    params: list[Any] = []
    if after is not None:
        where.append("(created_at, id) > (%s, %s)")
        params += [connection.ops.adapt_datetimefield_value(after[0]), after[1]]
    if role is not None:
        where.append("role = %s")
        params.append(role)
    page = _messages_newest_first(thread_id, where, params, limit=HISTORY_PAGE)
    while page:
        yield from page
        if len(page) < HISTORY_PAGE:
            return
        last = page[-1]
        before = [connection.ops.adapt_datetimefield_value(last.created_at), last.pk]
        page = _messages_newest_first(
            thread_id, [*where, "(created_at, id) < (%s, %s)"], params + before, HISTORY_PAGE
        )


def _messages_newest_first(
    thread_id: str, where: list[str], params: list[Any], limit: int
) -> list[Message]:
    # Raw SQL on the (thread, created_at, id) index: every context build pages
    # through the thread's recent end, and the ORM's compile + row conversion
    # was most of its cost (`bench load`: a context returns ~200 short messages).
    plan = read_plan(Message)
    conditions = " AND ".join(["thread_id = %s", *where])
    sql = (
        f"SELECT {plan.columns} FROM memories_message WHERE {conditions} "
        "ORDER BY created_at DESC, id DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        rows = cursor.execute(sql, [thread_id, *params, limit]).fetchall()
    return [plan.instance(Message, row) for row in rows]


# --- The conversation before a message (extraction reads a message with it) ---------------

TURNS_BEFORE = 4  # the previous user and assistant turns, and the pair before them
RECENT_MEMORIES = 20  # what a correction can point back to ("I meant Wednesday")


def turns_before(message: Message) -> list[tuple[str, Any]]:
    """The ``TURNS_BEFORE`` messages before ``message`` in its thread, oldest first, as
    (role, content): one seek on the (thread, created_at, id) index, newest first. Raw SQL
    on the write path: the ORM's compile and row conversion were ~0.7 ms of a short reply's
    extraction (``bench ingest``), the read itself ~0.02."""
    at = connection.ops.adapt_datetimefield_value(message.created_at)
    with hot_cursor() as cursor:
        rows = cursor.execute(
            _TURNS_BEFORE_SQL, [message.thread_id, at, message.pk, TURNS_BEFORE]
        ).fetchall()
    return [(role, json.loads(content)) for role, content in reversed(rows)]


_TURNS_BEFORE_SQL = (
    "SELECT p.role, p.content FROM memories_message p WHERE p.thread_id = %s "
    "AND (p.created_at, p.id) < (%s, %s) ORDER BY p.created_at DESC, p.id DESC LIMIT %s"
)


# The same turns as a subquery of a statement that reads the message aliased m (the
# extraction's claim on PostgreSQL): a JSON array of [role, content as JSON text], oldest
# first, or NULL when the message opens its thread.
TURNS_OF_M = (
    "SELECT json_agg(json_build_array(t.role, t.content::text) ORDER BY t.created_at, t.id) "
    "FROM (SELECT p.role, p.content, p.created_at, p.id FROM memories_message p "
    "WHERE p.thread_id = m.thread_id AND (p.created_at, p.id) < (m.created_at, m.id) "
    f"ORDER BY p.created_at DESC, p.id DESC LIMIT {TURNS_BEFORE}) t"
)


def turns_of_json(value: Any) -> list[tuple[str, Any]]:
    """The turns ``TURNS_OF_M`` read, decoded: (role, content) oldest first."""
    if value is None:
        return []
    rows = json.loads(value) if isinstance(value, str | bytes) else value
    return [(role, json.loads(content)) for role, content in rows]


def recent_memories(namespace: str) -> list[tuple[int, str, str]]:
    """The namespace's ``RECENT_MEMORIES`` newest live memories, oldest first, as (id, kind,
    content): the (namespace, id) index."""
    rows = (
        Memory.objects.filter(namespace=namespace, status__in=("candidate", "active", "stale"))
        .order_by("-id")
        .values_list("id", "kind", "content")[:RECENT_MEMORIES]
    )
    return list(reversed(rows))
