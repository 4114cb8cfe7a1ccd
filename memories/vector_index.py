"""The sqlite-vec index of memory embeddings (the vec0 table ``memories_vec``).

Layout, chosen by measurement (2 cores, 384-d float32, see the foundation note):
``namespace`` is a vec0 *partition key*, so a namespace's KNN scans only that
namespace's vectors, and ``chunk_size=8`` keeps the per-partition allocation
small. 2,000 namespaces of one vector: 26 MB (chunk 8) vs 3.2 GB (default 1024);
one namespace of 50k among 100k: ~60 ms/query (chunk 8) vs ~50 ms (chunk 64).

The table's dimension is fixed at creation, so the table is created for the
configured embedder and its fingerprint is recorded in ``VectorIndexState``;
``reindex`` rebuilds both. A mismatch is a start-up error (spaceduck.checks).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
from django.db import connection

from spaceduck.providers.embeddings.base import Fingerprint

INDEX_NAME = "memories"
VEC_TABLE = "memories_vec"
CHUNK_SIZE = 8

_CREATE_SQL = (
    "CREATE VIRTUAL TABLE memories_vec USING vec0("
    "memory_id integer primary key, namespace text partition key, "
    "embedding float[{dims}] distance_metric=cosine, chunk_size={chunk})"
)
_DROP_SQL = "DROP TABLE IF EXISTS memories_vec"
_TABLE_SQL = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'memories_vec'"
_DELETE_SQL = "DELETE FROM memories_vec WHERE memory_id = %s"
_INSERT_SQL = "INSERT INTO memories_vec(memory_id, namespace, embedding) VALUES (%s, %s, %s)"
_KNN_SQL = (
    "SELECT memory_id, distance FROM memories_vec "
    "WHERE embedding MATCH %s AND k = %s AND namespace = %s ORDER BY distance"
)
_DIMS = re.compile(r"float\[(\d+)\]")


def create_table(cursor: object, dimensions: int) -> None:
    if not isinstance(dimensions, int) or dimensions < 1:
        raise ValueError(f"vector dimensions must be a positive integer, got {dimensions!r}")
    cursor.execute(_CREATE_SQL.format(dims=dimensions, chunk=CHUNK_SIZE))  # type: ignore[attr-defined]


def drop_table(cursor: object) -> None:
    cursor.execute(_DROP_SQL)  # type: ignore[attr-defined]


def table_dimensions() -> int | None:
    """The dimension the vec0 table was created with, or None when it does not exist."""
    with connection.cursor() as cursor:
        row = cursor.execute(_TABLE_SQL).fetchone()
    if row is None:
        return None
    match = _DIMS.search(row[0])
    return int(match.group(1)) if match else None


def as_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def upsert(rows: Iterable[tuple[int, str, np.ndarray]]) -> None:
    """Store vectors; vec0 has no UPSERT, so an existing row is deleted first."""
    with connection.cursor() as cursor:
        for memory_id, namespace, vector in rows:
            cursor.execute(_DELETE_SQL, [memory_id])
            cursor.execute(_INSERT_SQL, [memory_id, namespace, as_blob(vector)])


def delete(memory_ids: Sequence[int]) -> None:
    with connection.cursor() as cursor:
        for memory_id in memory_ids:
            cursor.execute(_DELETE_SQL, [memory_id])


def knn(namespace: str, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` nearest memories of one namespace as (memory id, cosine similarity)."""
    if k <= 0:
        return []
    with connection.cursor() as cursor:
        rows = cursor.execute(_KNN_SQL, [as_blob(vector), k, namespace]).fetchall()
    return [(int(memory_id), 1.0 - float(distance)) for memory_id, distance in rows]


def fingerprint_problem(configured: Fingerprint) -> str | None:
    """Why the stored vectors cannot be used with ``configured``, or None when they can."""
    from spaceduck.models import VectorIndexState

    state = VectorIndexState.objects.filter(name=INDEX_NAME).first()
    if state is None:
        return None
    if state.target_dimensions is not None:
        return (
            f"a reindex to {state.target_provider}/{state.target_model}/"
            f"{state.target_dimensions}d was interrupted"
        )
    stored = Fingerprint(state.provider, state.model, state.dimensions)
    if stored != configured:
        return (
            f"the vector index holds {stored} vectors but the configured embedder is {configured}"
        )
    return None
