"""What we believed when: the values a claim (a holder and an attribute, in a namespace) had
over time, from the memories that held it (live, superseded, archived alike).

A memory's claim columns (``claim_subject``, ``claim_attribute``, ``claim_value``, polarity,
mood) say what it claims; a new value supersedes the old one (``superseded_by``), a person
decides a conflict, archives or restores. The history rows say who did each. Every read
here is bounded: the partial claim index (``memory_claim_idx``, whose condition the query
repeats so SQLite uses it), a LIMIT on the memories, and their history rows by the
``memory_id`` index, decisions only (never the many ``seen`` rows).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlencode

from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from memories.models import Memory, MemoryEvent, MemoryStatus, client_message_id

TIMELINE_LIMIT = 30  # memories on one claim's timeline (the newest, shown oldest first)
PERSON_CLAIMS = 8  # changed beliefs on a person's page
PERSON_PER_CLAIM = 6  # values shown of each there
_RECENT_CHANGES = 200  # superseded memories read to find a person's changed beliefs
# The history rows that say who decided what a memory is (not "seen" or "reindexed").
DECISIONS = (
    MemoryEvent.Event.CREATED,
    MemoryEvent.Event.PROMOTED,
    MemoryEvent.Event.SUPERSEDED,
    MemoryEvent.Event.ARCHIVED,
    MemoryEvent.Event.RESTORED,
    MemoryEvent.Event.EDITED,
    MemoryEvent.Event.STALE,
    MemoryEvent.Event.ACTIVATED,
    MemoryEvent.Event.UNDONE,
)
_COLUMNS = (
    "id",
    "namespace",
    "content",
    "status",
    "claim_subject",
    "claim_attribute",
    "claim_value",
    "claim_polarity",
    "claim_mood",
    "superseded_by_id",
    "source_type",
    "source_thread_id",
    "source_message_id",
    "valid_from",
    "valid_until",
    "created_at",
    "updated_at",
)


@dataclass(frozen=True)
class Claim:
    """A holder and an attribute in a namespace: what a timeline follows."""

    namespace: str
    subject: str
    attribute: str


def shown(at: datetime | None) -> str:
    """``at`` as the timeline shows it, to the minute in the local time. Formatted here: a
    timeline of 50 values has ~150 dates, and the template's ``date`` filter took a third of
    the page's time (cProfile, `bench pages`)."""
    return "" if at is None else f"{timezone.localtime(at):%Y-%m-%d %H:%M}"


@dataclass(frozen=True)
class Decision:
    """One history row of a memory on a timeline: when, what, who, why."""

    at: datetime
    event: str
    actor: str
    reason: str

    @property
    def when(self) -> str:
        return shown(self.at)


@dataclass
class Belief:
    """One value the claim had: the memory that held it, since when, until when, from where,
    and the decisions about it."""

    memory: Memory
    since: datetime  # valid_from, else when it was written
    until: datetime | None  # valid_until, else when it was superseded or archived; None: holds
    decisions: list[Decision] = field(default_factory=list)

    @property
    def since_shown(self) -> str:
        return shown(self.since)

    @property
    def until_shown(self) -> str:
        return shown(self.until)

    @property
    def message_id(self) -> str:
        """The source message's id as its client knows it ("" when written directly)."""
        key = self.memory.source_message_id
        return client_message_id(key) if key else ""


@dataclass
class Timeline:
    claim: Claim
    beliefs: list[Belief]  # oldest first
    more: bool  # older memories than the ones shown held it too


def claim_of(memory: Memory) -> Claim | None:
    if not memory.claim_attribute:
        return None
    return Claim(memory.namespace, memory.claim_subject, memory.claim_attribute)


def claim_timeline(claim: Claim, *, limit: int = TIMELINE_LIMIT) -> Timeline:
    """The newest ``limit`` memories that held ``claim``, oldest first, with who decided."""
    rows = list(_newest(claim, limit + 1))
    more = len(rows) > limit
    beliefs = _beliefs(rows[:limit])
    return Timeline(claim, beliefs, more)


def _newest(claim: Claim, limit: int) -> QuerySet[Memory]:
    """The newest ``limit`` memories holding ``claim``, newest written first: the claim
    index (namespace, subject, attribute; SQLite keeps equal keys in id order) walked
    backwards. ``~Q(claim_attribute="")``
    is the partial index's own condition: SQLite uses such an index only when the query
    states it."""
    return (
        Memory.objects.filter(
            namespace=claim.namespace,
            claim_subject=claim.subject,
            claim_attribute=claim.attribute,
        )
        .filter(~Q(claim_attribute=""))
        .only(*_COLUMNS)
        .order_by("-id")[:limit]
    )


def changed_beliefs(namespace: str) -> list[Timeline]:
    """A person's beliefs that changed (a value superseded by another), the latest change
    first: up to PERSON_CLAIMS claims, the newest PERSON_PER_CLAIM values of each."""
    recent = (
        Memory.objects.filter(namespace=namespace, status=MemoryStatus.SUPERSEDED)
        .filter(~Q(claim_attribute=""))
        .order_by("-updated_at", "-id")
        .values_list("claim_subject", "claim_attribute")[:_RECENT_CHANGES]
    )
    claims: list[Claim] = []
    for subject, attribute in recent:
        claim = Claim(namespace, subject, attribute)
        if claim not in claims:
            claims.append(claim)
        if len(claims) == PERSON_CLAIMS:
            break
    if not claims:
        return []
    # One query a claim, each a walk of the claim index from its newest: one OR of them all
    # would sort every holder of every claim (87 ms at 100k, a claim 6k memories hold).
    held = {claim: list(_newest(claim, PERSON_PER_CLAIM + 1)) for claim in claims}
    shown = {claim: rows[:PERSON_PER_CLAIM] for claim, rows in held.items()}
    beliefs = _beliefs([m for memories in shown.values() for m in memories])
    by_id = {belief.memory.pk: belief for belief in beliefs}
    return [
        Timeline(
            claim,
            [by_id[m.pk] for m in reversed(shown[claim])],
            len(held[claim]) > PERSON_PER_CLAIM,
        )
        for claim in claims
    ]


def _beliefs(newest_first: Sequence[Memory]) -> list[Belief]:
    """The memories as beliefs, oldest first, each with its decisions (one query)."""
    ids = [m.pk for m in newest_first]
    decisions: dict[int, list[Decision]] = defaultdict(list)
    events = (
        MemoryEvent.objects.filter(memory_id__in=ids, event__in=DECISIONS)
        .order_by("created_at", "id")
        .only("memory_id", "event", "actor", "reason", "created_at")
    )
    for event in events[: len(ids) * 20]:
        decisions[event.memory_id].append(
            Decision(event.created_at, event.event, event.actor, event.reason)
        )
    beliefs = [
        Belief(m, m.valid_from or m.created_at, _until(m, decisions[m.pk]), decisions[m.pk])
        for m in reversed(newest_first)
    ]
    beliefs.sort(key=lambda b: (b.since, b.memory.pk))
    return beliefs


def _until(memory: Memory, decisions: list[Decision]) -> datetime | None:
    """When the memory stopped holding: its valid_until, else its last supersession or
    archiving (None while it holds)."""
    if memory.valid_until is not None:
        return memory.valid_until
    if memory.status not in (MemoryStatus.SUPERSEDED, MemoryStatus.ARCHIVED):
        return None
    ended = [
        d.at
        for d in decisions
        if d.event in (MemoryEvent.Event.SUPERSEDED, MemoryEvent.Event.ARCHIVED)
    ]
    return ended[-1] if ended else memory.updated_at


# --- The claims of a namespace (``/beliefs/?namespace=``) ------------------------------

CLAIMS_PAGE = 50  # claims listed a page
CLAIM_NAMESPACES = 200  # namespaces offered to pick from


@dataclass(frozen=True)
class ClaimRow:
    """One claim of a namespace: its newest value (what it holds now, unless that memory
    was superseded or archived since) and how many values it had."""

    claim: Claim
    held_by: int  # memories that held it: values it had, so held_by - 1 changes
    newest: Memory  # the newest memory that held it

    @property
    def changes(self) -> int:
        return self.held_by - 1

    @property
    def timeline_query(self) -> str:
        """The query string of its timeline (``/beliefs/?...``)."""
        claim = self.claim
        fields = {"namespace": claim.namespace, "subject": claim.subject}
        return urlencode(fields | {"attribute": claim.attribute})

    @property
    def last_change(self) -> str:
        return shown(self.newest.valid_from or self.newest.created_at)


@dataclass
class ClaimsPage:
    namespace: str
    subject: str  # "" lists every holder's
    rows: list[ClaimRow]
    more: Claim | None  # the last claim listed when more follow (the next page's start)


def claims_of(
    namespace: str,
    *,
    subject: str | None = None,
    after: Claim | None = None,
    size: int = CLAIMS_PAGE,
) -> ClaimsPage:
    """The claims of ``namespace`` (of one holder with ``subject``), by holder then
    attribute, ``size`` a page after ``after``. One GROUP BY that walks the claim index in
    its order and stops after the page's claims (no sort: counting the claim thousands of
    memories hold reads their index entries, never their rows), then the page's newest
    memories by id."""
    held = Memory.objects.filter(namespace=namespace).filter(~Q(claim_attribute=""))
    if subject is not None:
        held = held.filter(claim_subject=subject)
    if after is not None:
        held = held.filter(
            Q(claim_subject__gt=after.subject)
            | Q(claim_subject=after.subject, claim_attribute__gt=after.attribute)
        )
    groups = list(
        held.order_by("claim_subject", "claim_attribute")
        .values("claim_subject", "claim_attribute")
        .annotate(held_by=Count("id"), newest=Max("id"))[: size + 1]
    )
    page = groups[:size]
    newest = Memory.objects.only(*_COLUMNS).in_bulk([g["newest"] for g in page])
    rows = [
        ClaimRow(
            Claim(namespace, g["claim_subject"], g["claim_attribute"]),
            g["held_by"],
            newest[g["newest"]],
        )
        for g in page
    ]
    more = rows[-1].claim if len(groups) > size and rows else None
    return ClaimsPage(namespace, subject or "", rows, more)


def claim_namespaces(limit: int = CLAIM_NAMESPACES) -> tuple[list[str], bool]:
    """The namespaces that hold a claim, alphabetically, up to ``limit`` (and whether there
    are more): DISTINCT on the claim index stops once it has them."""
    found = list(
        Memory.objects.filter(~Q(claim_attribute=""))
        .order_by("namespace")
        .values_list("namespace", flat=True)
        .distinct()[: limit + 1]
    )
    return found[:limit], len(found) > limit
