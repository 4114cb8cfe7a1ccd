"""Activity: every decision and change by people and agents, newest first.

Built from the records the project already keeps, not from a table of its own (a second
record of each change could disagree with the first): a memory's history, conflicts
(opened, decided, and from the memories' history each change a decision made and its undo
put back), notes (written, decided), facts (each write), threads (started, deleted; their
messages deleted), deletions of facts, tokens (created, revoked), erasures and settings
changes.
Each of those is a *stream*: one table and one timestamp column. A page reads at most
``size + 1`` rows of each stream by keyset (newest first) and merges them, so page 50
costs what page 1 costs whatever the tables hold.

Where the streams meet, the order is (time, stream, id), all newest first: the
position of a row (``ActivityPosition``) names all three, which makes it unique across
tables with ids of their own.

Nothing here shows what a memory, note or fact says: who, what, when and where it is.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, ClassVar, Self
from urllib.parse import quote, urlencode

from django.db.models import BooleanField, CharField, Func, Model, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.lookups import GreaterThanOrEqual, LessThan
from django.urls import reverse

from memories.models import Conflict, Deletion, FactEvent, MemoryEvent, Thread
from notes.models import Note
from spaceduck.core.errors import InvalidInput
from spaceduck.core.ids import client_id_of, is_qualified
from spaceduck.core.limits import LATEST_DATETIME, MAX_SQL_INT
from spaceduck.models import ApiToken, NamespaceErasure, SettingChange
from spaceduck.ops.erasure import describe

PAGE_SIZE = 50
EXPORT_CHUNK = 500
REASON_CHARS = 140
KINDS: tuple[str, ...] = (
    "memory",
    "conflict",
    "note",
    "fact",
    "thread",
    "token",
    "erase",
    "setting",
)

# The kinds of actor the project writes before a colon (``staff:<user>``, ``token:<name>``,
# ``extraction:<id>``): an actor filter without a colon also finds the name under each.
ACTOR_KINDS = ("staff", "token", "extraction")
# An actor filter's "<kind>:*" matches, read by the actor index and sorted when fewer than
# this many rows hold them; when more, by the time index (matches are then dense enough
# that a page is found after a short walk, where a sort would take all of them).
_DENSE = 2_000

# memories.models.CONFLICT_HISTORY with its patterns in the SQL: SQLite matches a partial
# index's LIKE only to a query's LIKE of the same constant, never of a bound parameter (the
# Q's ``reason LIKE ?`` walked every event: 25 ms at 40k). A test checks that they agree.
_CONFLICT_SQL = (
    "(\"memories_memoryevent\".\"reason\" LIKE 'conflict %%' ESCAPE '\\'"
    " OR \"memories_memoryevent\".\"reason\" LIKE 'undo of conflict %%' ESCAPE '\\')"
)
CONFLICT_ROWS = Q(RawSQL(_CONFLICT_SQL, (), output_field=BooleanField()))

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST_MICROS = (LATEST_DATETIME - _EPOCH) // timedelta(microseconds=1)


@dataclass(frozen=True)
class ActivityPosition:
    """Where a row stands: (time, stream, id), written ``<µs since 1970>-<stream>-<id>``.
    An id is an integer, or the text key of a row that has no integer one (a thread),
    written ``s`` and its UTF-8 in unpadded base64url. Text keys compare as the database
    orders them: by code point, which PostgreSQL's "C" collation (spaceduck.W003) and
    SQLite's BINARY both are.

    As memories.store.positions.Position, any well-formed position is a place in the
    order (held at the last storable time and id), anything else is InvalidInput.
    """

    at: datetime
    stream: int
    id: int | str

    _shape: ClassVar[re.Pattern[str]] = re.compile(
        r"([0-9]{1,19})-([0-9]{1,3})-([0-9]{1,19}|s[A-Za-z0-9_-]{0,400})", re.ASCII
    )

    def encode(self) -> str:
        at = (self.at - _EPOCH) // timedelta(microseconds=1)
        if isinstance(self.id, str):
            text = base64.urlsafe_b64encode(self.id.encode()).decode().rstrip("=")
            return f"{at}-{self.stream}-s{text}"
        return f"{at}-{self.stream}-{self.id}"

    @classmethod
    def decode(cls, raw: str) -> Self:
        match = cls._shape.fullmatch(raw)
        key = _text_key(match[3][1:]) if match is not None and match[3][0] == "s" else None
        if match is None or key == "":
            raise InvalidInput(f"page cursor {raw[:40]!r} is not one this service wrote")
        at = _EPOCH + timedelta(microseconds=min(int(match[1]), _LATEST_MICROS))
        return cls(at, int(match[2]), key if key is not None else min(int(match[3]), MAX_SQL_INT))

    def key(self) -> tuple[datetime, int, int | str]:
        return (self.at, self.stream, self.id)

    def older(self, stream: int, column: str, key: str = "id") -> Q:
        """A stream's rows after this position in newest-first (time, stream, id) order."""
        if stream < self.stream:
            return Q(**{f"{column}__lte": self.at})
        if stream > self.stream:
            return Q(**{f"{column}__lt": self.at})
        return Q(**{f"{column}__lt": self.at}) | Q(**{column: self.at, f"{key}__lt": self.id})

    def newer(self, stream: int, column: str, key: str = "id") -> Q:
        """A stream's rows before this position in newest-first order."""
        if stream > self.stream:
            return Q(**{f"{column}__gte": self.at})
        if stream < self.stream:
            return Q(**{f"{column}__gt": self.at})
        return Q(**{f"{column}__gt": self.at}) | Q(**{column: self.at, f"{key}__gt": self.id})


def _text_key(text: str) -> str:
    """A text key from its base64url, or "" when it is not one this service wrote."""
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return ""


@dataclass(frozen=True)
class Entry:
    """One change: ``actor`` is "" where the record names no one (the engine's own
    decisions, a fact's write, which keeps no writer)."""

    at: datetime
    kind: str
    action: str
    actor: str
    namespace: str
    summary: str
    href: str
    position: ActivityPosition

    def as_dict(self) -> dict[str, str]:
        """The export's fields (CSV columns and JSON Lines keys), in this order."""
        return {
            "at": self.at.astimezone(UTC).isoformat(),
            "kind": self.kind,
            "action": self.action,
            "actor": self.actor,
            "namespace": self.namespace,
            "summary": self.summary,
            "url": self.href,
        }


# What a stream makes of one row (a dict of its ``fields``): (action, summary, link).
Describe = Callable[[dict[str, Any]], tuple[str, str, str]]


@dataclass(frozen=True)
class Stream:
    kind: str
    model: type[Model]
    at: str  # the timestamp column
    actor: str | None  # the column naming who; None: the record names no one
    namespace: str | None  # None: not a namespace's (tokens, settings)
    fields: tuple[str, ...]
    describe: Describe
    where: Q = field(default_factory=Q)
    # The actor column leads an index (actor, time): an actor filter is read by it.
    actor_indexed: bool = False
    # What orders rows of equal time: the primary key (a thread's is text).
    key: str = "id"
    # Few rows (a partial index of their own, by time): always walked by time, the actor
    # and namespace checked on each. Another index (an agent's thousands of events, or a
    # namespace's) would be walked to its end for the few rows of this stream among them.
    by_time: bool = False

    def column(self, name: str) -> str:
        """What a filter on the column ``name`` names (see ``rows``)."""
        return f"{name}_unindexed" if self.by_time else name

    def rows(self) -> QuerySet[Any]:
        rows = self.model._default_manager.all()
        if self.by_time:
            hidden = {self.column(c): _Unindexed(c) for c in (self.actor, self.namespace) if c}
            rows = rows.alias(**hidden)
        return rows


class _Unindexed(Func):
    """A column SQLite cannot look up by an index (``+column``: the same value). On
    PostgreSQL the plain column: its planner weighs the indexes by their statistics."""

    template = "+%(expressions)s"
    output_field = CharField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return compiler.compile(self.source_expressions[0])


@dataclass(frozen=True)
class ActivityFilter:
    """A blank value does not filter. ``start``/``end``: both included."""

    actor: str = ""
    namespace: str = ""
    kind: str = ""
    start: datetime | None = None
    end: datetime | None = None

    def streams(self) -> list[tuple[int, Stream]]:
        """(rank, stream) of the streams that can hold a matching row."""
        return [
            (rank, stream)
            for rank, stream in enumerate(STREAMS)
            if (not self.kind or stream.kind == self.kind)
            and (not self.actor or stream.actor is not None)
            and (not self.namespace or stream.namespace is not None)
        ]

    def q(self, stream: Stream) -> Q:
        """The filters but the actor's (``actors`` gives those)."""
        where = stream.where
        if self.namespace and stream.namespace is not None:
            where &= Q(**{stream.column(stream.namespace): self.namespace})
        if self.start is not None:
            where &= Q(**{f"{stream.at}__gte": self.start})
        if self.end is not None:
            where &= Q(**{f"{stream.at}__lte": self.end})
        return where

    def actors(self, stream: Stream, dense: dict[type[Model], bool]) -> list[Q]:
        """The actor filter on ``stream``, as conditions read one query each (their rows
        merged): ``[Q()]`` without one. With a colon it is one actor; without, also a kind
        of actor (``staff`` finds ``staff:*``) and a name under each kind (``admin`` finds
        ``staff:admin``, ``token:admin``, ``extraction:admin``).

        Each exact actor walks the (actor, time) index from the newest, as one actor
        always did; ``actor IN (...)`` would sort every row of them all (``bench`` holds
        most of the bench's history). A kind's range is read by that index when it holds
        few rows, else by the time index (see _DENSE)."""
        if not self.actor or stream.actor is None:
            return [Q()]
        column, actor = stream.column(stream.actor), self.actor
        exact = [actor] if ":" in actor else [actor, *(f"{k}:{actor}" for k in ACTOR_KINDS)]
        kind = (
            Q(**{f"{column}__gte": f"{actor}:", f"{column}__lt": f"{actor};"})  # ';' follows ':'
            if ":" not in actor
            else None
        )
        if not stream.actor_indexed:
            # No index to walk: one scan with every condition.
            either = Q(**{f"{column}__in": exact})
            return [either | kind if kind is not None else either]
        terms = [Q(**{column: one}) for one in exact]
        if kind is not None:
            if stream.model not in dense:  # once a page (the memory streams share a table)
                held = stream.model._default_manager.filter(kind).order_by().values_list("pk")
                dense[stream.model] = len(held[:_DENSE]) == _DENSE
            # The same range on +actor, which no index serves: SQLite walks the time index.
            hidden = _Unindexed(column)
            by_time = Q(GreaterThanOrEqual(hidden, f"{actor}:"), LessThan(hidden, f"{actor};"))
            terms.append(by_time if dense[stream.model] else kind)
        return terms


@dataclass(frozen=True)
class ActivityPage:
    entries: list[Entry]
    older: ActivityPosition | None  # where the next (older) page starts; None on the last
    newer: ActivityPosition | None  # where the previous (newer) page ends; None on the first


def activity_page(
    *,
    filters: ActivityFilter,
    after: ActivityPosition | None = None,
    before: ActivityPosition | None = None,
    size: int = PAGE_SIZE,
) -> ActivityPage:
    """One page, newest first, older than ``after`` or newer than ``before``."""
    if before is not None:
        rows = _merged(filters, before, size, newer=True)
        page = rows[:size][::-1]
        return ActivityPage(
            page,
            older=page[-1].position if page else None,
            newer=page[0].position if page and len(rows) > size else None,
        )
    rows = _merged(filters, after, size, newer=False)
    page = rows[:size]
    return ActivityPage(
        page,
        older=page[-1].position if len(rows) > size else None,
        newer=page[0].position if after is not None and page else None,
    )


def activity_rows(filters: ActivityFilter, chunk: int = EXPORT_CHUNK) -> Iterator[Entry]:
    """Every matching entry, newest first, read a page of ``chunk`` at a time (the
    exports stream it: no memory of the whole log)."""
    after: ActivityPosition | None = None
    while True:
        page = activity_page(filters=filters, after=after, size=chunk)
        yield from page.entries
        if page.older is None:
            return
        after = page.older


def actor_label(actor: str) -> str:
    return actor or "(not recorded)"


def _merged(
    filters: ActivityFilter, start: ActivityPosition | None, size: int, *, newer: bool
) -> list[Entry]:
    """Up to ``size + 1`` entries past ``start``: newest first, or (``newer``) oldest first.

    Each stream gives up to ``size + 1`` rows; only the ones that make the page are
    described (the rest, most of them, are dropped before any text is made)."""
    found: dict[tuple[datetime, int, int | str], tuple[int, Stream, dict[str, Any]]] = {}
    dense: dict[type[Model], bool] = {}
    for rank, stream in filters.streams():
        where = filters.q(stream)
        if start is not None:
            place = start.newer if newer else start.older
            where &= place(rank, stream.at, stream.key)
        key = stream.key
        order = (stream.at, key) if newer else (f"-{stream.at}", f"-{key}")
        columns = {key, stream.at, *stream.fields}
        for column in (stream.actor, stream.namespace):
            if column is not None:
                columns.add(column)
        for actors in filters.actors(stream, dense):
            rows = stream.rows().filter(where & actors).order_by(*order).values(*columns)
            for row in rows[: size + 1]:  # the same row twice (two actor terms) counts once
                found[(row[stream.at], rank, row[key])] = (rank, stream, row)
    ordered = sorted(found.items(), key=lambda item: item[0], reverse=not newer)
    return [_entry(rank, stream, row) for _, (rank, stream, row) in ordered[: size + 1]]


def _entry(rank: int, stream: Stream, row: dict[str, Any]) -> Entry:
    at: datetime = row[stream.at]
    action, summary, href = stream.describe(row)
    return Entry(
        at=at,
        kind=stream.kind,
        action=action,
        actor=row[stream.actor] if stream.actor is not None else "",
        namespace=row[stream.namespace] if stream.namespace is not None else "",
        summary=summary,
        href=href,
        position=ActivityPosition(at, rank, row[stream.key]),
    )


# --- Links: each URL reversed once, not once per row ---------------------------------


@cache
def _prefix(name: str) -> str:
    """``/memories/`` of ``memories:memory`` and the like: the URL of id 1 without ``1/``."""
    return reverse(name, args=[1])[: -len("1/")]


def _link(name: str, query: dict[str, str] | None = None) -> str:
    url = reverse(name)
    return f"{url}?{urlencode(query)}" if query else url


def _clip(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 1] + "…"


def _json(value: Any) -> str:
    return _clip(json.dumps(value, ensure_ascii=False, sort_keys=True))


# --- The streams ------------------------------------------------------------------------


def _memory_event(row: dict[str, Any]) -> tuple[str, str, str]:
    reason = _clip(row["reason"])
    summary = f"memory {row['memory_id']}" + (f": {reason}" if reason else "")
    return row["event"], summary, f"{_prefix('memories:memory')}{row['memory_id']}/"


def _conflict_link(row: dict[str, Any]) -> str:
    return _link("memories:conflicts", {"namespace": row["namespace"]})


def _conflict_opened(row: dict[str, Any]) -> tuple[str, str, str]:
    summary = f"memory {row['new_id']} against memory {row['old_id']}"
    return "opened", summary, _conflict_link(row)


def _conflict_decided(row: dict[str, Any]) -> tuple[str, str, str]:
    label = Conflict.Resolution(row["resolution"]).label if row["resolution"] else "decided"
    summary = f"memory {row['new_id']} against memory {row['old_id']}"
    return str(label), summary, f"{_prefix('memories:memory')}{row['new_id']}/"


def _note_href(row: dict[str, Any]) -> str:
    href = f"{reverse('notes:browse')}{quote(client_id_of(row['uid']), safe='')}/"
    if is_qualified(row["uid"]):
        href += "?" + urlencode({"namespace": row["namespace"]})
    return href


def _note_written(row: dict[str, Any]) -> tuple[str, str, str]:
    """A note as written: its status then is its status now only while no one has changed
    it (``status_at`` unset: every change goes through notes.services.set_status_of, which
    sets it). After a change the written status is recorded nowhere: it is not shown."""
    written = f" ({row['status']})" if row["status_at"] is None else ""
    return "written", f"note {client_id_of(row['uid'])}{written}", _note_href(row)


def _note_decided(row: dict[str, Any]) -> tuple[str, str, str]:
    return row["status"], f"note {client_id_of(row['uid'])}", _note_href(row)


def _thread_created(row: dict[str, Any]) -> tuple[str, str, str]:
    """A thread started (its id, never its title: a title may say anything)."""
    href = f"{_prefix('memories:thread')}{quote(row['id'], safe='')}/"
    return "started", f"thread {row['id']}", href


def _fact(row: dict[str, Any]) -> tuple[str, str, str]:
    """A fact's write (FactEvent): who set or changed it and which parts, never its key or
    value (the record keeps neither: a fact may hold anything a person said)."""
    action = "set" if row["event"] == FactEvent.Event.CREATED else "changed"
    changed = (row["data"] or {}).get("changed") or []
    parts = f" ({', '.join(str(part) for part in changed)})" if changed else ""
    link = _link("memories:facts", {"namespace": row["namespace"]})
    return action, f"fact #{row['fact_id']}{parts}", link


def _deletion(row: dict[str, Any]) -> tuple[str, str, str]:
    reason = _clip(row["reason"])
    summary = f"{row['kind']} {row['object_id']}" + (f": {reason}" if reason else "")
    link = _link("memories:facts", {"namespace": row["namespace"]}) if row["kind"] == "fact" else ""
    return "deleted", summary, link


def _token_created(row: dict[str, Any]) -> tuple[str, str, str]:
    return "created", f"token {row['name']} ({row['prefix']}…)", _link("memories:tokens")


def _token_revoked(row: dict[str, Any]) -> tuple[str, str, str]:
    return "revoked", f"token {row['name']} ({row['prefix']}…)", _link("memories:tokens")


def _erasure(row: dict[str, Any]) -> tuple[str, str, str]:
    return "erased", describe(row["counts"]), _link("people")


def _setting(row: dict[str, Any]) -> tuple[str, str, str]:
    if row["reset"]:
        summary = f"{row['key']}: back to the default {_json(row['new'])}"
    else:
        summary = f"{row['key']}: {_json(row['old'])} → {_json(row['new'])}"
    return "reset" if row["reset"] else "changed", summary, _link("memories:settings")


# The order is part of every position written: add new streams at the end.
STREAMS: tuple[Stream, ...] = (
    # A memory's history but a conflict decision's rows (the "conflict" stream at the end).
    Stream(
        "memory",
        MemoryEvent,
        "created_at",
        "actor",
        "namespace",
        ("memory_id", "event", "reason"),
        _memory_event,
        ~CONFLICT_ROWS,
        actor_indexed=True,
    ),
    Stream(
        "conflict",
        Conflict,
        "created_at",
        None,
        "namespace",
        ("old_id", "new_id"),
        _conflict_opened,
    ),
    Stream(
        "conflict",
        Conflict,
        "resolved_at",
        "resolved_by",
        "namespace",
        ("old_id", "new_id", "resolution"),
        _conflict_decided,
        Q(resolved_at__isnull=False),
    ),
    Stream(
        "note",
        Note,
        "created_at",
        "author",
        "namespace",
        ("uid", "status", "status_at"),
        _note_written,
    ),
    Stream(
        "note",
        Note,
        "status_at",
        "status_by",
        "namespace",
        ("uid", "status"),
        _note_decided,
        Q(status_at__isnull=False),
    ),
    Stream(
        "fact",
        FactEvent,
        "created_at",
        "actor",
        "namespace",
        ("fact_id", "event", "data"),
        _fact,
        actor_indexed=True,
    ),
    Stream(
        "fact",
        Deletion,
        "deleted_at",
        "deleted_by",
        "namespace",
        ("kind", "object_id", "reason"),
        _deletion,
        Q(kind=Deletion.Kind.FACT),
    ),
    Stream(
        "thread",
        Deletion,
        "deleted_at",
        "deleted_by",
        "namespace",
        ("kind", "object_id", "reason"),
        _deletion,
        Q(kind__in=[Deletion.Kind.MESSAGE, Deletion.Kind.THREAD]),
    ),
    Stream("token", ApiToken, "created_at", "created_by", None, ("name", "prefix"), _token_created),
    Stream(
        "token",
        ApiToken,
        "revoked_at",
        "revoked_by",
        None,
        ("name", "prefix"),
        _token_revoked,
        Q(revoked_at__isnull=False),
    ),
    Stream("erase", NamespaceErasure, "erased_at", "erased_by", "namespace", ("counts",), _erasure),
    Stream(
        "setting",
        SettingChange,
        "changed_at",
        "changed_by",
        None,
        ("key", "old", "new", "reset"),
        _setting,
    ),
    # Each change a person's conflict decision made, and each its undo put back, from the
    # memories' history: a decision that was undone is still listed, with its undo.
    Stream(
        "conflict",
        MemoryEvent,
        "created_at",
        "actor",
        "namespace",
        ("memory_id", "event", "reason"),
        _memory_event,
        CONFLICT_ROWS,
        by_time=True,
    ),
    Stream(
        "thread",
        Thread,
        "created_at",
        "created_by",
        "namespace",
        ("id",),
        _thread_created,
    ),
)
