"""The sqlite-vec index of memory embeddings (the vec0 table ``memories_vec``).

Layout, chosen by measurement (2 cores, 384-d float32, see the foundation note):
``namespace`` is a vec0 *partition key*, so a namespace's KNN scans only that
namespace's vectors, and ``chunk_size=8`` keeps the per-partition allocation
small. 2,000 namespaces of one vector: 26 MB (chunk 8) vs 3.2 GB (default 1024);
one namespace of 50k among 100k: ~60 ms/query (chunk 8) vs ~50 ms (chunk 64).

The table's dimension is fixed at creation, so the table is created for the
configured embedder and its fingerprint is recorded in ``VectorIndexState``;
``reindex`` rebuilds both. A mismatch is a start-up error (spaceduck.ops.checks).

Fast path: ``search``. vec0 stays the store of record; each process keeps an
exact in-memory copy of the namespaces it searches (ids + a float32 matrix whose
rows are the unit vectors, so cosine = dot product) and answers with one
matrix-vector product and ``argpartition`` (from QUANTIZED_MIN_VECTORS: int8 codes
first, the shortlist scored exactly). One vector per row keeps each vector's bytes
together: re-scoring a shortlist reads a few cache lines per vector, where a column
layout read one per dimension (~2x the time); the full product, only used below the
codes' threshold, is ~10% slower than over columns with one BLAS thread (/tmp probe).
``manage.py bench vectors`` compares it with a bare numpy scan and with the vec0 KNN
(~145 ms at 100k).

Staying current, across processes (web server, huey worker) and threads:
every vector write, in the same transaction, bumps its namespace's counter in
``memories_vector_version`` and logs the changed memory ids under the new
value in ``memories_vector_change`` (``upsert``/``delete`` here; the
``memories_vec_ad`` trigger when memory rows are deleted; migration 0004). The
row keyed ``""`` is the table's epoch, bumped when ``recreate_table`` replaces
the table. Each search reads the two counters (one indexed query). When the
namespace's moved on, the copy catches up from the log: the changed ids' current
vectors are read by primary key and patched in. A reload from vec0 happens only
on a cold start, a new epoch, a pruned log (``LOG_VERSIONS``) or a large gap.
A copy is shared between threads only when it was read outside any transaction
and the counters did not move while reading, so it is exactly that version.

Quantized first pass: from ``QUANTIZED_MIN_VECTORS`` a copy also holds int8 codes
of its vectors (``_Codes``, one row and one scale per vector); ``scan`` ranks the
namespace over the codes with SIMD integer dot products (simsimd: a quarter of the
bytes the float32 product reads) and scores only the best ``_shortlist(k)`` exactly,
so the hits and their cosines are exact values of the float32 vectors; only which
memories reach the shortlist depends on the codes (``bench recall`` prints the
agreement with the exact top k: 1.000 at 100k random vectors).

Memory: a cached namespace costs n x dims x 4 bytes plus ~1/8 headroom for
appends (100k x 384 x 4 B = 154 MB), and n x (dims + 4) bytes more for the codes
of a large one (+25%). ``MAX_CACHED_VECTORS`` bounds all cached
rows together; the least recently searched namespaces are evicted first (a
single namespace above the bound is still cached, alone). A cold load peaks at
about twice the namespace's size while it is assembled.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import simsimd
from django.conf import settings
from django.db import DataError, connection, transaction

from spaceduck.core.db.fast import hot_cursor
from spaceduck.core.providers.embeddings.base import Fingerprint

Ids = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]

# How far below the k-th float32 score a column is still scored exactly (_Snapshot.best):
# a float32 dot product of two 384-d unit vectors is off by at most ~2.3e-5 (384 x 2^-24).
_SHORTLIST_MARGIN = 1e-4
Version = tuple[int, int]  # (table epoch, namespace counter)
Changes = dict[int, Matrix | None]  # memory id -> its current unit vector, None when gone
Key = tuple[str, str]  # (database name, namespace)

INDEX_NAME = "memories"
VEC_TABLE = "memories_vec"
CHUNK_SIZE = 8
MAX_CACHED_VECTORS = 2_000_000  # ~3 GB of 384-d float32 rows over all cached namespaces
# Versions of change log kept per namespace; the trigger in migration 0004 uses the same.
LOG_VERSIONS = 1000
# Catch up from the log only over this many versions; a bigger gap reloads.
MAX_CATCH_UP = 256

_EPOCH = ""  # version row of the table itself; never a valid namespace
_DEAD = -1  # id of a deleted row in a cached copy (memory ids are positive)
_MIN_HEADROOM = 256  # free rows kept after a load or a growth, so appends rarely copy
_FETCH_BATCH = 1024  # rows (or vec0 chunks) per fetchmany while loading

# The quantized first pass (``_Codes``): from this many vectors a namespace is scanned
# over int8 codes (a quarter of the float32 bytes, SIMD integer dot products), then the
# shortlist is scored exactly; below it the float32 product is as cheap. Measured with one
# BLAS thread (as serving processes run), k=20, random 384-d vectors, quantized / float32
# p50: 0.99x at 5k, 0.76x at 10k, 0.61x at 20k, 0.65x at 50k (/tmp probe, busy machine).
QUANTIZED_MIN_VECTORS = 10_000
# The shortlist the codes keep for the exact scores: k x this, at least _SHORTLIST_MIN.
_SHORTLIST_FACTOR = 3
_SHORTLIST_MIN = 64
_SHORTLIST_PER = 8192  # one more exactly scored memory per this many in the namespace
# sqlite-vec versions whose shadow-table layout _read_shadow decodes (checked by
# tests/memories/test_vector_cache.py against the public SELECT).
_SHADOW_FORMATS = frozenset({"v0.1.9"})

_CREATE_SQL = (
    "CREATE VIRTUAL TABLE memories_vec USING vec0("
    "memory_id integer primary key, namespace text partition key, "
    "embedding float[{dims}] distance_metric=cosine, chunk_size={chunk})"
)
_DROP_SQL = "DROP TABLE IF EXISTS memories_vec"
_TABLE_SQL = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'memories_vec'"
_DELETE_SQL = "DELETE FROM memories_vec WHERE memory_id = %s"
_INSERT_SQL = "INSERT INTO memories_vec(memory_id, namespace, embedding) VALUES (%s, %s, %s)"
_NAMESPACE_OF_SQL = "SELECT namespace FROM memories_vec WHERE memory_id = %s"
_ROW_SQL = "SELECT namespace, embedding FROM memories_vec WHERE memory_id = %s"
_KNN_SQL = (
    "SELECT memory_id, distance FROM memories_vec "
    "WHERE embedding MATCH %s AND k = %s AND namespace = %s ORDER BY distance"
)
_VERSIONS_SQL = "SELECT namespace, version FROM memories_vector_version WHERE namespace IN (%s, %s)"
_BUMP_SQL = (
    "INSERT INTO memories_vector_version AS t(namespace, version) VALUES (%s, 1) "
    "ON CONFLICT(namespace) DO UPDATE SET version = t.version + 1 RETURNING version"
)
_LOG_SQL = "INSERT INTO memories_vector_change(namespace, version, memory_id) VALUES (%s, %s, %s)"
_PRUNE_SQL = "DELETE FROM memories_vector_change WHERE namespace = %s AND version <= %s"
_CHANGES_SQL = (
    "SELECT version, memory_id FROM memories_vector_change "
    "WHERE namespace = %s AND version > %s AND version <= %s"
)
# The public way to read a namespace. vec0 does not use the partition key for a
# plain SELECT: it scans every vector of every namespace (measured: 1.2 s for a
# 100-row namespace, 2.6 s for a 100k one, in a 200k table).
_LOAD_SQL = "SELECT memory_id, embedding FROM memories_vec WHERE namespace = %s"
# The fast way: the chunks of one partition straight from vec0's shadow tables
# (0.02 s and 0.25 s for the same two loads). Used only for _SHADOW_FORMATS.
_SHADOW_LOAD_SQL = (
    "SELECT c.size, c.validity, c.rowids, v.vectors FROM memories_vec_chunks AS c "
    "JOIN memories_vec_vector_chunks00 AS v ON v.rowid = c.chunk_id WHERE c.partition00 = %s"
)
_RUNTIME_VERSION_SQL = "SELECT vec_version()"
_INFO_TABLE_SQL = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memories_vec_info'"
_CREATE_VERSION_SQL = "SELECT value FROM memories_vec_info WHERE key = 'CREATE_VERSION'"
_DIMS = re.compile(r"float\[(\d+)\]")

# PostgreSQL's approximate index (pgvector HNSW, cosine). Namespaces of at least
# settings.VECTOR_INDEX_MIN_ROWS vectors (1.5M: below it the copy is exact and, with its
# int8 codes, fast enough; see docs/architecture.md) are searched through it instead of
# the in-process copy (index_scan): no process holds their vectors, and a query reads a
# few thousand of them. ef_search is the candidate list a query walks (recall against
# speed); iterative scans go on walking while the namespace filter leaves too few rows.
HNSW_INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS memories_vec_hnsw ON memories_vec "
    "USING hnsw (embedding vector_cosine_ops)"
)
_PG_COUNT_SQL = "SELECT coalesce(sum(n), 0) FROM memories_namespace_count WHERE namespace = %s"
# The query's settings for this transaction only, in one round trip.
_PG_EXACT_SETTINGS_SQL = "SELECT set_config('enable_indexscan', 'off', true)"
_PG_ANN_SETTINGS_SQL = (
    "SELECT set_config('hnsw.ef_search', %s, true), "
    "set_config('hnsw.iterative_scan', 'relaxed_order', true)"
)
_PG_COSINES_SQL = (
    "SELECT memory_id, 1 - (embedding <=> %s::vector) FROM memories_vec "
    "WHERE namespace = %s AND memory_id = ANY(%s)"
)

# PostgreSQL (SPACEDUCK_DATABASE_URL): a plain table with a pgvector column, read back
# with vector_send (a 4-byte header, then big-endian float4s) so that a batch of rows
# decodes with one numpy view (_decode), and written as text ('[0.1, ...]').
_PG_CREATE_SQL = [
    "CREATE TABLE memories_vec (memory_id bigint PRIMARY KEY, namespace text NOT NULL, "
    "embedding vector({dims}) NOT NULL)",
    "CREATE INDEX memories_vec_namespace_idx ON memories_vec (namespace)",
]  # the HNSW index only once a namespace needs it (ensure_index)
_HNSW_EXISTS_SQL = "SELECT to_regclass('memories_vec_hnsw') IS NOT NULL"
_LARGEST_NAMESPACE_SQL = (
    "SELECT coalesce(max(total), 0) FROM "
    "(SELECT sum(n) AS total FROM memories_namespace_count GROUP BY namespace) AS t"
)
_PG_TABLE_SQL = (
    "SELECT a.atttypmod FROM pg_attribute AS a "
    "WHERE a.attrelid = to_regclass('memories_vec') AND a.attname = 'embedding'"
)
_PG_ROW_SQL = "SELECT namespace, vector_send(embedding) FROM memories_vec WHERE memory_id = %s"
_PG_LOAD_SQL = "SELECT memory_id, vector_send(embedding) FROM memories_vec WHERE namespace = %s"
_PG_KNN_SQL = (
    "SELECT memory_id, embedding <=> %s::vector AS distance FROM memories_vec "
    "WHERE namespace = %s ORDER BY distance, memory_id DESC LIMIT %s"
)
_PG_BLOBS_SQL = (
    "SELECT memory_id, vector_send(embedding) FROM memories_vec WHERE memory_id IN ({ids})"
)


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def _sql(sqlite: str, postgresql: str) -> str:
    return postgresql if _postgres() else sqlite


def _encode(vector: np.ndarray) -> bytes | str:
    """A vector as the table takes it: float32 bytes (vec0), or pgvector's text form."""
    if _postgres():
        return json.dumps(np.asarray(vector, dtype=np.float32).tolist())
    return as_blob(vector)


def _decode(blob: bytes, count: int) -> Matrix:
    """``count`` stored vectors, concatenated as the table returns them, one per row."""
    if not _postgres():
        return np.frombuffer(blob, dtype=np.float32).reshape(count, -1)
    # vector_send: int16 dims + int16 unused (one float's width), then the floats.
    rows = np.frombuffer(blob, dtype=">f4").reshape(count, -1)
    return np.ascontiguousarray(rows[:, 1:], dtype=np.float32)


class DimensionMismatch(ValueError):
    """A vector of another length than the index's (an embedder switch in progress)."""


def create_table(cursor: object, dimensions: int) -> None:
    if not isinstance(dimensions, int) or dimensions < 1:
        raise ValueError(f"vector dimensions must be a positive integer, got {dimensions!r}")
    if _postgres():
        for sql in _PG_CREATE_SQL:
            cursor.execute(sql.format(dims=dimensions))  # type: ignore[attr-defined]
        return
    cursor.execute(_CREATE_SQL.format(dims=dimensions, chunk=CHUNK_SIZE))  # type: ignore[attr-defined]


def drop_table(cursor: object) -> None:
    cursor.execute(_DROP_SQL)  # type: ignore[attr-defined]


def recreate_table(cursor: Any, dimensions: int) -> None:
    """Replace the table (new dimension); every process's cached copies become stale."""
    drop_table(cursor)
    create_table(cursor, dimensions)
    _bump(cursor, _EPOCH)


def table_dimensions() -> int | None:
    """The dimension the vec0 table was created with, or None when it does not exist."""
    if _postgres():
        with connection.cursor() as cursor:
            found = cursor.execute(_PG_TABLE_SQL).fetchone()
        return None if found is None else int(found[0])
    with connection.cursor() as cursor:
        row = cursor.execute(_TABLE_SQL).fetchone()
    if row is None:
        return None
    match = _DIMS.search(row[0])
    return int(match.group(1)) if match else None


def as_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def upsert(rows: Iterable[tuple[int, str, np.ndarray]], *, new: bool = False) -> None:
    """Store vectors; vec0 has no UPSERT, so an existing row is deleted first.

    ``new``: the memories were inserted in the caller's transaction, so none has a vector
    yet and nothing is looked up (a vector already there fails as a duplicate key).
    """
    latest = {int(memory_id): (namespace, vector) for memory_id, namespace, vector in rows}
    # No savepoint when nested: every caller (a memory write, a reindex batch)
    # holds its own transaction and lets a failure roll all of it back anyway.
    with transaction.atomic(savepoint=False), hot_cursor() as cursor:
        if _postgres():
            replaced = {} if new else _pg_remove(cursor, list(latest))
            _pg_write(cursor, latest, replaced)
            return
        changed: dict[str, set[int]] = {}
        for memory_id, (namespace, vector) in latest.items():
            previous = None if new else _namespace_of(cursor, memory_id)
            if previous is not None:
                cursor.execute(_DELETE_SQL, [memory_id])
                changed.setdefault(previous, set()).add(memory_id)
            cursor.execute(_INSERT_SQL, [memory_id, namespace, _encode(vector)])
            changed.setdefault(namespace, set()).add(memory_id)
        _record(cursor, changed)


def delete(memory_ids: Sequence[int]) -> None:
    changed: dict[str, set[int]] = {}
    with transaction.atomic(), hot_cursor() as cursor:
        if _postgres():
            _pg_write(cursor, {}, _pg_remove(cursor, [int(i) for i in memory_ids]))
            return
        for memory_id in memory_ids:
            namespace = _namespace_of(cursor, memory_id)
            if namespace is not None:
                cursor.execute(_DELETE_SQL, [memory_id])
                changed.setdefault(namespace, set()).add(memory_id)
        _record(cursor, changed)


def knn(namespace: str, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` nearest memories of one namespace as (memory id, cosine similarity), by the
    database's own exact query (checks and tests: the reference for ``search``): vec0's KNN;
    on PostgreSQL a scan with index scans off, since the planner may otherwise choose the
    HNSW index once statistics say so, which is approximate and, with the namespace filtered
    after it, can return fewer than k rows."""
    if k <= 0:
        return []
    if _postgres():
        rows = _pg_rows(
            (_PG_EXACT_SETTINGS_SQL, []), (_PG_KNN_SQL, [_encode(vector), namespace, k])
        )
    else:
        with connection.cursor() as cursor:
            rows = cursor.execute(_KNN_SQL, [as_blob(vector), k, namespace]).fetchall()
    return [(int(memory_id), 1.0 - float(distance)) for memory_id, distance in rows]


def search(
    namespace: str,
    vector: np.ndarray,
    k: int,
    *,
    candidate_ids: Collection[int] | None = None,
) -> list[tuple[int, float]]:
    """The ``k`` nearest memories of one namespace as (memory id, cosine similarity), best first.

    Exact, like ``knn``, but from this process's cached copy of the namespace.
    ``candidate_ids`` restricts the search to those memories.
    """
    if candidate_ids is None:
        return scan(namespace, vector, k).hits
    if k <= 0 or not namespace or not candidate_ids:
        return []
    state = _pg_state(namespace)
    if _indexed(namespace, state):
        found = _cosines_sql(namespace, vector, candidate_ids)
        return sorted(found.items(), key=lambda hit: (-hit[1], -hit[0]))[:k]
    return _checked(_snapshot(namespace, state), vector).top_k(_unit(vector), k, candidate_ids)


@dataclass(frozen=True)
class Scan:
    """One namespace scored against one query: the ``hits`` (``search``'s top k) and every
    other memory's cosine, read back by ``cosines`` at no further cost."""

    hits: list[tuple[int, float]]
    snapshot: _Snapshot | None = None
    query: Matrix | None = None  # the unit query vector the snapshot was scored against
    # A namespace searched through PostgreSQL's index: cosines are read from the table.
    indexed: tuple[str, np.ndarray] | None = None
    # memory id -> cosine, already scored exactly by the scan (the codes' shortlist).
    scored: dict[int, float] = field(default_factory=dict)

    def cosines(self, memory_ids: Collection[int]) -> dict[int, float]:
        """memory id -> cosine with the query, for those of ``memory_ids`` with a vector.

        Scored exactly (``_Snapshot.exact``), as the hits are: the scan's float32 scores
        depend on each column's place in the copy (~0.4 ms for 80 memories at 100k)."""
        if self.indexed is not None and memory_ids:
            return _cosines_sql(*self.indexed, memory_ids)
        if self.snapshot is None or self.query is None or not memory_ids:
            return {}
        known = {i: self.scored[i] for i in memory_ids if i in self.scored}
        rest = [i for i in memory_ids if i not in known]
        if not rest:
            return known
        wanted = np.unique(np.fromiter(rest, dtype=np.int64, count=len(rest)))
        at = self.snapshot.positions(wanted)
        exact = self.snapshot.exact(self.query, at)
        return known | dict(zip(self.snapshot.ids[at].tolist(), exact.tolist(), strict=True))


def scan(namespace: str, vector: np.ndarray, k: int) -> Scan:
    """``search`` without candidates, keeping every memory's score for ``Scan.cosines``."""
    if k <= 0 or not namespace:
        return Scan([])
    state = _pg_state(namespace)
    if _indexed(namespace, state):
        return Scan(index_scan(namespace, vector, k), indexed=(namespace, vector))
    snapshot = _checked(_snapshot(namespace, state), vector)
    if snapshot.size == snapshot.dead.size:
        return Scan([])
    query = _unit(vector)
    if snapshot.codes is not None and _quantized_pays(snapshot, k):
        hits, scored = snapshot.quantized_best(query, k)
        return Scan(hits, snapshot, query, scored=scored)
    scores = snapshot.scores(query)
    everything = np.arange(snapshot.size)
    return Scan(snapshot.best(query, everything, scores, k), snapshot, query)


def _quantized_pays(snapshot: _Snapshot, k: int) -> bool:
    """The codes pay while the shortlist stays a small part of the namespace."""
    alive = snapshot.size - snapshot.dead.size
    return _shortlist(k, alive) * 8 <= alive


def _shortlist(k: int, size: int = 0) -> int:
    """How many of the codes' best are scored exactly: a few times k, and more in a large
    namespace, where more memories crowd the k-th score (1M: 122 for k=20)."""
    return max(k * _SHORTLIST_FACTOR, _SHORTLIST_MIN, size // _SHORTLIST_PER)


def _indexed(namespace: str, state: _State | None = None) -> bool:
    """Whether the namespace is searched through PostgreSQL's HNSW index (large enough)."""
    if not _postgres():
        return False
    if state is not None:
        count = state.count
    else:
        with connection.cursor() as cursor:
            count = int(cursor.execute(_PG_COUNT_SQL, [namespace]).fetchone()[0])
    return count >= settings.VECTOR_INDEX_MIN_ROWS


# PostgreSQL: what a search reads before it scores, in one statement (one snapshot, one
# round trip where there were up to 5): the namespace's row count (``_indexed``), the
# counters, and the changes logged after the version of this process's copy, each with the
# changed memory's vector as it is now. Read in one snapshot, a copy caught up with them is
# exactly the counters' version: no second reading of the counters (``_shareable``).
_PG_STATE_SQL = (
    "SELECT 'v', namespace, version, NULL::bigint, NULL::bytea FROM memories_vector_version "
    "WHERE namespace IN (%s, %s) "
    "UNION ALL SELECT 'n', NULL, coalesce(sum(n), 0), NULL, NULL FROM memories_namespace_count "
    "WHERE namespace = %s "
    "UNION ALL SELECT 'c', v.namespace, c.version, c.memory_id, vector_send(v.embedding) "
    "FROM memories_vector_change c LEFT JOIN memories_vec v ON v.memory_id = c.memory_id "
    "WHERE c.namespace = %s AND c.version > %s AND c.version <= %s"
)


@dataclass(frozen=True)
class _State:
    count: int
    version: Version
    since: Version | None  # the cached copy's version the changes were read after
    logged: list[tuple[int, int, str | None, bytes | None]]

    def changes(self, namespace: str) -> Changes | None:
        """As ``_changes``: None unless every version after ``since`` is logged."""
        if self.since is None:
            return None
        if {version for version, *_ in self.logged} != set(
            range(self.since[1] + 1, self.version[1] + 1)
        ):
            return None
        changes: Changes = {}
        for _, memory_id, where, blob in self.logged:
            alive = where == namespace and blob is not None
            changes[memory_id] = _stored_unit(_decode(bytes(blob), 1)[0]) if alive else None
        return changes


def _pg_state(namespace: str) -> _State | None:
    """The search's reads on PostgreSQL (``_PG_STATE_SQL``); None elsewhere."""
    if not _postgres() or not namespace:
        return None
    with _LOCK:
        cached = _CACHE.get(_key(namespace))
    since = cached.version if cached is not None else None
    after = since[1] if since is not None else 0
    until = after + MAX_CATCH_UP if since is not None else 0  # no copy: no changes read
    params = [_EPOCH, namespace, namespace, namespace, after, until]
    with hot_cursor() as cursor:
        rows = cursor.execute(_PG_STATE_SQL, params).fetchall()
    versions = {str(r[1]): int(r[2]) for r in rows if r[0] == "v"}
    count = next(int(r[2]) for r in rows if r[0] == "n")
    logged = [(int(r[2]), int(r[3]), r[1], r[4]) for r in rows if r[0] == "c"]
    version = (versions.get(_EPOCH, 0), versions.get(namespace, 0))
    return _State(count, version, since, logged)


def ensure_index() -> bool:
    """PostgreSQL: build the HNSW index once some namespace holds VECTOR_INDEX_MIN_ROWS
    memories (the periodic maintenance task); returns whether it was built now.

    Until then no graph is kept: every vector insert would update one that no search reads
    (2-6 ms a message, most of what PostgreSQL's ingest cost beyond SQLite's). Built
    CONCURRENTLY outside a transaction (writers go on); a large namespace searched before
    it exists is scanned exactly by PostgreSQL, slower but with the same answers."""
    if not _postgres():
        return False
    with connection.cursor() as cursor:
        if cursor.execute(_HNSW_EXISTS_SQL).fetchone()[0]:
            return False
        if (
            int(cursor.execute(_LARGEST_NAMESPACE_SQL).fetchone()[0])
            < settings.VECTOR_INDEX_MIN_ROWS
        ):
            return False
        concurrently = "" if connection.in_atomic_block else " CONCURRENTLY"
        cursor.execute(HNSW_INDEX_SQL.replace("CREATE INDEX", "CREATE INDEX" + concurrently, 1))
    return True


def index_scan(namespace: str, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` nearest memories by pgvector's HNSW index (approximate), best first."""
    ef_search = str(max(settings.VECTOR_INDEX_EF_SEARCH, k))
    rows = _pg_rows(
        (_PG_ANN_SETTINGS_SQL, [ef_search]), (_PG_KNN_SQL, [_encode(vector), namespace, k])
    )
    hits = [(int(memory_id), 1.0 - float(distance)) for memory_id, distance in rows]
    return sorted(hits, key=lambda hit: (-hit[1], -hit[0]))  # relaxed order: sort again


def _cosines_sql(
    namespace: str, vector: np.ndarray, memory_ids: Collection[int]
) -> dict[int, float]:
    ids = sorted({int(memory_id) for memory_id in memory_ids})
    rows = _pg_rows((_PG_COSINES_SQL, [_encode(vector), namespace, ids]))
    return {int(memory_id): float(cosine) for memory_id, cosine in rows}


def _pg_rows(*statements: tuple[str, list[Any]]) -> list[tuple[Any, ...]]:
    """The last statement's rows, all of them in one savepoint (a failed query leaves the
    caller's transaction usable); pgvector's "different vector dimensions" becomes
    DimensionMismatch, which recall retries (see _checked)."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            for sql, params in statements:
                cursor.execute(sql, params)
            return list(cursor.fetchall())
    except DataError as exc:
        raise DimensionMismatch(str(exc).splitlines()[0]) from None


def _checked(snapshot: _Snapshot, vector: np.ndarray) -> _Snapshot:
    if snapshot.size and snapshot.matrix.shape[1] != np.shape(vector)[-1]:
        # Seen only right after an embedder switch, before this process read the new setting.
        raise DimensionMismatch(
            f"the query has {np.shape(vector)[-1]} dimensions, the index's vectors "
            f"{snapshot.matrix.shape[1]}"
        )
    return snapshot


def cache_clear() -> None:
    """Forget every cached namespace (the next search of each reloads it)."""
    with _LOCK:
        _CACHE.clear()


def cache_info() -> dict[str, int]:
    """How much this process caches: namespaces and allocated rows (vectors)."""
    with _LOCK:
        return {"namespaces": len(_CACHE), "vectors": _cached_rows()}


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


# --- Counting, reading back, invalidating (integrity checks, export/import) -----
# vec0 answers count(*) and "every id" by scanning every vector (~2.6 s at 200k).
# Its rowids shadow table has one row per stored vector, keyed by the memory id,
# so for the layouts we know (_SHADOW_FORMATS) those questions cost an index scan.

_STORED_IDS_SHADOW_SQL = "SELECT rowid AS id FROM memories_vec_rowids"
_STORED_IDS_PUBLIC_SQL = "SELECT memory_id AS id FROM memories_vec"
# Vectors whose partition is not their memory's namespace: never found by a search.
_MISPLACED_SHADOW_SQL = (
    "SELECT r.rowid AS id FROM memories_vec_rowids AS r "
    "JOIN memories_vec_chunks AS c ON c.chunk_id = r.chunk_id "
    "JOIN memories_memory AS m ON m.id = r.rowid WHERE c.partition00 IS NOT m.namespace"
)
_MISPLACED_PUBLIC_SQL = (
    "SELECT v.memory_id AS id FROM memories_vec AS v "
    "JOIN memories_memory AS m ON m.id = v.memory_id WHERE v.namespace IS DISTINCT FROM m.namespace"
)
_BLOBS_SQL = "SELECT memory_id, embedding FROM memories_vec WHERE memory_id IN ({ids})"


def stored_ids_sql(cursor: Any) -> str:
    """A SELECT of the id (column ``id``) of every memory that has a vector, for subqueries."""
    return _STORED_IDS_SHADOW_SQL if _shadow_readable(cursor) else _STORED_IDS_PUBLIC_SQL


def misplaced_ids_sql(cursor: Any) -> str:
    """A SELECT of the ids (``id``) of memories whose vector is in another namespace's partition."""
    return _MISPLACED_SHADOW_SQL if _shadow_readable(cursor) else _MISPLACED_PUBLIC_SQL


def count_rows() -> int:
    """How many vectors the table holds."""
    with connection.cursor() as cursor:
        sql = f"SELECT count(*) FROM ({stored_ids_sql(cursor)})"
        return int(cursor.execute(sql).fetchone()[0])


def stored_blobs(memory_ids: Sequence[int]) -> dict[int, bytes]:
    """The stored vectors (float32 bytes, as written) of these memories, by memory id."""
    ids = ",".join(str(int(memory_id)) for memory_id in memory_ids)
    if not ids:
        return {}
    with connection.cursor() as cursor:
        rows = cursor.execute(_sql(_BLOBS_SQL, _PG_BLOBS_SQL).format(ids=ids)).fetchall()
    if _postgres():  # the same float32 bytes as vec0 stores, for export files
        return {int(i): as_blob(_decode(bytes(blob), 1)[0]) for i, blob in rows}
    return {int(memory_id): bytes(blob) for memory_id, blob in rows}


def invalidate_caches() -> None:
    """Make every process reload its cached namespaces (after a bulk import or repair).

    Bumps the table epoch, as ``recreate_table`` does, so copies cached by other
    processes are reloaded on their next search; this process's are dropped.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        _bump(cursor, _EPOCH)
    cache_clear()


# --- Versions and the change log --------------------------------------------------


def _namespace_of(cursor: Any, memory_id: int) -> str | None:
    row = cursor.execute(_NAMESPACE_OF_SQL, [memory_id]).fetchone()
    return None if row is None else str(row[0])


def _bump(cursor: Any, namespace: str) -> int:
    return int(cursor.execute(_BUMP_SQL, [namespace]).fetchone()[0])


def _record(cursor: Any, changed: dict[str, set[int]]) -> None:
    """One new version per changed namespace, logging which memories it changed."""
    for namespace, memory_ids in changed.items():
        version = _bump(cursor, namespace)
        cursor.executemany(_LOG_SQL, [(namespace, version, i) for i in sorted(memory_ids)])
        cursor.execute(_PRUNE_SQL, [namespace, version - LOG_VERSIONS])


# PostgreSQL: every write of one upsert/delete in two round trips at most, where a row at a
# time took 3 + 3 per namespace (look-up, delete, insert; bump, log, prune). The vectors
# that are replaced or deleted go in one statement, their namespaces coming back with them.
_PG_REMOVE_SQL = "DELETE FROM memories_vec WHERE memory_id = ANY(%s) RETURNING memory_id, namespace"
# Then per namespace one statement inserts its new vectors, bumps its counter, logs every
# changed id under the new value and prunes the log (the CTEs see one snapshot: the prune
# cannot remove what this statement logs, LOG_VERSIONS below it).
_PG_WRITE_SQL = (
    "WITH written AS (INSERT INTO memories_vec(memory_id, namespace, embedding) "
    "SELECT m, %(namespace)s, e::vector FROM unnest(%(new_ids)s::bigint[], %(vectors)s::text[]) "
    "AS u(m, e)), "
    "bumped AS (INSERT INTO memories_vector_version AS t(namespace, version) "
    "VALUES (%(namespace)s, 1) ON CONFLICT(namespace) DO UPDATE SET version = t.version + 1 "
    "RETURNING version), "
    "logged AS (INSERT INTO memories_vector_change(namespace, version, memory_id) "
    "SELECT %(namespace)s, bumped.version, m FROM bumped, unnest(%(changed)s::bigint[]) AS m), "
    "pruned AS (DELETE FROM memories_vector_change WHERE namespace = %(namespace)s "
    "AND version <= (SELECT version - %(keep)s FROM bumped)) "
    "SELECT version FROM bumped"
)


# PostgreSQL: the vector of a new memory, written in the statement that inserts the memory
# (a CTE named ``m`` returning its id): what upsert(..., new=True) writes (_PG_WRITE_SQL),
# as CTEs to add to that statement's WITH (dedup.store: one round trip for the three).
_PG_NEW_CTES = (
    "written AS (INSERT INTO memories_vec(memory_id, namespace, embedding) "
    "SELECT m.id, %s, %s::vector FROM m), "
    "bumped AS (INSERT INTO memories_vector_version AS t(namespace, version) "
    "VALUES (%s, 1) ON CONFLICT(namespace) DO UPDATE SET version = t.version + 1 "
    "RETURNING version), "
    "logged AS (INSERT INTO memories_vector_change(namespace, version, memory_id) "
    "SELECT %s, bumped.version, m.id FROM bumped, m), "
    "pruned AS (DELETE FROM memories_vector_change WHERE namespace = %s "
    "AND version <= (SELECT version - %s FROM bumped))"
)


def pg_new_vector(namespace: str, vector: np.ndarray) -> tuple[str, list[Any]]:
    """``_PG_NEW_CTES`` with its parameters, for the memory the CTE ``m`` inserts."""
    return _PG_NEW_CTES, [namespace, _encode(vector), namespace, namespace, namespace, LOG_VERSIONS]


def _pg_remove(cursor: Any, memory_ids: list[int]) -> dict[str, set[int]]:
    """Delete these memories' vectors: namespace -> the ids that had one there."""
    removed: dict[str, set[int]] = {}
    if memory_ids:
        for memory_id, namespace in cursor.execute(_PG_REMOVE_SQL, [memory_ids]).fetchall():
            removed.setdefault(str(namespace), set()).add(int(memory_id))
    return removed


def _pg_write(
    cursor: Any, rows: dict[int, tuple[str, np.ndarray]], removed: dict[str, set[int]]
) -> None:
    """Insert ``rows`` and record them with ``removed`` as one new version per namespace
    (namespaces in sorted order, so that two writers lock their counters in one order)."""
    new: dict[str, dict[int, np.ndarray]] = {}
    for memory_id, (namespace, vector) in rows.items():
        new.setdefault(namespace, {})[memory_id] = vector
    for namespace in sorted(set(new) | set(removed)):
        inserted = new.get(namespace, {})
        params = {
            "namespace": namespace,
            "new_ids": list(inserted),
            "vectors": [_encode(vector) for vector in inserted.values()],
            "changed": sorted(set(inserted) | removed.get(namespace, set())),
            "keep": LOG_VERSIONS,
        }
        cursor.execute(_PG_WRITE_SQL, params)


# One counter as a single value, for callers that read it inside a larger statement.
_VERSION_VALUE_SQL = (
    "SELECT coalesce(max(version), 0) FROM memories_vector_version WHERE namespace = %s"
)


def version_reads(namespace: str) -> list[tuple[str, list[Any]]]:
    """``namespace_version``'s (epoch, counter) as two single-value statements, for a caller
    that reads them in one round trip with its own (dedup on PostgreSQL)."""
    return [(_VERSION_VALUE_SQL, [_EPOCH]), (_VERSION_VALUE_SQL, [namespace])]


def _versions(cursor: Any, namespace: str) -> Version:
    found = dict(cursor.execute(_VERSIONS_SQL, [_EPOCH, namespace]).fetchall())
    return int(found.get(_EPOCH, 0)), int(found.get(namespace, 0))


def _changes(cursor: Any, namespace: str, since: int, until: int) -> Changes | None:
    """The current vectors of the memories changed after ``since``; None if the log is short."""
    logged = cursor.execute(_CHANGES_SQL, [namespace, since, until]).fetchall()
    if {version for version, _ in logged} != set(range(since + 1, until + 1)):
        return None  # pruned (or never logged): only a reload is safe
    changes: Changes = {}
    for memory_id in {int(memory_id) for _, memory_id in logged}:
        row = cursor.execute(_sql(_ROW_SQL, _PG_ROW_SQL), [memory_id]).fetchone()
        alive = row is not None and row[0] == namespace
        changes[memory_id] = _stored_unit(_decode(bytes(row[1]), 1)[0]) if alive else None
    return changes


def _committed_reads() -> bool:
    """True when this connection has no open transaction, so it reads only committed rows."""
    dbapi = connection.connection
    if dbapi is None or _postgres():
        # PostgreSQL in autocommit: outside an atomic block each statement commits alone.
        return connection.get_autocommit() and not connection.in_atomic_block
    return (
        connection.get_autocommit() and not connection.in_atomic_block and not dbapi.in_transaction
    )


# --- The per-process cache ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """An immutable view of one namespace at one version.

    ``ids`` and ``matrix`` have spare capacity past ``size``. The snapshot that
    replaces this one in the cache may append vectors there, in the same
    buffers, which this one never reads; deleting or replacing a vector copies
    ``ids`` and marks it ``_DEAD``. So a search never needs the lock while it
    computes.

    The vectors are the matrix's *rows*: (capacity, dims), C-contiguous, so the
    shortlist's exact scores (``exact``) read each vector's bytes together.
    """

    version: Version
    ids: Ids
    matrix: Matrix  # (capacity, dims): row i is the unit vector of ids[i]
    size: int
    dead: Ids  # positions of _DEAD rows in [:size], sorted
    # int8 codes of the rows, for the quantized first pass (large namespaces only).
    codes: _Codes | None = None
    # "by_id": (ids[:size] sorted, their positions), built by the first lookup by id.
    lookup: dict[str, tuple[Ids, Ids]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def capacity(self) -> int:
        return int(self.matrix.shape[0])

    def positions(self, wanted: Ids) -> Ids:
        """The rows of those of ``wanted`` (distinct ids) this snapshot holds.

        A binary search over the ids sorted once per snapshot (~2 ms at 100k, then ~20 us
        a lookup, where np.isin took ~1 ms every time). Two threads may sort at once: both
        store the same arrays."""
        by_id = self.lookup.get("by_id")
        if by_id is None:
            order = np.argsort(self.ids[: self.size], kind="stable")
            by_id = self.lookup["by_id"] = (self.ids[: self.size][order], order)
        ordered, order = by_id
        if ordered.size == 0:
            return order
        at = np.minimum(np.searchsorted(ordered, wanted), ordered.size - 1)
        hit = (ordered[at] == wanted) & (wanted != _DEAD)
        return np.sort(order[at[hit]])

    def top_k(
        self, query: Matrix, k: int, candidate_ids: Collection[int]
    ) -> list[tuple[int, float]]:
        """The ``k`` best of ``candidate_ids`` (the whole namespace: ``scores``)."""
        if self.size == self.dead.size:
            return []
        if query.shape[0] != self.matrix.shape[1]:
            raise ValueError(
                f"query vector has {query.shape[0]} dimensions, the index {self.matrix.shape[1]}"
            )
        rows = self.matrix[: self.size]
        wanted = np.unique(np.fromiter(candidate_ids, dtype=np.int64, count=len(candidate_ids)))
        positions = self.positions(wanted)
        # Gathering many rows copies them; past a quarter a full product is cheaper.
        if positions.size * 4 > self.size:
            scores = (rows @ query)[positions]
        else:
            scores = rows[positions] @ query
        return self.best(query, positions, scores, k)

    def best(
        self, query: Matrix, positions: Ids, scores: Matrix, k: int
    ) -> list[tuple[int, float]]:
        """The ``k`` best (id, cosine) of the rows at ``positions``, best first, ties by
        the newer memory (higher id), every cosine from ``exact``.

        ``scores`` (BLAS's float32 product) only shortlists: every row within
        ``_SHORTLIST_MARGIN`` of the k-th score is scored again exactly, so the answer
        depends on the vectors alone, not on where the copy holds them (a fresh load, a
        copy caught up from the log, an import: the same list)."""
        alive = np.flatnonzero(scores != -np.inf)
        k = min(k, int(alive.size))
        if k == 0:
            return []
        scores = scores[alive]
        kth = np.partition(scores, scores.size - k)[scores.size - k]
        near = alive[scores >= kth - _SHORTLIST_MARGIN]
        ids = self.ids[positions[near]]
        cosines = self.exact(query, positions[near])
        order = np.lexsort((-ids, -cosines))[:k]
        return list(zip(ids[order].tolist(), cosines[order].tolist(), strict=True))

    def quantized_best(
        self, query: Matrix, k: int
    ) -> tuple[list[tuple[int, float]], dict[int, float]]:
        """``best`` over the whole namespace, reading a quarter of the bytes: the int8
        codes rank every row, the ``_shortlist(k)`` best are scored exactly (float64,
        ``exact``), and the ``k`` best of those are the answer. What the codes can get
        wrong is the order near the shortlist's end, far below the k-th (``bench recall``
        reports the agreement with the exact top k). Also every shortlisted id's cosine
        (``Scan.cosines`` reads them instead of scoring them again)."""
        assert self.codes is not None
        estimates = self.codes.scores(query, self.size)
        estimates[self.dead] = -np.inf
        alive = self.size - self.dead.size
        take = min(_shortlist(k, alive), alive)
        shortlist = np.sort(_best_positions(estimates, take))
        shortlist = shortlist[estimates[shortlist] != -np.inf]
        cosines = self.exact(query, shortlist)
        ids = self.ids[shortlist]
        order = np.lexsort((-ids, -cosines))[: min(k, shortlist.size)]
        hits = list(zip(ids[order].tolist(), cosines[order].tolist(), strict=True))
        return hits, dict(zip(ids.tolist(), cosines.tolist(), strict=True))

    def exact(self, query: Matrix, positions: Ids) -> npt.NDArray[np.float64]:
        """The cosines of the rows at ``positions``, the same wherever a row sits.

        BLAS rounds a row's dot product by its place in the matrix (its blocking), so
        the same two vectors could score 1 ulp apart in two copies and swap places in a
        tie. Here each product of two float32 values is exact in float64 and they are
        summed in dimension order (cumsum is sequential): one value per pair of vectors."""
        if positions.size == 0:
            return np.zeros(0)
        terms = self.matrix[positions].astype(np.float64)
        terms *= query.astype(np.float64)[None, :]
        return np.cumsum(terms, axis=1)[:, -1]

    def scores(self, query: Matrix) -> Matrix:
        """Every row's cosine with ``query`` (a unit vector); -inf for dead rows."""
        scores = self.matrix[: self.size] @ query
        scores[self.dead] = -np.inf
        return scores

    def with_changes(self, changes: Changes, version: Version, *, in_place: bool) -> _Snapshot:
        """This snapshot with ``changes`` applied.

        ``in_place`` appends into this snapshot's spare rows: only for the
        snapshot the cache holds, under the lock, as it is being replaced.
        """
        appends = [(memory_id, v) for memory_id, v in changes.items() if v is not None]
        dims = int(self.matrix.shape[1]) if self.capacity else _dims_of(appends)
        ids, dead = self._without(changes)
        matrix, size, codes = self.matrix, self.size + len(appends), self.codes
        if appends and (size > self.capacity or not in_place):
            ids, matrix = _grown(ids, matrix, self.size, size, dims)
            codes = codes.grown(self.size, matrix.shape[0]) if codes is not None else None
        for offset, (memory_id, vector) in enumerate(appends):
            ids[self.size + offset] = memory_id
            matrix[self.size + offset] = vector
        if codes is not None and appends:
            codes.put(self.size, matrix[self.size : size])
        elif codes is None and size >= QUANTIZED_MIN_VECTORS:
            codes = _Codes.of(matrix, size)
        snapshot = _Snapshot(version, ids, matrix, size, dead, codes)
        return snapshot.compacted() if dead.size > max(64, size // 4) else snapshot

    def _without(self, changes: Changes) -> tuple[Ids, Ids]:
        """``ids`` with the changed memories' old rows marked dead (copied when any is)."""
        changed = np.fromiter(changes, dtype=np.int64, count=len(changes))
        gone = np.flatnonzero(np.isin(self.ids[: self.size], changed))
        if gone.size == 0:
            return self.ids, self.dead
        ids = self.ids.copy()
        ids[gone] = _DEAD
        return ids, np.union1d(self.dead, gone)

    def compacted(self) -> _Snapshot:
        alive = np.flatnonzero(self.ids[: self.size] != _DEAD)
        rows = self.matrix[alive]
        return _assemble([(self.ids[alive], rows)], self.version, normalise=False)


_LOCK = threading.Lock()
# (database name, namespace) -> snapshot, least recently searched first.
_CACHE: OrderedDict[Key, _Snapshot] = OrderedDict()


def _key(namespace: str) -> Key:
    return str(connection.settings_dict["NAME"]), namespace


def _snapshot(namespace: str, state: _State | None = None) -> _Snapshot:
    """The namespace as this connection sees it now: cached, caught up, or loaded.
    ``state``: PostgreSQL's reads, done already (``_pg_state``)."""
    key = _key(namespace)
    with connection.cursor() as cursor:
        version = _versions(cursor, namespace) if state is None else state.version
        with _LOCK:
            cached = _CACHE.get(key)
            if cached is not None and cached.version == version:
                _CACHE.move_to_end(key)
                return cached
        if cached is not None and _can_catch_up(cached.version, version):
            if state is not None and state.since == cached.version:
                changes = state.changes(namespace)
                if changes is not None:  # read with the counters: exactly their version
                    return _caught_up(key, cached, changes, version, _committed_reads())
            changes = _changes(cursor, namespace, cached.version[1], version[1])
            if changes is not None:
                return _caught_up(key, cached, changes, version, _shareable(cursor, key, version))
        snapshot, version = _settled(cursor, namespace, _load(cursor, namespace, version), version)
        if _shareable(cursor, key, version):
            _put(key, snapshot)
    return snapshot


def _settled(
    cursor: Any, namespace: str, snapshot: _Snapshot, version: Version
) -> tuple[_Snapshot, Version]:
    """A fresh load brought up to the counters now, when writes committed while it loaded.

    Loading a large namespace takes seconds (1M vectors: ~9 s); with other processes
    writing, the counters always move meanwhile, and a copy dropped for that was loaded
    again by the next search, and the next (4 SQLite workers at 1M: 16.6 msg/s against
    145 for one). Every write the load saw committed before the counters are read here,
    so its memory is among the changes logged in (version, now]; applying them (each
    id's current vector; applying one twice changes nothing) gives the copy at ``now``.
    """
    if not _committed_reads():
        return snapshot, version
    now = _versions(cursor, namespace)
    if now == version or not _can_catch_up(version, now):
        return snapshot, version
    changes = _changes(cursor, namespace, version[1], now[1])
    if changes is None:
        return snapshot, version
    return snapshot.with_changes(changes, now, in_place=True), now  # not shared yet


def _can_catch_up(cached: Version, current: Version) -> bool:
    return cached[0] == current[0] and 0 < current[1] - cached[1] <= MAX_CATCH_UP


def _shareable(cursor: Any, key: Key, version: Version) -> bool:
    """Whether what was just read is exactly ``version``, committed: safe for every thread.

    An open transaction may hold writes that roll back. Outside one, unchanged
    counters after the reads prove that no write to the namespace committed
    while they ran.
    """
    return _committed_reads() and _versions(cursor, key[1]) == version


def _caught_up(
    key: Key, cached: _Snapshot, changes: Changes, version: Version, share: bool
) -> _Snapshot:
    with _LOCK:
        current = _CACHE.get(key)
        if share and current is cached:
            updated = cached.with_changes(changes, version, in_place=True)
            _store_locked(key, updated)
            return updated
    return cached.with_changes(changes, version, in_place=False)


def _put(key: Key, snapshot: _Snapshot) -> None:
    with _LOCK:
        current = _CACHE.get(key)
        if current is not None and current.version >= snapshot.version:
            return  # a racing thread installed the same or a newer version
        _store_locked(key, snapshot)


def _store_locked(key: Key, snapshot: _Snapshot) -> None:
    _CACHE[key] = snapshot
    _CACHE.move_to_end(key)
    total = _cached_rows()
    while total > MAX_CACHED_VECTORS and len(_CACHE) > 1:
        _, evicted = _CACHE.popitem(last=False)
        total -= evicted.capacity


def _cached_rows() -> int:
    return sum(snapshot.capacity for snapshot in _CACHE.values())


# --- Loading a namespace from vec0 ----------------------------------------------


def _load(cursor: Any, namespace: str, version: Version) -> _Snapshot:
    dims = table_dimensions()
    parts = _read_shadow(cursor, namespace, dims) if dims and _shadow_readable(cursor) else None
    if parts is None:
        parts = _read_public(cursor, namespace)
    return _assemble(parts, version)


def _shadow_readable(cursor: Any) -> bool:
    """Whether both the running sqlite-vec and the table's creator use a layout we decode."""
    if _postgres():
        return False  # a plain table: the public reads are the fast ones
    if cursor.execute(_RUNTIME_VERSION_SQL).fetchone()[0] not in _SHADOW_FORMATS:
        return False
    if cursor.execute(_INFO_TABLE_SQL).fetchone() is None:
        return False
    row = cursor.execute(_CREATE_VERSION_SQL).fetchone()
    return row is not None and row[0] in _SHADOW_FORMATS


def _read_shadow(cursor: Any, namespace: str, dims: int) -> list[tuple[Ids, Matrix]] | None:
    """The namespace's live rows from vec0's chunks, or None when a chunk looks unfamiliar."""
    parts: list[tuple[Ids, Matrix]] = []
    cursor.execute(_SHADOW_LOAD_SQL, [namespace])
    while batch := cursor.fetchmany(_FETCH_BATCH):
        part = _decode_chunks(batch, dims)
        if part is None:
            return None
        parts.append(part)
    return parts


def _decode_chunks(
    rows: list[tuple[int, bytes, bytes, bytes]], dims: int
) -> tuple[Ids, Matrix] | None:
    """vec0 chunks: ``size`` slots, a little-endian validity bitmap, int64 ids, float32 rows."""
    size = int(rows[0][0])
    bitmap = (size + 7) // 8
    expected = (size, bitmap, 8 * size, 4 * size * dims)
    if any((r[0], len(r[1]), len(r[2]), len(r[3])) != expected for r in rows):
        return None
    bits = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint8).reshape(len(rows), bitmap)
    valid = np.unpackbits(bits, axis=1, bitorder="little")[:, :size].reshape(-1).astype(bool)
    ids = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.int64)[valid]
    vectors = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(-1, dims)
    return ids, vectors[valid]


def _read_public(cursor: Any, namespace: str) -> list[tuple[Ids, Matrix]]:
    parts: list[tuple[Ids, Matrix]] = []
    cursor.execute(_sql(_LOAD_SQL, _PG_LOAD_SQL), [namespace])
    while batch := cursor.fetchmany(_FETCH_BATCH):
        ids = np.fromiter((row[0] for row in batch), dtype=np.int64, count=len(batch))
        blob = b"".join(bytes(row[1]) for row in batch)
        parts.append((ids, _decode(blob, len(batch))))
    return parts


def _assemble(
    parts: list[tuple[Ids, Matrix]], version: Version, *, normalise: bool = True
) -> _Snapshot:
    size = sum(len(ids) for ids, _ in parts)
    dims = int(parts[0][1].shape[1]) if size else 0
    capacity = size + max(_MIN_HEADROOM, size // 8) if size else 0
    ids_buffer = np.empty(capacity, dtype=np.int64)
    matrix = np.empty((capacity, dims), dtype=np.float32)
    at = 0
    for ids, rows in parts:  # rows: (n, dims), one vector per row as vec0 stores them
        ids_buffer[at : at + len(ids)] = ids
        matrix[at : at + len(ids)] = rows
        at += len(ids)
    if normalise:
        _normalise_rows(matrix[:size])
    codes = _Codes.of(matrix, size) if size >= QUANTIZED_MIN_VECTORS else None
    return _Snapshot(version, ids_buffer, matrix, size, np.empty(0, dtype=np.int64), codes)


def _grown(ids: Ids, matrix: Matrix, used: int, needed: int, dims: int) -> tuple[Ids, Matrix]:
    """Fresh buffers holding the first ``used`` vectors, with room for ``needed`` and more."""
    capacity = needed + max(_MIN_HEADROOM, needed // 8)
    new_ids = np.empty(capacity, dtype=np.int64)
    new_matrix = np.empty((capacity, dims), dtype=np.float32)
    if used:  # an empty snapshot's matrix is (0, 0): nothing to copy, nor to broadcast
        new_ids[:used] = ids[:used]
        new_matrix[:used] = matrix[:used]
    return new_ids, new_matrix


@dataclass(frozen=True, slots=True)
class _Codes:
    """int8 codes of a snapshot's vectors, one row per vector (SIMD reads them contiguously),
    each vector scaled by its own largest component: ``vector ~ codes[i] * scales[i]``.

    Per-vector scales need no statistics of the namespace, so an appended vector is coded
    alone, exactly as a load codes it; 384 int8 values keep a unit vector's dot products
    within ~1e-3, against gaps of ~1e-2 between neighbours near the top. Kept in step with
    the float32 rows by ``_Snapshot.with_changes`` (same capacity, same positions)."""

    rows: npt.NDArray[np.int8]  # (capacity, dims)
    scales: Matrix  # (capacity,)

    @staticmethod
    def of(matrix: Matrix, size: int) -> _Codes:
        capacity = int(matrix.shape[0])
        codes = _Codes(
            np.empty((capacity, int(matrix.shape[1])), dtype=np.int8),
            np.empty(capacity, dtype=np.float32),
        )
        for start in range(0, size, _CODE_BATCH):  # a batch at a time: bounded memory
            end = min(size, start + _CODE_BATCH)
            codes.put(start, matrix[start:end])
        return codes

    def put(self, at: int, rows: Matrix) -> None:
        """Code ``rows`` (n, dims) into rows ``at``...``at + n``."""
        peak = np.abs(rows).max(axis=1)
        scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
        self.rows[at : at + len(rows)] = np.rint(rows / scales[:, None])
        self.scales[at : at + len(rows)] = scales

    def grown(self, used: int, capacity: int) -> _Codes:
        rows = np.empty((capacity, self.rows.shape[1]), dtype=np.int8)
        scales = np.empty(capacity, dtype=np.float32)
        rows[:used] = self.rows[:used]
        scales[:used] = self.scales[:used]
        return _Codes(rows, scales)

    def scores(self, query: Matrix, size: int) -> Matrix:
        """Every row's estimated cosine with ``query`` (up to one positive factor)."""
        peak = float(np.abs(query).max())
        coded = np.rint(query * (127.0 / peak) if peak > 0 else query).astype(np.int8)
        dots = simsimd.cdist(coded[None, :], self.rows[:size], metric="dot", out_dtype="float32")
        return np.asarray(dots, dtype=np.float32)[0] * self.scales[:size]


_CODE_BATCH = 8192
_SAMPLE_STEP = 16  # every 16th estimate bounds the shortlist's score (_best_positions)


def _best_positions(scores: Matrix, take: int) -> Ids:
    """The positions of the ``take`` highest ``scores``, in no order.

    A partition of a million scores costs more than the codes' scan is worth saving, so
    a sample first bounds the take-th score: every 16th score's ``2 x take / 16``-th best.
    When at least ``take`` scores reach that bound, the best ``take`` are all among them
    (the take-th best reaches it too), and only those are partitioned; else everything is.
    """
    if scores.size >= 64 * take * _SAMPLE_STEP:
        sample = scores[::_SAMPLE_STEP]
        rank = max(1, 2 * take // _SAMPLE_STEP)
        bound = np.partition(sample, sample.size - rank)[sample.size - rank]
        above = np.flatnonzero(scores >= bound)
        if above.size >= take:
            best = np.argpartition(scores[above], above.size - take)[above.size - take :]
            return above[best]
    return np.argpartition(scores, scores.size - take)[scores.size - take :]


# --- Small numeric helpers ------------------------------------------------------


def _unit(vector: np.ndarray) -> Matrix:
    """A float32 copy scaled to length 1 (a zero vector stays zero)."""
    flat = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.sqrt(flat @ flat))
    return flat / np.float32(norm) if norm > 0 else flat.copy()


def _normalise_rows(rows: Matrix) -> None:
    """Scale each row to length 1 in place, the same way whatever the matrix's height.

    A stored vector reaches a copy either in a load (many rows) or caught up from the
    log (one, ``_stored_unit``); both must hold the very same float32 values, or one copy
    scores it 1 ulp apart from the other. So the squared norm is summed in float64 one
    dimension after another (cumsum along a row is sequential: no reordering by BLAS or
    by numpy's pairwise sums, whose grouping depends on the shape), a batch of rows at a
    time to bound the float64 copy."""
    for start in range(0, rows.shape[0], _CODE_BATCH):
        batch = rows[start : start + _CODE_BATCH]
        if not batch.shape[1]:
            continue
        norms = np.sqrt(np.cumsum(np.square(batch, dtype=np.float64), axis=1)[:, -1])
        norms = norms.astype(np.float32)
        norms[norms == 0] = 1.0
        batch /= norms[:, None]


def _stored_unit(vector: np.ndarray) -> Matrix:
    """A stored vector as a copy holds it: ``_normalise_rows`` of that one row."""
    row = np.array(vector, dtype=np.float32).reshape(1, -1)
    _normalise_rows(row)
    return row[0]


def _dims_of(appends: list[tuple[int, Matrix]]) -> int:
    return int(appends[0][1].shape[0]) if appends else 0


# --- Re-embedding beside the index in use (memories.upkeep.reembed) ----------------------

_ALL_VERSIONS_SQL = "SELECT namespace, version FROM memories_vector_version WHERE namespace != ''"
_CHANGED_IDS_SQL = (
    "SELECT version, memory_id FROM memories_vector_change WHERE namespace = %s AND version > %s"
)


def namespace_versions() -> dict[str, int]:
    """Every namespace's vector counter: compare two readings to learn where vectors changed."""
    with connection.cursor() as cursor:
        return {str(ns): int(v) for ns, v in cursor.execute(_ALL_VERSIONS_SQL).fetchall()}


def namespace_version(namespace: str) -> tuple[int, int]:
    """(table epoch, the namespace's vector counter) as committed now: a later reading that
    differs means vectors were written there since (``changed_ids`` says which)."""
    with connection.cursor() as cursor:
        return _versions(cursor, namespace)


def changed_ids(namespace: str, since: int, until: int) -> set[int] | None:
    """The memories whose vector was written or deleted in ``namespace`` after version
    ``since``; None when the log no longer reaches back that far (pruned)."""
    with connection.cursor() as cursor:
        logged = cursor.execute(_CHANGED_IDS_SQL, [namespace, since]).fetchall()
    if not {version for version, _ in logged} >= set(range(since + 1, until + 1)):
        return None
    return {int(memory_id) for _, memory_id in logged}


# A table of vectors beside the index (re-embedding stages the new embedder's vectors
# there): any dimension, one row per memory, written as upserts.
STAGING_TABLE = "memories_vec_staging"
_STAGING_CREATE = {
    "sqlite": "CREATE TABLE {table} (memory_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)",
    "postgresql": "CREATE TABLE {table} (memory_id bigint PRIMARY KEY, embedding vector NOT NULL)",
}
_STAGING_PUT = (
    "INSERT INTO {table}(memory_id, embedding) VALUES (%s, %s{cast}) "
    "ON CONFLICT (memory_id) DO UPDATE SET embedding = excluded.embedding"
)


def create_staging(cursor: Any) -> None:
    """(Re)create the empty staging table."""
    cursor.execute(f"DROP TABLE IF EXISTS {STAGING_TABLE}")
    cursor.execute(_STAGING_CREATE[connection.vendor].format(table=STAGING_TABLE))


def put_staging(cursor: Any, rows: Iterable[tuple[int, np.ndarray]]) -> None:
    """Store (memory id, vector) rows in the staging table, replacing earlier ones."""
    sql = _STAGING_PUT.format(table=STAGING_TABLE, cast="::vector" if _postgres() else "")
    cursor.executemany(sql, [(memory_id, _encode(vector)) for memory_id, vector in rows])


def lock_writers(cursor: Any) -> None:
    """Keep every other writer of vectors out until the transaction ends (readers go on).
    SQLite's write transaction already excludes them."""
    if _postgres():
        cursor.execute("LOCK TABLE memories_vec IN EXCLUSIVE MODE")


def replace_from(cursor: Any, staging_sql: str, dimensions: int) -> None:
    """Replace the table with one of ``dimensions`` filled by ``staging_sql`` (rows of
    memory_id, namespace, embedding), inside the caller's transaction; every process's
    cached copies are reloaded on their next search (the epoch moves)."""
    recreate_table(cursor, dimensions)
    cursor.execute("INSERT INTO memories_vec(memory_id, namespace, embedding) " + staging_sql)
