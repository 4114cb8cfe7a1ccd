"""The extraction log: which extractions ran, what they decided, and retrying a failed one.

One home for the log's filters, pages and the retry, used by both front ends: the
JSON API (``GET /api/extractions``, ``POST /api/extractions/{id}/retry``) and the
dashboard (``/extractions/``, a thread's page). Reads come first, then the one write.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from memories.models import Extraction
from memories.store.positions import Position
from spaceduck.core.errors import Conflict, NotFound
from spaceduck.core.limits import MAX_SQL_INT

PAGE_SIZE = 50  # the dashboard's page
API_LIST_LIMIT = 50  # the API's default page
API_LIST_MAX = 200  # records carry every candidate: a page stays a few hundred kB at most
# Counting stops here: "1000+" says as much as the exact number (as the memory viewer).
COUNT_CAP = 1000
STATUSES = tuple(Extraction.Status.values)


# --- Who may see what ------------------------------------------------------------------------


@dataclass(frozen=True)
class NamespaceScope:
    """The namespaces a caller may see: exact names and whole kinds (``user:*``).

    ``None`` in place of a scope means every namespace (staff in the dashboard, a ``*``
    grant): see ``NamespaceScope.of_grants``.
    """

    names: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()

    @classmethod
    def of_grants(cls, grants: Iterable[str]) -> NamespaceScope | None:
        """A token's grants as a scope; None when one of them is ``*`` (everything)."""
        names: list[str] = []
        kinds: list[str] = []
        for grant in grants:
            if grant == "*":
                return None
            kind, _, rest = grant.partition(":")
            (kinds if rest == "*" else names).append(kind if rest == "*" else grant)
        return cls(tuple(names), tuple(kinds))

    def q(self) -> Q:
        allowed = Q(namespace__in=list(self.names))
        for kind in self.kinds:
            allowed |= Q(namespace__startswith=f"{kind}:")
        return allowed


# --- The log -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExtractionFilter:
    """The log's filters; a blank value does not filter.

    ``failed``: only records with a failed attempt, whatever came after (failed for
    good, queued for a retry, or done after one): every such attempt left an error.
    ``created_from``/``created_to``: both ends included.
    """

    namespace: str = ""
    statuses: tuple[str, ...] = ()
    thread_id: str = ""
    task_id: str = ""
    failed: bool = False
    created_from: datetime | None = None
    created_to: datetime | None = None
    scope: NamespaceScope | None = None  # None: every namespace

    def queryset(self) -> QuerySet[Extraction]:
        records = Extraction.objects.all()
        if self.scope is not None:
            records = records.filter(self.scope.q())
        columns = {"namespace": self.namespace, "thread_id": self.thread_id}
        records = records.filter(**{name: value for name, value in columns.items() if value})
        if self.task_id:
            records = records.filter(task_id=self.task_id)
        if self.statuses:
            records = records.filter(status__in=list(self.statuses))
        if self.failed:
            # Every failed attempt appended to the errors (memories.write.runner).
            records = records.exclude(errors=[])
        if self.created_from is not None:
            records = records.filter(created_at__gte=self.created_from)
        if self.created_to is not None:
            records = records.filter(created_at__lte=self.created_to)
        return records


@dataclass
class ExtractionPage:
    extractions: list[Extraction]
    older: Position | None  # where the next (older) page starts; None on the last page
    newer: Position | None  # where the previous (newer) page ends; None on the first page


def extraction_page(
    *,
    filters: ExtractionFilter,
    after: Position | None = None,
    before: Position | None = None,
    size: int = PAGE_SIZE,
) -> ExtractionPage:
    """One page of the log, newest first, older than ``after`` or newer than ``before``."""
    records = filters.queryset().select_related("message")
    if before is not None:
        rows = list(
            records.filter(before.newer("created_at")).order_by("created_at", "id")[: size + 1]
        )
        page = rows[:size][::-1]
        return ExtractionPage(
            page,
            older=Position.of(page[-1], "created_at") if page else None,
            newer=Position.of(page[0], "created_at") if page and len(rows) > size else None,
        )
    if after is not None:
        records = records.filter(after.older("created_at"))
    rows = list(records.order_by("-created_at", "-id")[: size + 1])
    page = rows[:size]
    return ExtractionPage(
        page,
        older=Position.of(page[-1], "created_at") if len(rows) > size else None,
        newer=Position.of(page[0], "created_at") if after is not None and page else None,
    )


def extraction_count(*, filters: ExtractionFilter, cap: int = COUNT_CAP) -> tuple[int, bool]:
    """How many records match, counting no further than ``cap``: (count, capped)."""
    counted = filters.queryset().order_by().values("id")[: cap + 1].count()
    return min(counted, cap), counted > cap


def extraction_get(*, extraction_id: int) -> Extraction | None:
    if not 1 <= extraction_id <= MAX_SQL_INT:
        return None
    return (
        Extraction.objects.select_related("message", "message__thread")
        .filter(pk=extraction_id)
        .first()
    )


def extractions_by_message(message_ids: Sequence[str]) -> dict[str, Extraction]:
    """message id -> its newest extraction record (one query), for a page of messages."""
    found: dict[str, Extraction] = {}
    if not message_ids:
        return found
    records = (
        Extraction.objects.filter(message_id__in=list(message_ids))
        .only("id", "message_id", "status", "attempts", "created_at")
        .order_by("-created_at", "-id")
    )
    for record in records:
        found.setdefault(str(record.message_id), record)
    return found


# --- What one extraction decided -------------------------------------------------------------


@dataclass
class MemoryLink:
    """A memory a candidate's decision names, and how it named it."""

    memory_id: int
    role: str  # "created", "touched", "deduplicated against", "superseded", ...
    note: str = ""


@dataclass
class CandidateOutcome:
    """One verdict of an extraction record, with the memories it names."""

    verdict: dict[str, Any]
    links: list[MemoryLink] = field(default_factory=list)

    @property
    def candidate(self) -> dict[str, Any]:
        value = self.verdict.get("candidate")
        return value if isinstance(value, dict) else {}

    @property
    def decision(self) -> str:
        return str(self.verdict.get("decision", ""))

    @property
    def reason(self) -> str:
        return str(self.verdict.get("reason", "") or "")


def _memory_id(value: object) -> int | None:
    # Records are JSON written by the runner, but a hand-edited or imported one must not 500.
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SQL_INT:
        return None
    return value


def _links(verdict: dict[str, Any]) -> list[MemoryLink]:
    """The memories a verdict names (memories.write.dedup.commit_candidate writes these keys)."""
    links: list[MemoryLink] = []
    decision = verdict.get("decision")
    created = _memory_id(verdict.get("memory_id"))
    if created is not None:
        links.append(MemoryLink(created, "created"))
    matched = _memory_id(verdict.get("matched_memory_id"))
    if matched is not None:
        role = {
            "duplicate": "deduplicated against (touched)",
            "already_extracted": "already extracted as",
        }.get(str(decision), "matched")
        links.append(MemoryLink(matched, role))
    details = verdict.get("details")
    if not isinstance(details, dict):
        return links
    for value in details.get("superseded") or []:
        if (memory_id := _memory_id(value)) is not None:
            links.append(MemoryLink(memory_id, "superseded"))
    for entry in details.get("arbitrations") or []:
        if isinstance(entry, dict) and (memory_id := _memory_id(entry.get("memory_id"))):
            note = f"arbiter: {entry.get('verdict', '')}"
            if entry.get("reason"):
                note += f" ({entry['reason']})"
            links.append(MemoryLink(memory_id, "arbitrated against", note))
    for entry in details.get("not_duplicates") or []:
        if isinstance(entry, dict) and (memory_id := _memory_id(entry.get("memory_id"))):
            differs = entry.get("differs") or []
            note = f"cosine {entry.get('cosine')}"
            if isinstance(differs, list) and differs:
                note += f", differs in: {', '.join(str(word) for word in differs)}"
            links.append(MemoryLink(memory_id, "near, but not a duplicate", note))
    return links


def extraction_outcomes(record: Extraction) -> list[CandidateOutcome]:
    """Every candidate of the record with its decision, reason and the memories it names."""
    verdicts = record.candidates if isinstance(record.candidates, list) else []
    return [
        CandidateOutcome(verdict, _links(verdict))
        for verdict in verdicts
        if isinstance(verdict, dict)
    ]


# --- Retrying a failed extraction -------------------------------------------------------------


def extraction_retry(*, extraction_id: int, actor: str) -> Extraction:
    """Queue a failed extraction again, with a fresh set of attempts.

    The record goes back to ``queued`` as the runner's own retries leave it (no lease,
    no due time); its errors stay as history, with an entry saying who asked for the
    retry and after how many attempts. The task is enqueued once the change commits,
    as for a new message (memories.write.ingest), so the worker sees the queued record.

    NotFound for an unknown id; Conflict when the record is not failed (only a failure
    is retried: a queued or running one will run anyway, a done one changes nothing)
    or when its message was deleted (there is nothing left to extract from).
    """
    record = extraction_get(extraction_id=extraction_id)
    if record is None:
        raise NotFound(f"extraction {extraction_id} not found")
    if record.status != Extraction.Status.FAILED:
        raise Conflict(
            f"extraction {extraction_id} is {record.status}; only a failed extraction "
            "can be retried"
        )
    if record.message_id is None:
        raise Conflict(
            f"extraction {extraction_id} cannot be retried: its message was deleted, "
            "so there is nothing left to extract from"
        )
    history = [
        *(record.errors if isinstance(record.errors, list) else []),
        {
            "retry": True,
            "by": actor,
            "after_attempts": record.attempts,
            "at": timezone.now().isoformat(),
        },
    ]
    with transaction.atomic():
        # Conditional: two people clicking retry at once queue it once.
        queued = Extraction.objects.filter(pk=record.pk, status=Extraction.Status.FAILED).update(
            status=Extraction.Status.QUEUED,
            attempts=0,
            errors=history,
            next_attempt_at=None,
            claimed_by="",
            lease_until=None,
        )
        if not queued:
            raise Conflict(f"extraction {extraction_id} was retried meanwhile")
        # Here, not at the top: the runner imports the extraction pipeline (~0.4 s), and
        # health reads this module's counts in every web process.
        from memories.write.runner import enqueue_extraction

        transaction.on_commit(lambda: enqueue_extraction(record.pk))
    record.refresh_from_db()
    return record


def extraction_counts(*, since: datetime | None = None) -> dict[str, int]:
    """Extraction records by status (every status, zeros included), all or created since."""
    records = Extraction.objects.order_by()
    if since is not None:
        # Naming every status lets SQLite seek (status, created_at) once per status:
        # the last day's rows only, not a scan of every extraction ever recorded.
        records = records.filter(status__in=Extraction.Status.values, created_at__gte=since)
    counts = dict(records.values_list("status").annotate(n=Count("id")))
    return {status.value: counts.get(status, 0) for status in Extraction.Status}


def extraction_stalls() -> tuple[dict[str, int], list[str]]:
    """Extractions a dead worker left behind: running on an expired lease, or queued
    past SPACEDUCK_EXTRACTION_STUCK_SECONDS; with what to tell a person."""
    now = timezone.now()
    due_before = now - timedelta(seconds=settings.EXTRACTION_STUCK_SECONDS)
    stalls = {
        "expired_leases": Extraction.objects.filter(
            Q(lease_until__lt=now) | Q(lease_until__isnull=True), status="running"
        ).count(),
        "overdue": Extraction.objects.filter(
            Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lt=due_before),
            status="queued",
            created_at__lt=due_before,
        ).count(),
    }
    problems = []
    if stalls["expired_leases"]:
        problems.append(f"{stalls['expired_leases']} extraction(s) running with expired leases")
    if stalls["overdue"]:
        problems.append(
            f"{stalls['overdue']} extraction(s) queued for more than "
            f"{settings.EXTRACTION_STUCK_SECONDS} s"
        )
    return stalls, problems
