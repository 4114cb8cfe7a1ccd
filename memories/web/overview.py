"""Read queries for the dashboard's overview: what the service holds and how it is running.

Counts come a page of namespaces at a time (a skip scan on the namespace index, then the
counts the memories_namespace_count triggers keep), so the page costs the same with ten
namespaces or ten thousand, and with ten memories in each or a million. The running
state (queue, worker, extractions) is ``spaceduck.ops.health``'s, the same numbers
``GET /api/health`` reports; the candidate and pending-note counts are the ones the
navigation shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from memories.models import Extraction, MemoryKind, MemoryStatus
from memories.store.selectors import memory_review_count
from memories.write.extraction_log import extraction_counts, extraction_stalls
from notes.selectors import review_count as note_review_count
from spaceduck.core.worker import WorkerState, queue_length, worker_state

NAMESPACES_PER_PAGE = 50
RECENT_WINDOW = timedelta(hours=24)
RECENT_FAILURES = 10

# The namespaces after a given one, in order: each step seeks the next name on the
# (namespace, ...) index, so n namespaces cost n seeks, not a read of every memory.
_NAMESPACES_AFTER_SQL = """
WITH RECURSIVE ns(name) AS (
    SELECT min(namespace) FROM memories_memory WHERE namespace > %s
    UNION ALL
    SELECT (SELECT min(namespace) FROM memories_memory WHERE namespace > ns.name)
    FROM ns WHERE ns.name IS NOT NULL
)
SELECT name FROM ns WHERE name IS NOT NULL LIMIT %s
"""


# Kept by triggers on memories_memory (migration 0014): a keyed read, not a count.
_COUNTS_SQL = """
SELECT namespace, kind, status, n FROM memories_namespace_count WHERE namespace IN ({names})
"""


@dataclass
class NamespaceCounts:
    """One namespace's memories by kind and by status, in the order of the choices."""

    namespace: str
    kinds: list[tuple[str, int]]
    statuses: list[tuple[str, int]]

    @property
    def total(self) -> int:
        return sum(n for _, n in self.kinds)

    @property
    def candidates(self) -> int:
        return dict(self.statuses)[MemoryStatus.CANDIDATE.value]


@dataclass
class NamespacePage:
    rows: list[NamespaceCounts]
    after: str  # where this page starts ("" for the first page)
    next_after: str | None  # where the next page starts, None on the last page


def namespace_counts(*, after: str = "", size: int | None = None) -> NamespacePage:
    """Up to ``size`` (default NAMESPACES_PER_PAGE) namespaces holding memories, in
    order, strictly after ``after``."""
    size = NAMESPACES_PER_PAGE if size is None else size
    with connection.cursor() as cursor:
        cursor.execute(_NAMESPACES_AFTER_SQL, [after, size + 1])
        names = [row[0] for row in cursor.fetchall()]
    more, names = len(names) > size, names[:size]
    with connection.cursor() as cursor:
        placeholders = ", ".join(["%s"] * len(names))
        cursor.execute(_COUNTS_SQL.format(names=placeholders or "NULL"), names)
        rows = cursor.fetchall()
    kinds: dict[str, dict[str, int]] = {name: {} for name in names}
    statuses: dict[str, dict[str, int]] = {name: {} for name in names}
    for namespace, kind, status, n in rows:
        kinds[namespace][kind] = kinds[namespace].get(kind, 0) + n
        statuses[namespace][status] = statuses[namespace].get(status, 0) + n
    return NamespacePage(
        rows=[
            NamespaceCounts(
                namespace=name,
                kinds=[(kind, kinds[name].get(kind, 0)) for kind in MemoryKind.values],
                statuses=[(s, statuses[name].get(s, 0)) for s in MemoryStatus.values],
            )
            for name in names
        ],
        after=after,
        next_after=names[-1] if more else None,
    )


@dataclass
class FailedExtraction:
    id: int
    namespace: str
    created_at: datetime
    error: str  # the last attempt's error, as recorded


@dataclass
class RecentExtractions:
    since: datetime
    counts: dict[str, int]  # every status, zeros included
    failures: list[FailedExtraction]  # the newest few failures since ``since``

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def recent_extractions(
    *, window: timedelta = RECENT_WINDOW, failures: int = RECENT_FAILURES
) -> RecentExtractions:
    """Extractions created within ``window`` by status, and the newest failures among them."""
    since = timezone.now() - window
    failed = (
        Extraction.objects.filter(status=Extraction.Status.FAILED, created_at__gte=since)
        .order_by("-created_at", "-id")
        .only("id", "namespace", "created_at", "errors")[:failures]
    )
    return RecentExtractions(
        since=since,
        counts=extraction_counts(since=since),
        failures=[
            FailedExtraction(
                id=record.pk,
                namespace=record.namespace,
                created_at=record.created_at,
                error=_last_error(record.errors),
            )
            for record in failed
        ],
    )


def _last_error(errors: Any) -> str:
    # Each failed attempt appends {"attempt", "error", "at"} (memories.write.runner).
    if not isinstance(errors, list) or not errors:
        return ""
    last = errors[-1]
    return str(last.get("error", "")) if isinstance(last, dict) else str(last)


@dataclass
class ServiceState:
    """What a person checks first: is work waiting for them, is the background running."""

    candidates: int
    candidates_capped: bool  # the count stopped at its cap: "1000+"
    pending_notes: int
    queue_length: int | None  # None: the queue did not answer
    worker: WorkerState
    extractions: RecentExtractions
    stalls: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def service_state() -> ServiceState:
    candidates, capped = memory_review_count()
    stalls, problems = extraction_stalls()
    worker = worker_state()
    return ServiceState(
        candidates=candidates,
        candidates_capped=capped,
        pending_notes=note_review_count(),
        queue_length=queue_length(),
        worker=worker,
        extractions=recent_extractions(),
        stalls=stalls,
        problems=[problem for problem in (worker.problem, *problems) if problem],
    )
