"""Export: one read snapshot of the database written as the format's JSON lines
(``manage.py export``, the dashboard's download)."""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import IO, Any

from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone
from tqdm import tqdm

from memories.store import vector_index
from spaceduck.core.namespaces import InvalidNamespace, namespace_kind
from spaceduck.models import VectorIndexState
from spaceduck.ops.namespace_names import existing_or_canonical
from spaceduck.ops.transfer.formats import (
    BATCH_SIZE,
    BY_NAME,
    FORMAT,
    TYPES,
    VERSION,
    RecordType,
    TransferError,
    open_text,
    to_file,
)

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
        with open_text(Path(tmp_name), "w", gz=target.suffix == ".gz") as out:
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
        # A name stored before today's rules can still be exported, to be corrected.
        return existing_or_canonical(namespace)
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
            record[str(f.attname)] = to_file(f, value)
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
