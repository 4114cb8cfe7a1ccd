"""Import, second half: writing the plan's new records in batches, then the indexes
(``manage.py import``)."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.color import no_style
from django.db import connection, transaction
from tqdm import tqdm

from memories.store import keyword_index, vector_index
from memories.upkeep import integrity
from notes.services import backfill_sql
from spaceduck.core.providers import get_embedder
from spaceduck.ops.transfer.formats import (
    BATCH_SIZE,
    LOOKUP_CHUNK,
    MAX_LISTED_CONFLICTS,
    TYPES,
    RecordType,
    TransferError,
    encoder,
)
from spaceduck.ops.transfer.import_plan import (
    ImportResult,
    Line,
    Plan,
    classify_lines,
    make_plan,
    plan_lines,
)

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
    plan = make_plan(source, batch_size)
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


def _conflict_message(conflicts: list[tuple[Line, str]], *, meanwhile: bool = False) -> str:
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


def _check_required(source: Path, plan: Plan, target: str, keys: set[Any]) -> None:
    for item in plan_lines(source):
        if not isinstance(item, Line):
            continue
        for attname, (ref, nullable) in item.rtype.references.items():
            if ref == target and not nullable and item.values[attname] in keys:
                raise TransferError(
                    f"{item.where}: {attname} {item.values[attname]!r} is neither in the file "
                    "nor in the database"
                )


class _Writer:
    def __init__(self, plan: Plan, *, on_conflict: str, batch_size: int) -> None:
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
        batch: list[Line] = []
        for item in plan_lines(source):
            if not isinstance(item, Line):
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

    def _flush(self, lines: list[Line]) -> None:
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
            new: list[Line] = []
            for line, row, reason in classify_lines(lines):
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

    def _defer(self, line: Line, row: dict[str, Any] | None) -> None:
        for attname in line.rtype.deferred:
            value = line.values[attname]
            if value is not None and (row is None or row[attname] is None):
                self.deferred.append((attname, line.pk, value))

    def _insert(self, rtype: RecordType, lines: list[Line]) -> None:
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

    def _backfill_notes(self, lines: list[Line]) -> None:
        """Notes already in the database of a newly enabled kind (enable_note_search's step)."""
        with connection.cursor() as cursor:
            for line in lines:
                cursor.execute(backfill_sql(), [line.pk])
                self.result.search_kinds_enabled.append(str(line.pk))

    def _store_vectors(self, lines: list[Line]) -> None:
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


def _complete_indexes(plan: Plan, writer: _Writer, progress: bool) -> tuple[int, int]:
    """Embed the file's memories that have no vector yet; index any missing keyword rows."""
    in_file = set(writer.memory_ids) - writer.skipped_memories
    if not in_file:
        return 0, 0
    problems = integrity.find_problems()
    to_embed = sorted(in_file & {*problems.missing_vectors, *problems.misplaced_vectors})
    to_index = sorted(in_file & set(problems.missing_keyword))
    indexed = 0
    for start in range(0, len(to_index), LOOKUP_CHUNK):
        with transaction.atomic():
            indexed += keyword_index.index_rows(to_index[start : start + LOOKUP_CHUNK])
    quiet = not progress or not to_embed
    with tqdm(total=len(to_embed), unit="memory", disable=quiet, desc="embed") as bar:
        embedded = integrity.embed_missing(to_embed, batch_size=256, on_embedded=bar.update)
    return embedded, indexed
