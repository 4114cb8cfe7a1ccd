"""Write operations on memories, used by the JSON API, the dashboard and the CLI."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection, transaction
from django.db.models import JSONField, Model, Value
from django.utils import timezone

from memories.extraction.firewall import redacted, screened
from memories.models import (
    Extraction,
    Fact,
    FactEvent,
    Memory,
    MemoryEvent,
    MemoryScope,
    MemoryStatus,
    Message,
    MessageRole,
    SourceType,
    Thread,
    message_keys,
    new_id,
)
from memories.store import vector_index
from memories.store.selectors import (
    clean_fact_key,
    clean_message_id,
    clean_namespace,
    client_message,
    get_thread,
)
from memories.write.forgetting import forget_facts, forget_memories, forget_messages, forget_thread
from spaceduck.core.db.fast import fast_writes, hot_cursor, insert_statement, inserted
from spaceduck.core.db.locks import lock_for_write
from spaceduck.core.errors import Conflict, InvalidInput
from spaceduck.core.limits import (
    check_datetime,
    check_json_value,
    check_length,
    check_size,
    check_text,
    json_size,
)
from spaceduck.core.namespaces import normalize_namespace
from spaceduck.core.providers import get_embedder

_SPACES = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s.!?;,]+$")


def content_hash(content: str) -> str:
    """Hash of the normalised content: case, accents' composition, spacing, end punctuation."""
    text = unicodedata.normalize("NFKC", content).casefold()
    text = _TRAILING.sub("", _SPACES.sub(" ", text).strip())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embedding_text(memory: Memory) -> str:
    """The text a memory is embedded from (one place, so reindex and writes agree)."""
    return memory.content


# Raw, because history rows are written on every memory write (the ingest hot
# path) and the ORM's INSERT compilation costs ~1 ms each here.
_HISTORY_SQL = (
    "INSERT INTO memories_memoryevent (memory_id, namespace, event, actor, reason, data, "
    "created_at) VALUES {rows}"
)
_HISTORY_ROW = "(%s, %s, %s, %s, %s, %s, %s)"


@dataclass(frozen=True)
class HistoryEvent:
    """One history row to write (``memory_history_records``)."""

    memory: Memory
    event: str
    reason: str = ""
    data: dict[str, Any] | None = None


def memory_history_record(
    *, memory: Memory, event: str, actor: str, reason: str = "", data: dict[str, Any] | None = None
) -> None:
    memory_history_records([HistoryEvent(memory, event, reason, data)], actor=actor)


def memory_history_records(events: Sequence[HistoryEvent], *, actor: str) -> None:
    """Several history rows in one INSERT: one round trip on PostgreSQL, where a store that
    supersedes writes one row per memory it touches."""
    if not events:
        return
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    params: list[Any] = []
    for e in events:
        payload = json.dumps(e.data or {}, ensure_ascii=False)
        params += [e.memory.pk, e.memory.namespace, str(e.event), actor, e.reason, payload, now]
    sql = _HISTORY_SQL.format(rows=", ".join([_HISTORY_ROW] * len(events)))
    with hot_cursor() as cursor:
        cursor.execute(sql, params)


def memory_create(
    *,
    namespace: str,
    kind: str,
    content: str,
    actor: str,
    title: str = "",
    summary: str = "",
    tags: list[str] | None = None,
    context: str = "",
    importance: float = 0.5,
    confidence: float = 0.8,
    status: str = MemoryStatus.ACTIVE,
    scope: str = MemoryScope.GLOBAL,
    scope_id: str = "",
    procedure_subtype: str = "",
    slot: str = "",
    source_type: str = SourceType.API,
    occurred_at: datetime | None = None,
    reason: str = "",
) -> Memory:
    """Insert a memory with its vector (embedded before the write transaction starts)."""
    vector = get_embedder().embed([content])[0]
    now = timezone.now()
    with transaction.atomic():
        memory = Memory.objects.create(
            namespace=normalize_namespace(namespace),
            kind=kind,
            title=title,
            content=content,
            summary=summary,
            tags=tags or [],
            context=context,
            importance=importance,
            confidence=confidence,
            status=status,
            scope=scope,
            scope_id=scope_id,
            procedure_subtype=procedure_subtype,
            slot=slot,
            source_type=source_type,
            content_hash=content_hash(content),
            occurred_at=occurred_at,
            created_at=now,
            updated_at=now,
            last_seen_at=now,
        )
        vector_index.upsert([(memory.pk, memory.namespace, vector)], new=True)
        memory_history_record(
            memory=memory, event=MemoryEvent.Event.CREATED, actor=actor, reason=reason
        )
    return memory


def memory_delete(*, memory: Memory, actor: str, reason: str = "") -> None:
    """Delete a memory: its history becomes a tombstone (who, when, why, its kind; never
    what it said), the copies other rows keep of its text go (``forgetting``); triggers
    remove its FTS and vector rows."""
    forget_memories([memory], actor=actor, reason=reason)


# --- Facts, threads and messages ------------------------------------------------
# Names and positional signatures are fixed by the issue (``set_fact(ns, key,
# value, ...)``). A fact write reads the clock once, so its ``updated_at``,
# ``expires_at`` and (on insert) ``created_at`` always agree.

MAX_THREAD_TITLE_LENGTH = 500
# A TTL longer than a century is a fact that should not expire; far longer ones
# would push expires_at past what a datetime holds.
MAX_TTL_MS = 100 * 366 * 24 * 3600 * 1000
# SQLite's limit on bound parameters is 999 in old builds (32766 in new ones);
# chunks of 500 stay well under either, with room for the query's own params.
DELETE_CHUNK_SIZE = 500
MESSAGE_ROLES: tuple[str, ...] = tuple(MessageRole.values)
# Provenance is any JSON object; these well-known keys are type-checked.
_PROVENANCE_TYPES: dict[str, tuple[type, str]] = {
    "run_id": (str, "a string"),
    "node_id": (str, "a string"),
    "iteration": (int, "a non-negative integer"),
}


def set_fact(
    ns: str,
    key: str,
    value: Any,
    ttl_ms: int | None = None,
    provenance: dict[str, Any] | None = None,
    *,
    actor: str = "",
) -> Fact:
    """Upsert the fact at (namespace, key); the last write wins.

    ``created_at`` survives an upsert; ``updated_at`` is refreshed and the TTL
    counts from it. An upsert without ``ttl_ms`` clears the TTL, and provenance
    is replaced, never merged: the row always describes the latest write only.
    Every write is recorded (a FactEvent: who, when, which parts changed; no value).
    """
    namespace, key = clean_namespace(ns), clean_fact_key(key)
    stored = _json_copy(value, "fact value")
    check_size(
        json_size(stored),
        limit=settings.MAX_FACT_VALUE_BYTES,
        field="fact value (as compact JSON)",
        setting="SPACEDUCK_MAX_FACT_VALUE_BYTES",
    )
    ttl_ms = _clean_ttl(ttl_ms)
    provenance = _clean_provenance(provenance)
    # A fact is what its writer asks to keep: a credential is refused, never marked.
    screened("fact", {"value": stored, "provenance": provenance})
    now = timezone.now()
    expires_at = _expiry(now, ttl_ms)
    # IMMEDIATE transactions take SQLite's write lock at BEGIN, so concurrent
    # upserts of one key queue up instead of racing between read and write;
    # PostgreSQL gets the same from an advisory lock on the key.
    with transaction.atomic():
        lock_for_write(f"fact:{namespace}:{key}")
        fact = Fact.objects.filter(namespace=namespace, key=key).first()
        created = fact is None
        if fact is None:
            fact = Fact(namespace=namespace, key=key, created_at=now)
        changed = _fact_changes(fact, stored, ttl_ms, provenance, created=created)
        fact.value = _storable(stored)
        fact.ttl_ms, fact.expires_at = ttl_ms, expires_at
        fact.provenance, fact.updated_at = provenance, now
        fact.save()
        FactEvent.objects.create(
            fact_id=fact.pk,
            namespace=namespace,
            event=FactEvent.Event.CREATED if created else FactEvent.Event.EDITED,
            actor=actor,
            data=changed,
            created_at=now,
        )
    fact.value = stored
    return fact


def _fact_changes(
    fact: Fact, value: Any, ttl_ms: int | None, provenance: Any, *, created: bool
) -> dict[str, Any]:
    """What a write changes, as its FactEvent keeps it: the names of the parts that
    changed and the TTL's numbers (no value: see FactEvent)."""
    if created:
        return {"changed": ["value"], "ttl_ms": {"from": None, "to": ttl_ms}}
    changed = [
        name
        for name, before, after in (
            ("value", fact.value, value),
            ("ttl_ms", fact.ttl_ms, ttl_ms),
            ("provenance", fact.provenance, provenance),
        )
        if before != after
    ]
    data: dict[str, Any] = {"changed": changed}
    if "ttl_ms" in changed:
        data["ttl_ms"] = {"from": fact.ttl_ms, "to": ttl_ms}
    return data


# Who removed a fact whose TTL ran out (its tombstone's ``deleted_by``).
TTL_ACTOR = "ttl"


def delete_fact(ns: str, key: str, *, actor: str = "", reason: str = "") -> bool:
    """Remove the fact, leaving a tombstone; a missing key is a no-op. True when a row was
    removed."""
    namespace, key = clean_namespace(ns), clean_fact_key(key)
    rows = Fact.objects.filter(namespace=namespace, key=key)
    return forget_facts(rows, actor=actor, reason=reason) > 0


def delete_expired_facts() -> int:
    """Reclaim expired rows (reads hide them already), a tombstone each ("ttl"). Returns
    how many were removed."""
    expired = Fact.objects.filter(expires_at__lte=timezone.now())
    return forget_facts(expired, actor=TTL_ACTOR, reason="its time to live ran out")


def create_thread(ns: str, title: str | None = None, *, actor: str = "") -> Thread:
    """A new thread of ``ns``; ``actor`` (who starts it) is what /activity/ shows."""
    namespace = clean_namespace(ns)
    now = timezone.now()
    title = _fit_title(screened("thread", {"title": _clean_title(title)})["title"])
    return Thread.objects.create(
        namespace=namespace, title=title, created_by=actor, created_at=now, updated_at=now
    )


def _fit_title(title: str) -> str:
    # A mark ("[redacted: pin]") may be longer than what it replaced: the column's limit
    # still holds (PostgreSQL would refuse the row).
    return title[:MAX_THREAD_TITLE_LENGTH]


def delete_thread(thread_id: str, *, actor: str = "", reason: str = "") -> None:
    """Delete the thread and all its messages together (NotFound when missing), leaving a
    tombstone; the extraction records and memories learnt from them lose their text."""
    with transaction.atomic():
        forget_thread(get_thread(thread_id), actor=actor, reason=reason)


M = TypeVar("M", bound=Model)

# Raw, because every saved message runs them (the ingest hot path), where the
# ORM's query compilation costs ~1 ms each (measured with `bench ingest`).
_NEWEST_MESSAGE_SQL = (
    "SELECT created_at FROM memories_message WHERE thread_id = %s "
    "ORDER BY created_at DESC, id DESC LIMIT 1"
)
_TOUCH_THREAD_SQL = "UPDATE memories_thread SET updated_at = %s WHERE id = %s"
# _append_time's answer as an expression (PostgreSQL: its GREATEST skips a NULL).
_APPEND_TIME_SQL = (
    "GREATEST(%s, (SELECT created_at + interval '1 microsecond' FROM memories_message "
    "WHERE thread_id = %s ORDER BY created_at DESC, id DESC LIMIT 1))"
)


@dataclass(frozen=True)
class MessageDraft:
    """A message's checked input, ready for ``message_write``."""

    thread_id: str
    message_id: str
    replaces: bool  # a caller-chosen id: it may name a message to replace
    role: str
    content: Any
    created_at: datetime | None
    provenance: dict[str, Any] | None
    now: datetime  # read before the write transaction, so waiting for the lock is not counted


def save_message(
    thread_id: str,
    role: str,
    content: Any,
    id: str | None = None,
    created_at: datetime | None = None,
    provenance: dict[str, Any] | None = None,
) -> Message:
    """Append a message, or replace the one with this ``id`` in the same thread.

    A replacement takes the new role, content and provenance but keeps its
    original ``created_at`` (the given one is ignored), so it keeps its place in
    the conversation. An id already used by another thread is a Conflict.
    ``created_at`` must be timezone-aware: guessing a zone for a naive time
    would silently reorder the conversation.
    """
    draft = message_draft(thread_id, role, content, id, created_at, provenance)
    with transaction.atomic():
        return message_write(draft)


def message_draft(
    thread_id: str,
    role: str,
    content: Any,
    id: str | None = None,
    created_at: datetime | None = None,
    provenance: dict[str, Any] | None = None,
) -> MessageDraft:
    """``save_message``'s checks, which need no database (InvalidInput when one fails)."""
    thread_id = clean_message_id(thread_id, "thread id")
    role = _clean_role(role)
    stored = _json_copy(content, "message content")
    if stored is None:
        raise InvalidInput("message content must be text or a JSON value other than null")
    provenance = _clean_provenance(provenance)
    # Credentials marked in the content and the provenance (SPACEDUCK_REDACT_SECRETS).
    kept = screened("message", {"content": stored, "provenance": provenance})
    stored, provenance = kept["content"], kept["provenance"]
    # The limit also bounds the worker's extraction time per message.
    check_size(
        json_size(stored),
        limit=settings.MAX_MESSAGE_BYTES,
        field="message content",
        setting="SPACEDUCK_MAX_MESSAGE_BYTES",
    )
    message_id = new_id() if id is None else clean_message_id(id)
    created_at = _clean_created_at(created_at)
    return MessageDraft(
        thread_id, message_id, id is not None, role, stored, created_at, provenance, timezone.now()
    )


def message_write(draft: MessageDraft) -> Message:
    """``save_message``'s writes, inside the caller's transaction.

    For callers that already hold one (``message_ingest`` writes the message and
    its Extraction together): a nested atomic block would only add a savepoint.
    """
    return message_write_with(draft, None)[0]


def message_write_with(
    draft: MessageDraft, then: Callable[[Message], M] | None
) -> tuple[Message, M | None]:
    """``message_write``, and the row ``then`` builds for the message inserted with it
    (``message_ingest``'s Extraction): a new message, the thread's touch and that row are
    one statement on PostgreSQL (``fast_writes``), where each was a round trip."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("message_write needs an open transaction (transaction.atomic)")
    # An append's lock comes with the thread's read (a replacement keeps its time and
    # needs none, but whether the id is one is known only after this read).
    appends = draft.created_at is None
    thread = get_thread(draft.thread_id, lock=_thread_lock(draft.thread_id) if appends else "")
    # A fresh uuid cannot exist yet: only a caller-chosen id may be a replacement. The id
    # is looked up in the thread's namespace only: another namespace's message with the
    # same id is neither replaced nor told of (it is stored under its own key).
    message, key = None, draft.message_id
    if draft.replaces:
        found = client_message(thread.namespace, draft.message_id)
        message, key = found.message, found.key
    if message is not None and message.thread_id != thread.pk:
        # The same namespace: its reader may see that thread anyway.
        raise Conflict(f"message id {draft.message_id!r} already belongs to another thread")
    is_new = message is None
    # PostgreSQL: an append's time is computed by its INSERT (_APPEND_TIME_SQL), a round
    # trip less. The INSERT is a statement after the lock's, so it reads the thread's
    # newest message as _append_time would under the lock.
    computed = is_new and appends and connection.vendor == "postgresql"
    if message is None:
        created_at = draft.created_at or draft.now
        if not computed:
            created_at = draft.created_at or _append_time(thread, draft.now, locked=True)
        message = Message(id=key, thread=thread, created_at=created_at)
    message.role, message.content, message.provenance = draft.role, draft.content, draft.provenance
    if not is_new:
        message.save()
    now = connection.ops.adapt_datetimefield_value(draft.now)
    writes = [(_TOUCH_THREAD_SQL, [now, thread.pk])]
    row = None if then is None else then(message)
    if row is not None:
        writes.append(insert_statement(row))  # w1 below (fast_writes)
    if computed:
        time = (_APPEND_TIME_SQL, [now, thread.pk])
        back = '"created_at", (SELECT id FROM w1)' if row is not None else '"created_at"'
        last = fast_writes(
            *writes, insert_statement(message, computed=("created_at", time), returning=back)
        )
        message.created_at = last[0]
        inserted(message, message.pk)
        return message, None if row is None else inserted(row, last[1])
    if is_new:
        writes.insert(0, insert_statement(message))
    last = fast_writes(*writes)
    if is_new:
        inserted(message, message.pk)
    return message, None if row is None else inserted(row, last[0])


def _thread_lock(thread_id: str) -> str:
    """The lock of appends to one thread (``_append_time``)."""
    return f"thread:{clean_message_id(thread_id, 'thread id')}"


def delete_messages(
    thread_id: str, ids: Iterable[str], *, actor: str = "", reason: str = ""
) -> int:
    """Delete this thread's messages among ``ids``; returns how many were deleted.

    Ids of other threads and unknown ids are ignored. Any number of ids works:
    they are deleted in chunks that fit SQLite's bound-parameter limit, all in
    one transaction. Each leaves a tombstone (``forgetting.forget_messages``).
    """
    unique = _clean_ids(ids)
    with transaction.atomic():
        thread = get_thread(thread_id)
        # A client's id, or a stored key (the admin's), of this thread's messages.
        keys = [key for one in unique for key in message_keys(thread.namespace, one)]
        deleted = forget_messages(thread, keys, actor=actor, reason=reason)
        if deleted:
            Thread.objects.filter(pk=thread.pk).update(updated_at=timezone.now())
    return deleted


def _json_copy(value: Any, what: str) -> Any:
    """The value as it will read back from the database, or InvalidInput.

    ``allow_nan=False`` because NaN and Infinity are not JSON. Round-tripping
    also turns tuples into lists and non-string keys into strings up front, so
    the caller gets back exactly what later reads return. Then every string must
    be valid Unicode text and the nesting shallow (spaceduck.core.limits), as the
    JSON API's edge requires of request bodies.
    """
    try:
        copy = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"{what} is not JSON-serialisable: {exc}") from None
    return check_json_value(copy, field=what)


def _storable(value: Any) -> Any:
    # A bare None would be SQL NULL, which the non-null column rejects; JSON null
    # is a valid fact value, so store it explicitly.
    return Value(None, JSONField()) if value is None else value


def _clean_ttl(ttl_ms: object) -> int | None:
    if ttl_ms is None:
        return None
    if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms < 0:
        raise InvalidInput(f"ttl_ms must be a non-negative integer or None, got {ttl_ms!r}")
    if ttl_ms > MAX_TTL_MS:
        raise InvalidInput(f"ttl_ms {ttl_ms} is too large: at most {MAX_TTL_MS} (a century)")
    return ttl_ms


def _expiry(now: datetime, ttl_ms: int | None) -> datetime | None:
    if ttl_ms is None:
        return None
    try:
        return now + timedelta(milliseconds=ttl_ms)
    except OverflowError:
        raise InvalidInput(f"ttl_ms {ttl_ms} is too large") from None


def _clean_provenance(provenance: object) -> dict[str, Any] | None:
    if provenance is None:
        return None
    if not isinstance(provenance, dict):
        raise InvalidInput(f"provenance must be a JSON object or None, got {provenance!r}")
    for name, (expected, description) in _PROVENANCE_TYPES.items():
        field = provenance.get(name)
        if field is None:
            continue
        bad_type = isinstance(field, bool) or not isinstance(field, expected)
        if bad_type or (expected is int and field < 0):
            raise InvalidInput(f"provenance {name} must be {description}, got {field!r}")
    copy: dict[str, Any] = _json_copy(provenance, "provenance")
    return copy


def _clean_title(title: object) -> str:
    if title is None:
        return ""
    if not isinstance(title, str):
        raise InvalidInput(f"thread title must be a string or None, got {title!r}")
    title = check_text(title, field="thread title").strip()
    check_length(title, field="thread title", limit=MAX_THREAD_TITLE_LENGTH)
    if any(ord(ch) < 32 for ch in title):
        raise InvalidInput("thread title must be one line without control characters")
    return title


def _clean_role(role: object) -> str:
    if role not in MESSAGE_ROLES:
        raise InvalidInput(f"role must be one of {', '.join(MESSAGE_ROLES)}; got {role!r}")
    return str(role)


def _clean_created_at(created_at: object) -> datetime | None:
    if created_at is None:
        return None
    if not isinstance(created_at, datetime):
        raise InvalidInput(f"created_at must be a datetime, got {created_at!r}")
    if timezone.is_naive(created_at):
        raise InvalidInput("created_at must be timezone-aware (e.g. 2024-05-01T12:00:00Z)")
    return check_datetime(created_at, field="created_at")


def _append_time(thread: Thread, now: datetime, *, locked: bool = False) -> datetime:
    """``now``, nudged past the thread's newest message.

    Messages saved without ``created_at`` are appends; a clock that steps back
    (or two saves within one microsecond) must not order them before what is
    already there, since ties would fall back to the random id. ``locked``: the
    caller holds the thread's lock already (``get_thread(..., lock=...)``).
    """
    if not locked:
        lock_for_write(_thread_lock(thread.pk))  # appends to one thread in turn (PostgreSQL)
    with hot_cursor() as cursor:
        row = cursor.execute(_NEWEST_MESSAGE_SQL, [thread.pk]).fetchone()
    newest = None if row is None else row[0].replace(tzinfo=UTC)  # stored as naive UTC
    if newest is not None and newest >= now:
        return newest + timedelta(microseconds=1)
    return now


def _clean_ids(ids: object) -> list[str]:
    # A lone string is iterable too; deleting its characters is never meant.
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise InvalidInput(f"ids must be a list of message ids, got {ids!r:.80}")
    unique: dict[str, None] = {}
    for message_id in ids:
        if not isinstance(message_id, str):
            raise InvalidInput(f"every message id must be a string, got {message_id!r:.80}")
        unique[check_text(message_id, field="message id")] = None
    return list(unique)


def redact_stored(
    *, batch: int = 500, dry_run: bool = False, on_batch: Any = None
) -> tuple[int, int, int]:
    """Redact the credentials of messages (content and provenance) and thread titles stored
    before redaction (or with it off), and the candidate contents of extraction records:
    (messages changed, records changed, threads changed). Safe to interrupt and run again:
    each batch is committed, and redacted text stays as it is. ``on_batch(n)`` is called
    after each batch with the rows read (a progress bar)."""
    messages = _redact_rows(Message, ("content", "provenance"), batch, dry_run, on_batch)
    records = _redact_rows(Extraction, ("candidates",), batch, dry_run, on_batch)
    threads = _redact_rows(Thread, ("title",), batch, dry_run, on_batch)
    return messages, records, threads


def _redact_rows(
    model: Any, columns: tuple[str, ...], batch: int, dry_run: bool, on_batch: Any
) -> int:
    changed = 0
    after: Any = None
    while True:
        rows = model.objects.order_by("pk")
        if after is not None:
            rows = rows.filter(pk__gt=after)
        page = list(rows.values_list("pk", *columns)[:batch])
        if not page:
            return changed
        with transaction.atomic():
            for pk, *values in page:
                clean = {}
                for column, value in zip(columns, values, strict=True):
                    redacted_value, shapes = redacted(value)
                    if shapes:
                        clean[column] = redacted_value
                if model is Thread and "title" in clean:
                    clean["title"] = _fit_title(clean["title"])
                if clean:
                    changed += 1
                    if not dry_run:
                        model.objects.filter(pk=pk).update(**clean)
        after = page[-1][0]
        if on_batch is not None:
            on_batch(len(page))
