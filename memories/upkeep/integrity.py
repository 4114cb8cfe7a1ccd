"""Do the search indexes hold exactly one row per memory?

Every memory should have one vector in ``memories_vec`` (in its namespace's
partition) and one document in the keyword index ``memories_fts``. Triggers and
the write services keep it so; a crash between two tools, a hand-edited
database, or a load that bypasses them (``loaddata``) does not. The fingerprint
check cannot see any of this, so ``index_report`` compares the ids themselves.

Cost, measured at 100k memories in 1,001 namespaces (2 cores): the counts alone
(``exact=False``, meant for ``/api/health``) read three indexes, 6-10 ms; the
exact report (missing, orphaned and misplaced ids, for ``manage.py reindex``)
~170 ms. Both
read vec0's rowids shadow table instead of scanning vectors (see
``vector_index.stored_ids_sql``); with an unknown sqlite-vec layout they fall
back to the public SELECT, which scans every vector.

``repair`` fixes what the report finds: vectors are embedded for memories
without one (or with one in another namespace's partition), vectors without a
memory are deleted, and keyword documents are written or removed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from memories.models import Memory
from memories.store import keyword_index, vector_index
from memories.write.services import embedding_text
from spaceduck.core.db.scrub import forget_after_commit
from spaceduck.core.providers import get_embedder

_COUNT_MEMORIES_SQL = "SELECT count(*) FROM memories_memory"
_MEMORY_IDS_SQL = "SELECT id FROM memories_memory"
# One statement each, so every answer is a consistent snapshot even while the
# service writes (a memory and its vector are committed together).
_MISSING_SQL = "SELECT id FROM memories_memory WHERE id NOT IN ({indexed}) ORDER BY id"
_ORPHAN_SQL = (
    "SELECT id FROM ({indexed}) AS indexed WHERE id NOT IN (" + _MEMORY_IDS_SQL + ") ORDER BY id"
)
_ALIVE_SQL = "SELECT id, namespace FROM memories_memory WHERE id IN ({ids})"

REPAIR_BATCH = 64


def index_report(*, exact: bool = True) -> dict[str, Any]:
    """Memories against vector and keyword rows.

    ``exact=False`` only counts (cheap enough for every health check); equal
    counts can still hide a missing row balanced by an orphaned one, so the
    id-level fields are then None. ``problem`` is None when nothing is wrong,
    else one sentence naming ``manage.py reindex``.
    """
    keyword_index.catch_up()
    with connection.cursor() as cursor:
        memories = int(cursor.execute(_COUNT_MEMORIES_SQL).fetchone()[0])
        stored = vector_index.stored_ids_sql(cursor)
        vectors = int(cursor.execute(f"SELECT count(*) FROM ({stored}) AS v").fetchone()[0])
        indexed = keyword_index.indexed_ids_sql()
        keyword = int(cursor.execute(f"SELECT count(*) FROM ({indexed}) AS k").fetchone()[0])
    report: dict[str, Any] = {
        "memories": memories,
        "vectors": vectors,
        "keyword": keyword,
        "missing_vectors": None,
        "orphan_vectors": None,
        "misplaced_vectors": None,
        "missing_keyword": None,
        "orphan_keyword": None,
    }
    if exact:
        found = find_problems()
        report.update({name: len(ids) for name, ids in found.as_dict().items()})
    report["problem"] = _problem(report)
    return report


@dataclass(frozen=True)
class Problems:
    """The ids behind an exact report, ascending."""

    missing_vectors: list[int]
    orphan_vectors: list[int]
    misplaced_vectors: list[int]
    missing_keyword: list[int]
    orphan_keyword: list[int]

    def as_dict(self) -> dict[str, list[int]]:
        return {
            "missing_vectors": self.missing_vectors,
            "orphan_vectors": self.orphan_vectors,
            "misplaced_vectors": self.misplaced_vectors,
            "missing_keyword": self.missing_keyword,
            "orphan_keyword": self.orphan_keyword,
        }

    def __bool__(self) -> bool:
        return any(self.as_dict().values())


def find_problems() -> Problems:
    keyword_index.catch_up()
    with connection.cursor() as cursor:
        stored = vector_index.stored_ids_sql(cursor)
        misplaced = vector_index.misplaced_ids_sql(cursor)
        indexed = keyword_index.indexed_ids_sql()

        def ids(sql: str) -> list[int]:
            return [int(row[0]) for row in cursor.execute(sql).fetchall()]

        return Problems(
            missing_vectors=ids(_MISSING_SQL.format(indexed=stored)),
            orphan_vectors=ids(_ORPHAN_SQL.format(indexed=stored)),
            misplaced_vectors=sorted(ids(misplaced)),
            missing_keyword=ids(_MISSING_SQL.format(indexed=indexed)),
            orphan_keyword=ids(_ORPHAN_SQL.format(indexed=indexed)),
        )


def _problem(report: dict[str, Any]) -> str | None:
    memories = report["memories"]
    parts: list[str] = []
    if report["missing_vectors"] is None:  # counts only
        if report["vectors"] != memories:
            parts.append(f"{report['vectors']} vectors")
        if report["keyword"] != memories:
            parts.append(f"{report['keyword']} keyword rows")
        if not parts:
            return None
        return (
            f"{memories} memories but {' and '.join(parts)}; "
            "run python manage.py reindex to repair the indexes"
        )
    labels = {
        "missing_vectors": "without a vector",
        "misplaced_vectors": "with a vector in another namespace",
        "missing_keyword": "missing from the keyword index",
    }
    for field, label in labels.items():
        if report[field]:
            parts.append(f"{report[field]} memories {label}")
    if report["orphan_vectors"]:
        parts.append(f"{report['orphan_vectors']} vectors of deleted memories")
    if report["orphan_keyword"]:
        parts.append(f"{report['orphan_keyword']} keyword rows of deleted memories")
    if not parts:
        return None
    return (
        f"{memories} memories, {report['vectors']} vectors, {report['keyword']} keyword rows: "
        f"{', '.join(parts)}; run python manage.py reindex to repair the indexes"
    )


# --- Repair -------------------------------------------------------------------------


@dataclass(frozen=True)
class Repaired:
    embedded: int = 0
    vectors_deleted: int = 0
    keyword_indexed: int = 0
    keyword_deleted: int = 0

    def __bool__(self) -> bool:
        counts = (self.embedded, self.vectors_deleted, self.keyword_indexed, self.keyword_deleted)
        return any(counts)


def repair(
    problems: Problems | None = None,
    *,
    batch_size: int = REPAIR_BATCH,
    on_embedded: Callable[[int], object] | None = None,
) -> Repaired:
    """Fix what ``find_problems`` found; safe while the service writes.

    Each write re-checks, in its own transaction, that the memory still exists
    (and where), so a memory deleted meanwhile never gets its vector back.
    Embedding runs outside transactions, like every write path.
    ``on_embedded(n)`` is called after each batch (a progress bar).
    """
    found = problems if problems is not None else find_problems()
    vectors_deleted = _delete_orphans(found.orphan_vectors, vector_index.delete)
    keyword_deleted = _delete_orphans(found.orphan_keyword, keyword_index.delete_rows)
    keyword_indexed = _index_keyword(found.missing_keyword)
    embedded = embed_missing(
        sorted({*found.missing_vectors, *found.misplaced_vectors}),
        batch_size=batch_size,
        on_embedded=on_embedded,
    )
    return Repaired(embedded, vectors_deleted, keyword_indexed, keyword_deleted)


def embed_missing(
    memory_ids: Sequence[int],
    *,
    batch_size: int = REPAIR_BATCH,
    on_embedded: Callable[[int], object] | None = None,
) -> int:
    """Embed these memories with the configured embedder and store their vectors."""
    embedder = get_embedder()
    done = 0
    for start in range(0, len(memory_ids), batch_size):
        batch = list(Memory.objects.filter(pk__in=memory_ids[start : start + batch_size]))
        if not batch:
            continue
        vectors = embedder.embed([embedding_text(memory) for memory in batch])
        with transaction.atomic():
            alive = _alive([memory.pk for memory in batch])
            rows = [
                (memory.pk, memory.namespace, vector)
                for memory, vector in zip(batch, vectors, strict=True)
                if alive.get(memory.pk) == memory.namespace
            ]
            vector_index.upsert(rows)
        done += len(rows)
        if on_embedded is not None:
            on_embedded(len(batch))
    return done


def _delete_orphans(memory_ids: Sequence[int], delete: Callable[[list[int]], object]) -> int:
    """Delete the index rows of those ``memory_ids`` whose memory is (still) gone."""
    if not memory_ids:
        return 0
    with transaction.atomic():
        alive = _alive(memory_ids)
        gone = [memory_id for memory_id in memory_ids if memory_id not in alive]
        delete(gone)
        # An orphan is what a deleted memory left: its terms and pages go as a delete's do.
        forget_after_commit()
    return len(gone)


def _index_keyword(memory_ids: Sequence[int]) -> int:
    indexed = 0
    for start in range(0, len(memory_ids), 500):
        with transaction.atomic():
            indexed += keyword_index.index_rows(memory_ids[start : start + 500])
    if indexed:
        keyword_index.forget_common()
    return indexed


def _alive(memory_ids: Sequence[int]) -> dict[int, str]:
    """The memories among ``memory_ids`` that exist now, with their namespaces."""
    if not memory_ids:
        return {}
    ids = ",".join(str(int(memory_id)) for memory_id in memory_ids)
    with connection.cursor() as cursor:
        rows = cursor.execute(_ALIVE_SQL.format(ids=ids)).fetchall()
    return {int(memory_id): str(namespace) for memory_id, namespace in rows}
