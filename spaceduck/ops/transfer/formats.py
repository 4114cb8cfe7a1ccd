"""The export file's format: its record types in dependency order, how each value
travels (database <-> file), the constants both directions share."""

from __future__ import annotations

import gzip
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import IO, Any

from django.db import connection, models

from memories.models import (
    Conflict,
    Deletion,
    Extraction,
    Fact,
    FactEvent,
    Memory,
    MemoryEvent,
    Message,
    Thread,
)
from notes.models import Note, NoteSearchKind, NoteSupersession
from spaceduck.core.errors import InvalidInput
from spaceduck.core.limits import check_json_value
from spaceduck.models import ApiToken, NamespaceErasure

FORMAT = "spaceduck-export"
VERSION = 1
BATCH_SIZE = 2000  # records per import transaction, and rows per export read
LOOKUP_CHUNK = 500  # ids per "which of these exist" query
MAX_LISTED_CONFLICTS = 20

Convert = Callable[[Any], Any]  # one column's value: file -> Python, or Python -> database


class TransferError(Exception):
    """A file that cannot be imported, or a conflict; nothing (more) was written."""


# --- Record types -------------------------------------------------------------------


@dataclass(frozen=True)
class RecordType:
    name: str
    model: type[models.Model]
    # Unique column sets besides the primary key (attribute names).
    unique: tuple[tuple[str, ...], ...] = ()
    # Columns that may differ without being a conflict (operational timestamps).
    volatile: frozenset[str] = frozenset()
    # Nullable self-references written after every record of the type is in.
    deferred: frozenset[str] = frozenset()
    # The namespace filter of an export, as a queryset lookup.
    namespace_lookup: str = "namespace"

    @cached_property
    def fields(self) -> tuple[models.Field, ...]:  # type: ignore[type-arg]
        return tuple(self.model._meta.concrete_fields)

    @cached_property
    def attnames(self) -> tuple[str, ...]:
        return tuple(str(f.attname) for f in self.fields)

    @cached_property
    def decoders(self) -> tuple[Convert, ...]:
        return tuple(decoder(f) for f in self.fields)

    @cached_property
    def pk(self) -> str:
        return str(self.model._meta.pk.attname)  # type: ignore[union-attr]

    @cached_property
    def references(self) -> dict[str, tuple[str, bool]]:
        """attname -> (referenced record type, nullable) for each foreign key."""
        refs: dict[str, tuple[str, bool]] = {}
        for f in self.fields:
            if f.is_relation and f.related_model is not None:
                refs[str(f.attname)] = (_TYPE_OF_MODEL[f.related_model], bool(f.null))
        return refs


TYPES: tuple[RecordType, ...] = (
    RecordType("search_kind", NoteSearchKind, volatile=frozenset({"enabled_at"})),
    RecordType("thread", Thread),
    RecordType("message", Message, namespace_lookup="thread__namespace"),
    RecordType("memory", Memory, deferred=frozenset({"superseded_by_id"})),
    RecordType("memory_event", MemoryEvent),
    RecordType("conflict", Conflict),
    RecordType("extraction", Extraction),
    RecordType("fact", Fact, unique=(("namespace", "key"),)),
    RecordType("fact_event", FactEvent),  # who wrote a fact when (no value)
    RecordType("note", Note, unique=(("uid",),)),
    RecordType(
        "note_edge",
        NoteSupersession,
        unique=(("note_id", "target_id"),),
        namespace_lookup="note__namespace",
    ),
    RecordType("erasure", NamespaceErasure),
    RecordType("deletion", Deletion),  # tombstones of deleted messages, threads, facts
    RecordType("token", ApiToken, unique=(("key_hash",),), volatile=frozenset({"last_used_at"})),
)
BY_NAME = {t.name: t for t in TYPES}
_TYPE_OF_MODEL: dict[type[models.Model], str] = {t.model: t.name for t in TYPES}
ORDER = {t.name: i for i, t in enumerate(TYPES)}


# --- Values: database <-> file ------------------------------------------------------


def to_file(f: models.Field, value: Any) -> Any:  # type: ignore[type-arg]
    if value is not None and isinstance(f, models.DateTimeField):
        return value.astimezone(UTC).isoformat()
    return value


def decoder(f: models.Field) -> Convert:  # type: ignore[type-arg]
    """Turns a column's value read from the file into Python, or raises ValueError(why)."""
    if isinstance(f, models.JSONField):
        return _check_json  # any JSON, null included (a fact's JSON null is a value)
    target = f.target_field if f.is_relation else f  # type: ignore[attr-defined]
    check: Convert
    if isinstance(target, models.DateTimeField):
        check = _check_datetime
    elif isinstance(target, models.BooleanField):
        check = _check_bool
    elif isinstance(target, models.IntegerField | models.AutoField):
        check = _check_int
    elif isinstance(target, models.FloatField):
        check = _check_float
    elif isinstance(target, models.CharField | models.TextField):
        check = _check_text
    else:  # pragma: no cover - no other column types in the exported models
        check = _same
    nullable = bool(f.null)

    def decode(value: Any) -> Any:
        if value is None:
            if nullable:
                return None
            raise ValueError("must not be null")
        return check(value)

    return decode


def _same(value: Any) -> Any:
    return value


def _check_datetime(value: Any) -> datetime:
    parsed = _datetime(value)
    if parsed is None:
        raise ValueError("is not an ISO 8601 time with an offset")
    return parsed


def _check_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _check_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be an integer")
    return value


def _check_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number")
    return float(value)


def _check_text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("holds a lone surrogate, which a text column cannot store") from None
    if "\x00" in value and connection.vendor == "postgresql":
        raise ValueError("holds a NUL character, which PostgreSQL cannot store in text")
    return value


def _check_json(value: Any) -> Any:
    """Any JSON on SQLite (a file from an older version may hold lone surrogates, which
    SQLite keeps as escapes); on PostgreSQL, only what jsonb can store."""
    if connection.vendor == "postgresql":
        try:
            check_json_value(value, field="the value")
        except InvalidInput as exc:
            raise ValueError(f"cannot be stored in PostgreSQL: {exc}") from None
    return value


def _datetime(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def encoder(f: models.Field) -> Convert:  # type: ignore[type-arg]
    """What to bind for a column, as ``save()`` would (without ``pre_save``'s auto_now)."""
    if isinstance(f, models.JSONField):
        # SQL NULL where the column allows it (as the services store it); otherwise
        # JSON null, which is a value (loaddata binds SQL NULL there and fails).
        null = None if f.null else "null"
        adapt_json = connection.ops.adapt_json_value
        json_encoder = f.encoder
        return lambda value: null if value is None else adapt_json(value, json_encoder)
    target = f.target_field if f.is_relation else f  # type: ignore[attr-defined]
    if isinstance(target, models.DateTimeField):
        adapt_time = connection.ops.adapt_datetimefield_value
        return lambda value: None if value is None else adapt_time(value)
    return _same


@contextmanager
def open_text(path: Path, mode: str, *, gz: bool) -> Iterator[IO[str]]:
    if gz:
        with gzip.open(path, mode + "t", encoding="utf-8", newline="\n") as handle:
            yield handle  # type: ignore[misc]
    else:
        with open(path, mode, encoding="utf-8", newline="\n") as handle:
            yield handle


# --- Small helpers for the commands -------------------------------------------------


def describe_counts(counts: dict[str, int] | Counter[str]) -> str:
    shown = [f"{counts[t.name]} {t.name}" for t in TYPES if counts.get(t.name)]
    return ", ".join(shown) if shown else "nothing"
