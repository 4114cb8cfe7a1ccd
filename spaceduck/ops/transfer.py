"""Export and import everything needed to rebuild a spaceduck database, as JSON lines.

``manage.py export [--namespace NS] PATH`` and ``manage.py import PATH`` call
``export`` and ``import_file`` here (a project-level module: it reads and writes
both apps' tables).

The format (``FORMAT``, ``VERSION``): one JSON object per line, ASCII only
(``ensure_ascii``: a lone surrogate, which the API accepts inside JSON values,
travels as a ``\\ud800`` escape and comes back unchanged). A ``.gz`` path is
gzip-compressed. Line 1 is the header: format, version, the namespace filter,
the fingerprint of the stored vectors, what the file carries and how many
records of each type follow. Then the records, in dependency order
(``TYPES``), each ``{"type": ..., <column>: <value>, ...}`` with every
concrete column of its model under its attribute name (foreign keys as
``<name>_id``), datetimes as ISO 8601 with their UTC offset, JSON columns as
JSON (a fact whose value is JSON ``null`` has ``"value": null``). Memories may
carry ``"embedding"``: their stored vector, base64 float32. The last line is
``{"type": "end", "counts": ...}``; a file without it is incomplete and refused.

Export reads one snapshot (a read transaction: in WAL mode it never blocks the
service's writes), so the file is consistent while the service writes.

Import keeps every id: memory ids (supersession edges, history rows, extraction
verdicts name them), event, extraction, fact, note and edge ids, thread and
message ids. A record whose id (or unique key: a fact's namespace and key, a
note's uid, an edge's two notes, a token's hash) is not in the database is
inserted; one that is there with the same values is left alone (so importing
a file twice changes nothing); one that is there with other values is a
conflict. Conflicts are looked for before anything is written: by default
the import then stops, writing nothing and listing them; ``on_conflict="skip"``
keeps the database's rows (and skips the history of a conflicting memory).
Two independent databases have overlapping ids, so merging one into the other
is refused this way rather than mixing their rows. A nullable reference that
is NULL in the database (its target was deleted) matches any value.

Indexes: inserting memories fires the keyword-index trigger. Vectors come from
the file when its fingerprint is the configured embedder's; otherwise (or
without ``embedding``) they are computed after the rows are in, in batches, with
a progress bar. Note search kinds are enabled before any note is inserted (the
notes_fts triggers index only the notes of enabled kinds), backfilling notes
already in the database. Then every process's vector cache is invalidated.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import IO, Any

import numpy as np
from django.core.management.color import no_style
from django.db import connection, models, transaction
from django.db.models import QuerySet
from django.utils import timezone
from tqdm import tqdm

from memories.models import Conflict, Extraction, Fact, Memory, MemoryEvent, Message, Thread
from memories.store import keyword_index, vector_index
from memories.upkeep import integrity
from notes.models import Note, NoteSearchKind, NoteSupersession
from notes.services import backfill_sql
from spaceduck.core.errors import InvalidInput
from spaceduck.core.limits import check_json_value
from spaceduck.core.namespaces import InvalidNamespace, namespace_kind, normalize_namespace
from spaceduck.core.providers import get_embedder
from spaceduck.models import ApiToken, NamespaceErasure, VectorIndexState

FORMAT = "spaceduck-export"
VERSION = 1
BATCH_SIZE = 2000  # records per import transaction, and rows per export read
_LOOKUP_CHUNK = 500  # ids per "which of these exist" query
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
    RecordType("note", Note, unique=(("uid",),)),
    RecordType(
        "note_edge",
        NoteSupersession,
        unique=(("note_id", "target_id"),),
        namespace_lookup="note__namespace",
    ),
    RecordType("erasure", NamespaceErasure),
    RecordType("token", ApiToken, unique=(("key_hash",),), volatile=frozenset({"last_used_at"})),
)
BY_NAME = {t.name: t for t in TYPES}
_TYPE_OF_MODEL: dict[type[models.Model], str] = {t.model: t.name for t in TYPES}
_ORDER = {t.name: i for i, t in enumerate(TYPES)}


# --- Values: database <-> file ------------------------------------------------------


def _to_file(f: models.Field, value: Any) -> Any:  # type: ignore[type-arg]
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


# --- Export -------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportResult:
    counts: dict[str, int]
    vectors: bool
    fingerprint: dict[str, Any] | None
    warnings: list[str]


def export(out: IO[str], **options: Any) -> ExportResult:
    """Write the header, every record, and the end line to ``out``."""
    stream = ExportStream(**options)
    for line in stream:
        out.write(line)
    assert stream.result is not None
    return stream.result


class ExportStream:
    """The export's lines, one at a time (a download streams them as they are read).

    The read snapshot is held while the lines are iterated; ``result`` is set once
    the header is written (counts, warnings).
    """

    def __init__(
        self,
        *,
        namespace: str | None = None,
        vectors: bool = True,
        tokens: bool = False,
        progress: bool = False,
    ) -> None:
        self.namespace = _clean_namespace(namespace)
        self.vectors = vectors
        self.tokens = tokens
        self.progress = progress
        self.result: ExportResult | None = None

    def __iter__(self) -> Iterator[str]:
        ns, vectors, tokens = self.namespace, self.vectors, self.tokens
        warnings: list[str] = []
        with _read_snapshot():
            fingerprint, problem = _stored_fingerprint()
            if vectors and problem:
                warnings.append(f"vectors left out: {problem}")
                vectors = False
            querysets = {
                t.name: _queryset(t, None if t.name == "token" else ns)
                for t in TYPES
                if t.name != "token" or tokens
            }
            token_rows = _tokens(ns) if tokens else []
            counts = {
                name: (len(token_rows) if name == "token" else qs.count())
                for name, qs in querysets.items()
            }
            self.result = ExportResult(dict(counts), vectors, fingerprint, warnings)
            yield _line(
                {
                    "type": "header",
                    "format": FORMAT,
                    "version": VERSION,
                    "exported_at": timezone.now().astimezone(UTC).isoformat(),
                    "namespace": ns,
                    "embedding": fingerprint,
                    "vectors": vectors,
                    "tokens": tokens,
                    "counts": counts,
                }
            )
            written: Counter[str] = Counter()
            total = sum(counts.values())
            with tqdm(total=total, unit="record", disable=not self.progress) as bar:
                for name, qs in querysets.items():
                    rtype = BY_NAME[name]
                    rows = token_rows if name == "token" else _rows(rtype, qs)
                    for record in _with_vectors(rtype, rows, vectors):
                        yield _line(record)
                        written[name] += 1
                        bar.update(1)
            yield _line({"type": "end", "counts": {n: written[n] for n in counts}})


def export_to_path(
    path: str | os.PathLike[str], *, force: bool = False, **options: Any
) -> ExportResult:
    """``export`` into a file (gzip when it ends in .gz), written aside then renamed."""
    target = Path(path)
    if target.exists() and not force:
        raise TransferError(f"{target} exists; pass --force to replace it")
    if not target.parent.is_dir():
        raise TransferError(f"no directory {target.parent}")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        with _open_text(Path(tmp_name), "w", gz=target.suffix == ".gz") as out:
            result = export(out, **options)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return result


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=True, allow_nan=False, separators=(",", ":")) + "\n"


def _clean_namespace(namespace: str | None) -> str | None:
    if namespace is None:
        return None
    try:
        return normalize_namespace(namespace)
    except InvalidNamespace as exc:
        raise TransferError(f"invalid namespace {namespace!r}: {exc}") from None


def _queryset(rtype: RecordType, ns: str | None) -> QuerySet[Any]:
    qs = rtype.model._default_manager.order_by(rtype.pk)
    if ns is None:
        return qs
    if rtype.name == "search_kind":
        return qs.filter(kind=namespace_kind(ns))
    return qs.filter(**{rtype.namespace_lookup: ns})


def _tokens(ns: str | None) -> list[dict[str, Any]]:
    """Tokens (hashes, never secrets); with a namespace, only tokens granted exactly it."""
    rtype = BY_NAME["token"]
    rows = list(_rows(rtype, _queryset(rtype, None)))
    if ns is None:
        return rows
    return [row for row in rows if row["namespaces"] == [ns]]


def _rows(rtype: RecordType, qs: QuerySet[Any]) -> Iterator[dict[str, Any]]:
    for values in qs.values_list(*rtype.attnames).iterator(chunk_size=BATCH_SIZE):
        record: dict[str, Any] = {"type": rtype.name}
        for f, value in zip(rtype.fields, values, strict=True):
            record[str(f.attname)] = _to_file(f, value)
        yield record


def _with_vectors(
    rtype: RecordType, rows: Iterator[dict[str, Any]] | list[dict[str, Any]], vectors: bool
) -> Iterator[dict[str, Any]]:
    if rtype.name != "memory" or not vectors:
        yield from rows
        return
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == 1000:
            yield from _add_vectors(batch)
            batch = []
    yield from _add_vectors(batch)


def _add_vectors(batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    blobs = vector_index.stored_blobs([row["id"] for row in batch])
    for row in batch:
        blob = blobs.get(row["id"])
        if blob is not None:
            row["embedding"] = base64.b64encode(blob).decode("ascii")
    return batch


def _stored_fingerprint() -> tuple[dict[str, Any] | None, str | None]:
    """The stored vectors' fingerprint, and why they cannot be exported (or None)."""
    state = VectorIndexState.objects.filter(name=vector_index.INDEX_NAME).first()
    if state is None:
        return None, "no vector index fingerprint is recorded"
    fingerprint = {"provider": state.provider, "model": state.model, "dimensions": state.dimensions}
    if state.target_dimensions is not None:
        return fingerprint, "a reindex is unfinished, the stored vectors are mixed"
    return fingerprint, None


_SNAPSHOT_SQL = {
    "sqlite": ("BEGIN DEFERRED", "SELECT count(*) FROM sqlite_master"),
    "postgresql": ("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "SELECT 1"),
}


@contextmanager
def _read_snapshot() -> Iterator[None]:
    """One read transaction around the export: a consistent snapshot, writers not blocked.

    Django's atomic() would BEGIN IMMEDIATE (the backend's transaction mode) and
    hold the write lock; a deferred BEGIN followed by a read holds only a WAL
    snapshot. PostgreSQL's REPEATABLE READ takes its snapshot at the first read.
    Inside an atomic block (tests) the block's transaction is used.
    """
    if connection.in_atomic_block:
        yield
        return
    connection.ensure_connection()
    begin, first_read = _SNAPSHOT_SQL[connection.vendor]
    with connection.cursor() as cursor:
        cursor.execute(begin)
        cursor.execute(first_read).fetchone()
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ROLLBACK")


@contextmanager
def _open_text(path: Path, mode: str, *, gz: bool) -> Iterator[IO[str]]:
    if gz:
        with gzip.open(path, mode + "t", encoding="utf-8", newline="\n") as handle:
            yield handle  # type: ignore[misc]
    else:
        with open(path, mode, encoding="utf-8", newline="\n") as handle:
            yield handle


# --- Import: reading and checking the file -----------------------------------------


@dataclass
class ImportResult:
    created: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)  # conflicts kept as they are
    cleared: Counter[str] = field(default_factory=Counter)  # references to missing rows
    conflicts: list[str] = field(default_factory=list)
    vectors_from_file: int = 0
    embedded: int = 0
    keyword_indexed: int = 0
    search_kinds_enabled: list[str] = field(default_factory=list)
    vectors_note: str = ""  # why the file's vectors were not used, if they were not
    header: dict[str, Any] = field(default_factory=dict)
    index_report: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Line:
    number: int
    rtype: RecordType
    raw: dict[str, Any]  # the JSON object as read
    values: dict[str, Any]  # attname -> Python value, checked

    @property
    def pk(self) -> Any:
        return self.values[self.rtype.pk]

    @property
    def where(self) -> str:
        return f"line {self.number} ({self.rtype.name} {self.pk!r})"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _read_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    number = 0
    try:
        with _open_text(path, "r", gz=_is_gzip(path)) as handle:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    obj = json.loads(text, parse_constant=_reject_constant)
                except ValueError as exc:
                    raise TransferError(f"line {number}: not JSON ({exc})") from None
                if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
                    raise TransferError(f'line {number}: not an object with a "type"')
                yield number, obj
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as exc:
        raise TransferError(f"line {number + 1}: unreadable ({exc})") from None


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def _parse(number: int, obj: dict[str, Any]) -> _Line:
    rtype = BY_NAME.get(obj["type"])
    if rtype is None:
        raise TransferError(f"line {number}: unknown record type {obj['type']!r}")
    allowed = {"type", *rtype.attnames, *(["embedding"] if rtype.name == "memory" else [])}
    extra = set(obj) - allowed
    if extra:
        raise TransferError(
            f"line {number}: {rtype.name} has unknown fields {', '.join(sorted(extra))} "
            "(exported by a newer spaceduck?)"
        )
    where = f"line {number} ({rtype.name})"
    values: dict[str, Any] = {}
    for f, decode in zip(rtype.fields, rtype.decoders, strict=True):
        name = str(f.attname)
        if name in obj:
            try:
                values[name] = decode(obj[name])
            except ValueError as exc:
                raise TransferError(f"{where}: {name} {exc}") from None
        elif f.primary_key:
            raise TransferError(f"{where}: missing {name}")  # never a fresh default id
        elif f.has_default():
            values[name] = f.get_default()  # a column added after the export was written
        elif f.null:
            values[name] = None
        else:
            raise TransferError(f"{where}: missing {name}")
    return _Line(number, rtype, obj, values)


@dataclass
class _Plan:
    header: dict[str, Any]
    counts: Counter[str]
    ids: dict[str, set[Any]]  # record type -> primary keys in the file
    conflicts: list[tuple[_Line, str]]
    missing_refs: dict[str, set[Any]]  # record type -> referenced keys found nowhere


def _lines(path: Path) -> Iterator[_Line | dict[str, Any]]:
    """Header dict, then checked records, then the end dict (order and completeness checked)."""
    seen_end = False
    position = -1
    for number, obj in _read_lines(path):
        kind = obj["type"]
        if position == -1:
            if kind != "header":
                raise TransferError(f"line {number}: expected the header, found {kind!r}")
            if obj.get("format") != FORMAT:
                raise TransferError(f"not a {FORMAT} file (format {obj.get('format')!r})")
            if obj.get("version") != VERSION:
                raise TransferError(
                    f"format version {obj.get('version')!r}; this spaceduck reads version {VERSION}"
                )
            position = 0
            yield obj
            continue
        if seen_end:
            raise TransferError(f"line {number}: records after the end line")
        if kind == "end":
            seen_end = True
            yield obj
            continue
        if kind == "header":
            raise TransferError(f"line {number}: a second header")
        line = _parse(number, obj)
        order = _ORDER[line.rtype.name]
        if order < position:
            raise TransferError(
                f"line {number}: a {line.rtype.name} after {TYPES[position].name} records; "
                "records must come in dependency order"
            )
        position = order
        yield line
    if position == -1:
        raise TransferError("the file is empty")
    if not seen_end:
        raise TransferError("the file has no end line: it is incomplete (interrupted export?)")


def _plan(path: Path, batch_size: int) -> _Plan:
    """Read the whole file once: check it, and find conflicts and missing references."""
    header: dict[str, Any] = {}
    counts: Counter[str] = Counter()
    ids: dict[str, set[Any]] = {t.name: set() for t in TYPES}
    unique_seen: dict[tuple[str, int], set[tuple[Any, ...]]] = {}
    conflicts: list[tuple[_Line, str]] = []
    refs: dict[str, set[Any]] = {t.name: set() for t in TYPES}
    batch: list[_Line] = []

    def check(batch: list[_Line]) -> None:
        if batch:
            for line, _existing, reason in _classify(batch):
                if reason is not None:
                    conflicts.append((line, reason))

    for item in _lines(path):
        if isinstance(item, dict):
            if item["type"] == "header":
                header = item
            else:
                check(batch)
                batch = []
                _check_end(item, counts)
            continue
        line, rtype = item, item.rtype
        if (batch and batch[0].rtype is not rtype) or len(batch) >= batch_size:
            check(batch)
            batch = []
        if line.pk in ids[rtype.name]:
            raise TransferError(f"{line.where}: the same {rtype.pk} appears twice")
        ids[rtype.name].add(line.pk)
        for i, columns in enumerate(rtype.unique):
            key = tuple(line.values[c] for c in columns)
            seen = unique_seen.setdefault((rtype.name, i), set())
            if key in seen:
                raise TransferError(f"{line.where}: {', '.join(columns)} appears twice")
            seen.add(key)
        for attname, (target, _nullable) in rtype.references.items():
            value = line.values[attname]
            if value is not None and value not in ids[target]:
                refs[target].add(value)  # earlier types are complete; the rest is checked below
        counts[rtype.name] += 1
        batch.append(line)
    check(batch)
    missing = {
        target: _absent(BY_NAME[target], keys - ids[target]) for target, keys in refs.items()
    }
    return _Plan(header, counts, ids, conflicts, missing)


def _check_end(end: dict[str, Any], counts: Counter[str]) -> None:
    expected = end.get("counts")
    if not isinstance(expected, dict):
        raise TransferError("the end line has no counts")
    found = {name: counts[name] for name in expected}
    if found != expected or set(counts) - set(expected):
        raise TransferError(f"the file is damaged: the end line counts {expected}, found {found}")


def _absent(rtype: RecordType, keys: set[Any]) -> set[Any]:
    """The keys among ``keys`` with no row in the database."""
    absent = set(keys)
    listed = sorted(keys)
    for start in range(0, len(listed), _LOOKUP_CHUNK):
        chunk = listed[start : start + _LOOKUP_CHUNK]
        found = rtype.model._default_manager.filter(pk__in=chunk).values_list("pk", flat=True)
        absent -= set(found)
    return absent


def _existing(rtype: RecordType, lines: Sequence[_Line]) -> dict[Any, dict[str, Any]]:
    """Database rows (attname -> value) matching the lines by primary key or unique key."""
    manager = rtype.model._default_manager
    rows: dict[Any, dict[str, Any]] = {}

    def add(found: QuerySet[Any]) -> None:
        for values in found.values_list(*rtype.attnames):
            row = dict(zip(rtype.attnames, values, strict=True))
            rows[row[rtype.pk]] = row

    pks = [line.pk for line in lines]
    for start in range(0, len(pks), _LOOKUP_CHUNK):
        add(manager.filter(pk__in=pks[start : start + _LOOKUP_CHUNK]))
    for columns in rtype.unique:
        # Narrow by the first column only (an OR of pairs would be too deep for SQLite).
        firsts = sorted({line.values[columns[0]] for line in lines})
        for start in range(0, len(firsts), _LOOKUP_CHUNK):
            add(manager.filter(**{f"{columns[0]}__in": firsts[start : start + _LOOKUP_CHUNK]}))
    return rows


def _classify(
    lines: Sequence[_Line],
) -> list[tuple[_Line, dict[str, Any] | None, str | None]]:
    """For each line: the database row it matches (None: new) and why it conflicts (or None)."""
    rtype = lines[0].rtype
    existing = _existing(rtype, lines)
    by_unique = [
        {tuple(row[c] for c in columns): row for row in existing.values()}
        for columns in rtype.unique
    ]
    out: list[tuple[_Line, dict[str, Any] | None, str | None]] = []
    for line in lines:
        row = existing.get(line.pk)
        others = [
            index.get(tuple(line.values[c] for c in columns))
            for columns, index in zip(rtype.unique, by_unique, strict=True)
        ]
        clash = next((o for o in others if o is not None and o[rtype.pk] != line.pk), None)
        if clash is not None:
            out.append((line, clash, f"{rtype.pk} {clash[rtype.pk]!r} has the same unique key"))
        elif row is None:
            out.append((line, None, None))
        else:
            differing = _differences(rtype, line.values, row)
            reason = f"differs in {', '.join(differing)}" if differing else None
            out.append((line, row, reason))
    return out


def _differences(rtype: RecordType, values: dict[str, Any], row: dict[str, Any]) -> list[str]:
    differing = []
    for name in rtype.attnames:
        if name in rtype.volatile:
            continue
        mine, theirs = values[name], row[name]
        if theirs is None and mine is not None and name in rtype.references:
            continue  # SET_NULL after its target was deleted, or a deferred edge not yet set
        if not _equal(mine, theirs):
            differing.append(name)
    return differing


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, datetime) and isinstance(b, datetime):
        return a == b
    if type(a) is not type(b) and not (
        isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool)
    ):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# --- Import: writing ----------------------------------------------------------------


def import_file(
    path: str | os.PathLike[str],
    *,
    on_conflict: str = "fail",
    batch_size: int = BATCH_SIZE,
    progress: bool = False,
) -> ImportResult:
    """Import an export file; see the module docstring for the rules."""
    if on_conflict not in ("fail", "skip"):
        raise ValueError(f"on_conflict must be 'fail' or 'skip', got {on_conflict!r}")
    source = Path(path)
    if not source.is_file():
        raise TransferError(f"no file {source}")
    plan = _plan(source, batch_size)
    if plan.conflicts and on_conflict == "fail":
        raise TransferError(_conflict_message(plan.conflicts))
    for target, keys in plan.missing_refs.items():
        required = [
            (rtype.name, attname)
            for rtype in TYPES
            for attname, (ref, nullable) in rtype.references.items()
            if ref == target and not nullable
        ]
        if keys and required:
            _check_required(source, plan, target, keys)

    writer = _Writer(plan, on_conflict=on_conflict, batch_size=batch_size)
    total = sum(plan.counts.values())
    with tqdm(total=total, unit="record", disable=not progress, desc="import") as bar:
        writer.run(source, bar.update)
    _reset_sequences()
    result = writer.result
    result.header = plan.header
    result.vectors_note = writer.why_not_reused

    embedded, indexed = _complete_indexes(plan, writer, progress)
    result.embedded, result.keyword_indexed = embedded, indexed
    vector_index.invalidate_caches()
    keyword_index.merge_segments()  # an import writes hundreds of small segments
    keyword_index.forget_common()
    result.index_report = integrity.index_report(exact=False)
    return result


def _reset_sequences() -> None:
    """Move PostgreSQL's id sequences past the imported ids, as loaddata does: rows
    inserted with explicit ids leave them behind, and the next insert would reuse an id.
    SQLite's AUTOINCREMENT follows the largest id by itself (no statements)."""
    statements = connection.ops.sequence_reset_sql(no_style(), [t.model for t in TYPES])
    with transaction.atomic(), connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def _conflict_message(conflicts: list[tuple[_Line, str]], *, meanwhile: bool = False) -> str:
    shown = conflicts[:MAX_LISTED_CONFLICTS]
    listed = "\n".join(f"  {line.where}: {reason}" for line, reason in shown)
    more = len(conflicts) - len(shown)
    tail = f"\n  ... and {more} more" if more > 0 else ""
    what = (
        "the database changed during the import; the records before this batch are in "
        "(importing again skips them)"
        if meanwhile
        else "nothing was imported"
    )
    return (
        f"{len(conflicts)} records conflict with rows already in the database (same id or "
        f"unique key, other values); {what}:\n{listed}{tail}\n"
        "Import into an empty database, or pass --on-conflict skip to keep the database's rows."
    )


def _check_required(source: Path, plan: _Plan, target: str, keys: set[Any]) -> None:
    for item in _lines(source):
        if not isinstance(item, _Line):
            continue
        for attname, (ref, nullable) in item.rtype.references.items():
            if ref == target and not nullable and item.values[attname] in keys:
                raise TransferError(
                    f"{item.where}: {attname} {item.values[attname]!r} is neither in the file "
                    "nor in the database"
                )


class _Writer:
    def __init__(self, plan: _Plan, *, on_conflict: str, batch_size: int) -> None:
        self.plan = plan
        self.on_conflict = on_conflict
        self.batch_size = batch_size
        self.result = ImportResult()
        self.skipped_memories: set[int] = set()
        self.deferred: list[tuple[str, Any, Any]] = []  # (attname, pk, value)
        self.memory_ids: list[int] = []
        self.reuse_vectors, self.why_not_reused = _reusable_vectors(plan.header)
        self.dims = vector_index.table_dimensions()

    def run(self, source: Path, advance: Callable[[int], object]) -> None:
        batch: list[_Line] = []
        for item in _lines(source):
            if not isinstance(item, _Line):
                continue
            if batch and (batch[0].rtype is not item.rtype or len(batch) >= self.batch_size):
                self._flush(batch)
                advance(len(batch))
                if batch[0].rtype is not item.rtype:
                    self._after_type(batch[0].rtype)
                batch = []
            batch.append(item)
        if batch:
            self._flush(batch)
            advance(len(batch))
            self._after_type(batch[0].rtype)

    def _flush(self, lines: list[_Line]) -> None:
        rtype = lines[0].rtype
        if rtype.name == "memory_event" and self.skipped_memories:
            kept = [line for line in lines if line.values["memory_id"] not in self.skipped_memories]
            self.result.skipped[rtype.name] += len(lines) - len(kept)
            lines = kept
            if not lines:
                return
        if rtype.name == "memory":
            self.memory_ids.extend(line.pk for line in lines)
        with transaction.atomic():
            new: list[_Line] = []
            for line, row, reason in _classify(lines):
                if reason is not None:
                    if self.on_conflict == "fail":  # written meanwhile by someone else
                        raise TransferError(_conflict_message([(line, reason)], meanwhile=True))
                    self.result.skipped[rtype.name] += 1
                    self.result.conflicts.append(f"{line.where}: {reason}")
                    if rtype.name == "memory":
                        self.skipped_memories.add(line.pk)
                    continue
                if row is None:
                    new.append(line)
                else:
                    self.result.unchanged[rtype.name] += 1
                self._defer(line, row)
            self._insert(rtype, new)

    def _defer(self, line: _Line, row: dict[str, Any] | None) -> None:
        for attname in line.rtype.deferred:
            value = line.values[attname]
            if value is not None and (row is None or row[attname] is None):
                self.deferred.append((attname, line.pk, value))

    def _insert(self, rtype: RecordType, lines: list[_Line]) -> None:
        if not lines:
            return
        encoders = [(str(f.attname), encoder(f)) for f in rtype.fields]
        params = []
        for line in lines:
            values = dict(line.values)
            for attname, (target, nullable) in rtype.references.items():
                if attname in rtype.deferred:
                    values[attname] = None
                elif values[attname] in self.plan.missing_refs[target] and nullable:
                    values[attname] = None
                    self.result.cleared[f"{rtype.name}.{attname}"] += 1
            params.append([encode(values[name]) for name, encode in encoders])
        table = connection.ops.quote_name(rtype.model._meta.db_table)
        columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in rtype.fields)
        marks = ", ".join(["%s"] * len(rtype.fields))
        with connection.cursor() as cursor:
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", params)
        self.result.created[rtype.name] += len(lines)
        if rtype.name == "search_kind":
            self._backfill_notes(lines)
        elif rtype.name == "memory" and self.reuse_vectors:
            self._store_vectors(lines)

    def _backfill_notes(self, lines: list[_Line]) -> None:
        """Notes already in the database of a newly enabled kind (enable_note_search's step)."""
        with connection.cursor() as cursor:
            for line in lines:
                cursor.execute(backfill_sql(), [line.pk])
                self.result.search_kinds_enabled.append(str(line.pk))

    def _store_vectors(self, lines: list[_Line]) -> None:
        rows = []
        for line in lines:
            encoded = line.raw.get("embedding")
            if not isinstance(encoded, str):
                continue
            try:
                vector = np.frombuffer(base64.b64decode(encoded, validate=True), dtype=np.float32)
            except ValueError:
                raise TransferError(f"{line.where}: embedding is not base64 float32") from None
            if vector.shape[0] != self.dims:
                continue  # embedded again below
            rows.append((line.pk, line.values["namespace"], vector))
        vector_index.upsert(rows)
        self.result.vectors_from_file += len(rows)

    def _after_type(self, rtype: RecordType) -> None:
        """Edges within the type, once every record of it is in."""
        if not rtype.deferred:
            return
        pending = []
        for attname, pk, value in self.deferred:
            if value in self.plan.missing_refs[rtype.name]:
                self.result.cleared[f"{rtype.name}.{attname}"] += 1
            else:
                pending.append((attname, pk, value))
        table = connection.ops.quote_name(rtype.model._meta.db_table)
        for start in range(0, len(pending), self.batch_size):
            with transaction.atomic(), connection.cursor() as cursor:
                for attname, pk, value in pending[start : start + self.batch_size]:
                    column = connection.ops.quote_name(attname)
                    cursor.execute(
                        f"UPDATE {table} SET {column} = %s WHERE id = %s AND {column} IS NULL",
                        [value, pk],
                    )
        self.deferred = []


def _reusable_vectors(header: dict[str, Any]) -> tuple[bool, str]:
    """Whether the file's vectors fit the configured embedder (else they are embedded again)."""
    if not header.get("vectors"):
        return False, "the file carries no vectors"
    configured = get_embedder().fingerprint
    mine = {
        "provider": configured.provider,
        "model": configured.model,
        "dimensions": configured.dimensions,
    }
    if header.get("embedding") != mine:
        return False, f"the file's vectors are {header.get('embedding')}, the embedder {mine}"
    if vector_index.table_dimensions() != configured.dimensions:
        return False, "the vector table has another dimension (run reindex first)"
    return True, ""


def _complete_indexes(plan: _Plan, writer: _Writer, progress: bool) -> tuple[int, int]:
    """Embed the file's memories that have no vector yet; index any missing keyword rows."""
    in_file = set(writer.memory_ids) - writer.skipped_memories
    if not in_file:
        return 0, 0
    problems = integrity.find_problems()
    to_embed = sorted(in_file & {*problems.missing_vectors, *problems.misplaced_vectors})
    to_index = sorted(in_file & set(problems.missing_keyword))
    indexed = 0
    for start in range(0, len(to_index), _LOOKUP_CHUNK):
        with transaction.atomic():
            indexed += keyword_index.index_rows(to_index[start : start + _LOOKUP_CHUNK])
    quiet = not progress or not to_embed
    with tqdm(total=len(to_embed), unit="memory", disable=quiet, desc="embed") as bar:
        embedded = integrity.embed_missing(to_embed, batch_size=256, on_embedded=bar.update)
    return embedded, indexed


# --- Small helpers for the commands -------------------------------------------------


def describe_counts(counts: dict[str, int] | Counter[str]) -> str:
    shown = [f"{counts[t.name]} {t.name}" for t in TYPES if counts.get(t.name)]
    return ", ".join(shown) if shown else "nothing"
