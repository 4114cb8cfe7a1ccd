"""Import, first half: reading the file and checking it against the database (the plan:
what is new, the same, or in conflict) before anything is written."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from spaceduck.core import credentials
from spaceduck.core.errors import InvalidInput
from spaceduck.ops.namespace_names import name_problem
from spaceduck.ops.transfer.formats import (
    BY_NAME,
    FORMAT,
    LOOKUP_CHUNK,
    ORDER,
    TYPES,
    VERSION,
    RecordType,
    TransferError,
    open_text,
)

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
class Line:
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
        with open_text(path, "r", gz=_is_gzip(path)) as handle:
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


def _parse(number: int, obj: dict[str, Any]) -> Line:
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
    _check_names(where, values)
    return Line(number, rtype, obj, values)


def _check_names(where: str, values: dict[str, Any]) -> None:
    """A namespace, or a token's grant, must be one a request could name today: visible
    and NFC-normalised (spaceduck.core.namespaces), as every other front end requires."""
    names = [values["namespace"]] if isinstance(values.get("namespace"), str) else []
    grants = values.get("namespaces")
    if isinstance(grants, list):
        names += [g for g in grants if isinstance(g, str) and g != "*" and not g.endswith(":*")]
    for name in names:
        problem = name_problem(name)
        if problem is not None:
            raise TransferError(
                f"{where}: namespace {name!r} {problem}; correct it in the file and import again"
            )


def _screened(line: Line) -> Line:
    """``line`` with its free text as the services store it (spaceduck.core.credentials):
    a message's or thread's credentials marked (SPACEDUCK_REDACT_SECRETS), a memory, fact or
    note holding one refused, with the line and the reason, before anything is written."""
    record = line.rtype.name
    if record not in credentials.CONVERSATION and record not in credentials.KNOWLEDGE:
        return line
    try:
        values = credentials.screened(record, line.values)
    except InvalidInput as exc:
        raise TransferError(f"{line.where}: {exc}") from None
    for f in line.rtype.fields:  # a mark may be longer than what it replaced
        value = values[f.attname]
        if f.max_length and isinstance(value, str) and value != line.values[f.attname]:
            values[f.attname] = value[: f.max_length]
    line.values = values
    return line


@dataclass
class Plan:
    header: dict[str, Any]
    counts: Counter[str]
    ids: dict[str, set[Any]]  # record type -> primary keys in the file
    conflicts: list[tuple[Line, str]]
    missing_refs: dict[str, set[Any]]  # record type -> referenced keys found nowhere


def plan_lines(path: Path) -> Iterator[Line | dict[str, Any]]:
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
        line = _screened(_parse(number, obj))
        order = ORDER[line.rtype.name]
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


def make_plan(path: Path, batch_size: int) -> Plan:
    """Read the whole file once: check it, and find conflicts and missing references."""
    header: dict[str, Any] = {}
    counts: Counter[str] = Counter()
    ids: dict[str, set[Any]] = {t.name: set() for t in TYPES}
    unique_seen: dict[tuple[str, int], set[tuple[Any, ...]]] = {}
    conflicts: list[tuple[Line, str]] = []
    refs: dict[str, set[Any]] = {t.name: set() for t in TYPES}
    batch: list[Line] = []

    def check(batch: list[Line]) -> None:
        if batch:
            for line, _existing, reason in classify_lines(batch):
                if reason is not None:
                    conflicts.append((line, reason))

    for item in plan_lines(path):
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
    return Plan(header, counts, ids, conflicts, missing)


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
    for start in range(0, len(listed), LOOKUP_CHUNK):
        chunk = listed[start : start + LOOKUP_CHUNK]
        found = rtype.model._default_manager.filter(pk__in=chunk).values_list("pk", flat=True)
        absent -= set(found)
    return absent


def _existing(rtype: RecordType, lines: Sequence[Line]) -> dict[Any, dict[str, Any]]:
    """Database rows (attname -> value) matching the lines by primary key or unique key."""
    manager = rtype.model._default_manager
    rows: dict[Any, dict[str, Any]] = {}

    def add(found: QuerySet[Any]) -> None:
        for values in found.values_list(*rtype.attnames):
            row = dict(zip(rtype.attnames, values, strict=True))
            rows[row[rtype.pk]] = row

    pks = [line.pk for line in lines]
    for start in range(0, len(pks), LOOKUP_CHUNK):
        add(manager.filter(pk__in=pks[start : start + LOOKUP_CHUNK]))
    for columns in rtype.unique:
        # Narrow by the first column only (an OR of pairs would be too deep for SQLite).
        firsts = sorted({line.values[columns[0]] for line in lines})
        for start in range(0, len(firsts), LOOKUP_CHUNK):
            add(manager.filter(**{f"{columns[0]}__in": firsts[start : start + LOOKUP_CHUNK]}))
    return rows


def classify_lines(
    lines: Sequence[Line],
) -> list[tuple[Line, dict[str, Any] | None, str | None]]:
    """For each line: the database row it matches (None: new) and why it conflicts (or None)."""
    rtype = lines[0].rtype
    existing = _existing(rtype, lines)
    by_unique = [
        {tuple(row[c] for c in columns): row for row in existing.values()}
        for columns in rtype.unique
    ]
    out: list[tuple[Line, dict[str, Any] | None, str | None]] = []
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
