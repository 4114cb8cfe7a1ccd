"""Long-term memories (+ their history), facts, threads and messages."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, ClassVar

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from spaceduck.core.ids import client_id_of, client_keys, key_length, namespaced_key


def new_id() -> str:
    return uuid.uuid4().hex


# A message id belongs to its namespace: the rule, shared with notes, is
# spaceduck.core.ids (stored as given unless another namespace holds it, else under a
# namespace-qualified key). Keys are at most 18 + 64 characters.
MESSAGE_KEY_LENGTH = key_length(64)


def namespaced_message_key(namespace: str, client_id: str) -> str:
    return namespaced_key(namespace, client_id)


def message_keys(namespace: str, client_id: str) -> list[str]:
    """The keys a message of ``namespace`` with the client's id ``client_id`` may have."""
    return client_keys(namespace, client_id)


def client_message_id(key: str) -> str:
    """The id a client gave (or was given) for the message stored under ``key``."""
    return client_id_of(key)


class MemoryKind(models.TextChoices):
    FACT = "fact"
    EPISODE = "episode"
    PROCEDURE = "procedure"


class MemoryStatus(models.TextChoices):
    CANDIDATE = "candidate"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    STALE = "stale"
    ARCHIVED = "archived"


class MemoryScope(models.TextChoices):
    GLOBAL = "global"
    PROJECT = "project"
    THREAD = "thread"


class ProcedureSubtype(models.TextChoices):
    CONSTRAINT = "constraint"
    WORKFLOW = "workflow"
    BEHAVIORAL = "behavioral"


class SourceType(models.TextChoices):
    USER_MESSAGE = "user_message"
    ASSISTANT_MESSAGE = "assistant_message"
    TOOL_RESULT = "tool_result"
    SYSTEM = "system"
    API = "api", "API"


class Thread(models.Model):
    id = models.CharField(max_length=64, primary_key=True, default=new_id)
    namespace = models.CharField(max_length=255, db_index=True)
    title = models.CharField(max_length=500, blank=True)
    # Who started it (``token:<name>``; "" before this was recorded): /activity/'s "thread".
    created_by = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering: ClassVar = ["created_at", "id"]
        indexes: ClassVar = [
            # /activity/ (spaceduck.ops.activity): the threads started, newest first, a page
            # read by keyset (an extraction's message may start one: tens of thousands).
            models.Index(fields=["created_at", "id"], name="thread_created_idx"),
        ]

    def __str__(self) -> str:
        return self.title or self.id


class MessageRole(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class Message(models.Model):
    # The stored key (see namespaced_message_key); clients see ``client_id``.
    id = models.CharField(max_length=MESSAGE_KEY_LENGTH, primary_key=True, default=new_id)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=MessageRole.choices)
    content = models.JSONField(help_text="Text, or any JSON value.")
    provenance = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering: ClassVar = ["created_at", "id"]
        indexes: ClassVar = [models.Index(fields=["thread", "created_at", "id"])]

    def __str__(self) -> str:
        return f"{self.role}: {str(self.content)[:60]}"

    @property
    def client_id(self) -> str:
        """The message's id as its client knows it (the API's ``id``)."""
        return client_message_id(self.pk)


class Fact(models.Model):
    """A mutable, namespaced JSON value; the TTL counts from ``updated_at``."""

    namespace = models.CharField(max_length=255)
    key = models.CharField(max_length=255)
    value = models.JSONField()
    ttl_ms = models.BigIntegerField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    provenance = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering: ClassVar = ["namespace", "key"]
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["namespace", "key"], name="fact_unique_namespace_key")
        ]

    def __str__(self) -> str:
        return f"{self.namespace} {self.key}"


class Memory(models.Model):
    """One long-term memory. FTS5 and vec0 rows follow it (see migrations 0002)."""

    namespace = models.CharField(max_length=255)
    kind = models.CharField(max_length=16, choices=MemoryKind.choices)
    title = models.CharField(max_length=200, blank=True)
    content = models.TextField()
    summary = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    # Where it was learnt: the previous message and the source message's own
    # words. Keyword-searched (a memory is also found by how it was said), but
    # neither embedded nor put into an agent's context block.
    context = models.TextField(blank=True, default="")
    importance = models.FloatField(default=0.5)
    confidence = models.FloatField(default=0.8)
    status = models.CharField(
        max_length=16, choices=MemoryStatus.choices, default=MemoryStatus.ACTIVE
    )
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    scope = models.CharField(max_length=16, choices=MemoryScope.choices, default=MemoryScope.GLOBAL)
    scope_id = models.CharField(max_length=255, blank=True)
    procedure_subtype = models.CharField(
        max_length=16, choices=ProcedureSubtype.choices, blank=True
    )
    slot = models.CharField(
        max_length=64, blank=True, help_text="Identity slot (name, location, ...) for supersession."
    )
    # What it claims (memories.extraction.claims): a new value or polarity for the same
    # subject and attribute supersedes it, the same value restates it. Blank: no claim read.
    claim_subject = models.CharField(max_length=100, blank=True, default="")
    claim_attribute = models.CharField(max_length=120, blank=True, default="")
    claim_value = models.CharField(max_length=255, blank=True, default="")
    claim_polarity = models.CharField(max_length=16, blank=True, default="")
    # How it was said (claims.MOODS: asserted, hypothetical, question, reported, past); blank
    # when no claim was read, or the claim was read before moods were (migration 0030).
    claim_mood = models.CharField(max_length=16, blank=True, default="")
    source_type = models.CharField(
        max_length=24, choices=SourceType.choices, default=SourceType.API
    )
    source_message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="memories"
    )
    source_thread = models.ForeignKey(
        Thread, null=True, blank=True, on_delete=models.SET_NULL, related_name="memories"
    )
    source_task_id = models.CharField(max_length=255, blank=True, db_index=True)
    source_skill_id = models.CharField(max_length=255, blank=True, db_index=True)
    content_hash = models.CharField(max_length=64)
    occurred_at = models.DateTimeField(null=True, blank=True)
    # How long it is kept (a retention TTL); past it, it leaves recall and the context block.
    expires_at = models.DateTimeField(null=True, blank=True)
    # When what it says holds ("until Friday", "since 2019"); null: open-ended. Past
    # valid_until it leaves recall and the context block as past expires_at (``lapsed``),
    # and the staleness job marks it stale.
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering: ClassVar = ["-updated_at", "-id"]
        verbose_name_plural = "memories"
        indexes: ClassVar = [
            models.Index(fields=["namespace", "status", "kind"]),
            models.Index(fields=["namespace", "content_hash"]),
            models.Index(fields=["namespace", "updated_at"]),
            # The dashboard's newest-first pages (keyset on (updated_at, id); the rowid
            # ends every SQLite index): every namespace, a status across namespaces (the
            # candidate queue and its count in the navigation), a status in one namespace.
            # Measured with `bench pages` at 200k rows: 60-90 ms scans + sorts -> ~1 ms.
            models.Index(fields=["updated_at"], name="memory_updated_idx"),
            models.Index(fields=["status", "updated_at"], name="memory_status_updated_idx"),
            models.Index(
                fields=["namespace", "status", "updated_at"], name="memory_ns_status_updated_idx"
            ),
            # The candidate queue, newest learnt first (keyset on (created_at, id)), across
            # namespaces and in one: a decision or its undo does not move an item there.
            # Without them `bench pages` at 40k: 14.6 -> 23.0 ms (every candidate sorted).
            models.Index(fields=["status", "created_at"], name="memory_status_created_idx"),
            models.Index(
                fields=["namespace", "status", "created_at"], name="memory_ns_status_created_idx"
            ),
            # recall.widen's "written just before / after" seeks (selectors.written_around):
            # without it each seek scanned and sorted the namespace (1.2 s a recall at 100k).
            models.Index(fields=["namespace", "id"], name="memory_ns_id_idx"),
            # Identity slots are few; the partial index keeps slot lookups O(log n) at 100k.
            models.Index(
                fields=["namespace", "slot"], name="memory_slot_idx", condition=~models.Q(slot="")
            ),
            # The memories about one subject and attribute. SQLite keeps an index's equal
            # keys in rowid (id) order, so dedup's claim lookup (ORDER BY id) and a belief's
            # timeline (memories.store.timeline, ORDER BY id DESC) walk it without sorting
            # every holder. Not created_at last: dedup then sorted every holder on each write
            # (`bench ingest` 10k fell from 0.82x to 0.69x of before issue 39). Nor id named
            # last: SQLite's planner then sorted the timeline in a full test run.
            models.Index(
                fields=["namespace", "claim_subject", "claim_attribute"],
                name="memory_claim_idx",
                condition=~models.Q(claim_attribute=""),
            ),
            # The staleness job's scan of active memories past their validity: few memories
            # have one, so the partial index holds those alone, not every row at 100k.
            models.Index(
                fields=["status", "valid_until"],
                name="memory_valid_until_idx",
                condition=models.Q(valid_until__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.title or self.content[:80]

    def clean(self) -> None:
        problem = validity_problem(self.valid_from, self.valid_until)
        if problem is not None:
            raise ValidationError({"valid_until": problem})

    @property
    def claim(self) -> dict[str, str] | None:
        """What it claims, as the API shows it; None when no claim was read."""
        if not self.claim_attribute:
            return None
        return {
            "subject": self.claim_subject,
            "attribute": self.claim_attribute,
            "value": self.claim_value,
            "polarity": self.claim_polarity,
            "mood": self.claim_mood,
        }

    @property
    def validity_passed(self) -> bool:
        """Its valid_until is at or before now (it has left recall; the page says expired)."""
        return self.valid_until is not None and self.valid_until <= timezone.now()


# Past any of these dates a memory leaves recall and the context block: ``expires_at`` (how
# long it is kept) and ``valid_until`` (how long what it says holds). Every read that
# serves memories to an agent filters through ``current`` (a query) or ``lapsed`` (a row).
LAPSE_DATES = ("expires_at", "valid_until")


def current(now: datetime) -> models.Q:
    """The memories none of whose LAPSE_DATES is at or before ``now``."""
    where = models.Q()
    for name in LAPSE_DATES:
        where &= models.Q(**{f"{name}__isnull": True}) | models.Q(**{f"{name}__gt": now})
    return where


def lapsed(memory: Any, now: datetime) -> bool:
    """Whether one of ``memory``'s LAPSE_DATES is at or before ``now`` (a Memory, or any row
    with those attributes: recall's loaded candidates)."""
    for name in LAPSE_DATES:
        at = getattr(memory, name)
        if at is not None and at <= now:
            return True
    return False


def validity_problem(valid_from: datetime | None, valid_until: datetime | None) -> str | None:
    """Why the pair cannot be a memory's validity (it ends before it starts), or None."""
    if valid_from is None or valid_until is None or valid_until > valid_from:
        return None
    return (
        f"valid_until ({utc_text(valid_until)}) must be after valid_from "
        f"({utc_text(valid_from)}): what a memory says stops holding after it starts"
    )


def utc_text(at: datetime) -> str:
    """``at`` to the minute in UTC, as history reasons and messages write it."""
    # Here, not at the top: spaceduck.core.limits imports the API's schema library (ninja,
    # pydantic: ~0.2 s), which loading the models at every start need not pay.
    from spaceduck.core.limits import in_utc

    return f"{in_utc(at):%Y-%m-%d %H:%M} UTC"


# The history rows of a person's conflict decision and of its undo: memories.write.conflicts
# names the conflict at the start of each reason ("conflict 4: replaced", "conflict 4 with
# memory 35: both kept", "undo of conflict 4: ..."). /activity/ lists them as the conflict's
# activity: an undo reopens the conflict and clears the decision from its row, not these.
CONFLICT_HISTORY = models.Q(reason__startswith="conflict ") | models.Q(
    reason__startswith="undo of conflict "
)


class MemoryEvent(models.Model):
    """An entry in a memory's history. When the memory is deleted, its history becomes one
    ``deleted`` (or ``purged``) event: who, when, why, the kind; never what it said."""

    class Event(models.TextChoices):
        CREATED = "created"
        SEEN = "seen"
        PROMOTED = "promoted"
        SUPERSEDED = "superseded"
        ARCHIVED = "archived"
        RESTORED = "restored"
        EDITED = "edited"
        STALE = "stale"
        ACTIVATED = "activated"
        DELETED = "deleted"
        PURGED = "purged"
        REINDEXED = "reindexed"
        # A person put back what a decision changed (a bulk approval or rejection, a
        # conflict decision, a restore): not an edit, and not a person's word on the content.
        UNDONE = "undone"
        # A conflict's "keep both" on two live memories: nothing else records the decision.
        KEPT = "kept"

    # Not a foreign key on purpose: the history must outlive the memory.
    memory_id = models.BigIntegerField(db_index=True)
    namespace = models.CharField(max_length=255)
    event = models.CharField(max_length=16, choices=Event.choices)
    actor = models.CharField(max_length=255, blank=True)
    reason = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering: ClassVar = ["created_at", "id"]
        indexes: ClassVar = [
            # A namespace's history: counted on a person's page and deleted by an erase
            # (spaceduck.ops.erasure); without it both scanned every event (17 ms at 200k).
            # With the time, it also serves /activity/ filtered by namespace, newest first.
            models.Index(fields=["namespace", "created_at"], name="memoryevent_ns_created_idx"),
            # /activity/ (spaceduck.ops.activity): newest first, and one actor's newest first,
            # a page read by keyset instead of every event sorted.
            models.Index(fields=["created_at"], name="memoryevent_created_idx"),
            models.Index(fields=["actor", "created_at"], name="memoryevent_actor_created_idx"),
            # /activity/?kind=conflict: the few conflict rows among every event, newest first
            # (the query states the condition, so SQLite uses the partial index).
            models.Index(
                fields=["created_at"], condition=CONFLICT_HISTORY, name="memoryevent_conflict_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"memory {self.memory_id} {self.event}"


class FactEvent(models.Model):
    """A write of a fact: who set it (the API's PUT, the dashboard, the admin, the CLI,
    MCP), when, and which parts changed. Like a Deletion it keeps no value: a fact's value
    may be anything a person said, and the record outlives the fact; so may its key (the
    fact is named by its number, as its tombstone does). The TTL is a number,
    not content, so its change is kept (``data``: ``{"changed": [...], "ttl_ms": {"from",
    "to"}}``)."""

    class Event(models.TextChoices):
        CREATED = "created"
        EDITED = "edited"

    # Not a foreign key: the record outlives the fact (removed with its namespace by an erase).
    fact_id = models.BigIntegerField(db_index=True)
    namespace = models.CharField(max_length=255)
    event = models.CharField(max_length=16, choices=Event.choices)
    actor = models.CharField(max_length=255, blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering: ClassVar = ["-created_at", "-id"]
        indexes: ClassVar = [
            # /activity/ (spaceduck.ops.activity), newest first by keyset: every write, one
            # namespace's (also what an erase removes), one actor's.
            models.Index(fields=["created_at"], name="factevent_created_idx"),
            models.Index(fields=["namespace", "created_at"], name="factevent_ns_created_idx"),
            models.Index(fields=["actor", "created_at"], name="factevent_actor_created_idx"),
        ]

    def __str__(self) -> str:
        return f"fact {self.fact_id} {self.event}"


class Deletion(models.Model):
    """A tombstone of a deleted message, thread or fact: who deleted what, when; no content.

    Memories keep theirs in their history (a ``deleted`` or ``purged`` MemoryEvent, whose
    data holds the kind only). The id is the row's own (a message or thread id, a fact's
    number: a fact's key may name what it held).
    """

    class Kind(models.TextChoices):
        MESSAGE = "message"
        THREAD = "thread"
        FACT = "fact"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    object_id = models.CharField(max_length=255)
    namespace = models.CharField(max_length=255)
    deleted_by = models.CharField(max_length=255, blank=True)
    reason = models.TextField(blank=True)
    deleted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering: ClassVar = ["-deleted_at", "-id"]
        indexes: ClassVar = [
            models.Index(fields=["kind", "object_id"], name="deletion_kind_object_idx"),
            # Removed with the rest of a namespace by an erase.
            models.Index(fields=["namespace"], name="deletion_ns_idx"),
            # /activity/ (spaceduck.ops.activity): the latest deletions first, by keyset.
            models.Index(fields=["deleted_at"], name="deletion_deleted_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_id} deleted"


class MaintenanceRun(models.Model):
    """One run of a maintenance processor and what it changed (or why it failed)."""

    processor = models.CharField(max_length=64)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    ok = models.BooleanField(default=False)
    changes = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering: ClassVar = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"{self.processor} at {self.started_at:%Y-%m-%d %H:%M}"


class Extraction(models.Model):
    """What the pipeline did with one message: every candidate, its decision and why."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    # SET_NULL: the record of what was learnt outlives the message it came from.
    message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="extractions"
    )
    thread_id = models.CharField(max_length=64, blank=True)
    namespace = models.CharField(max_length=255, db_index=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    candidates = models.JSONField(default=list, blank=True)
    errors = models.JSONField(default=list, blank=True)
    provider = models.CharField(max_length=255, blank=True)
    task_id = models.CharField(max_length=255, blank=True)
    skill_id = models.CharField(max_length=255, blank=True)
    max_memory_writes = models.PositiveIntegerField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # A running attempt is leased to one worker; the worker's heartbeat renews the
    # lease. An expired lease means the worker died: the record is queued again.
    claimed_by = models.CharField(max_length=255, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["-created_at", "-id"]
        indexes: ClassVar = [
            models.Index(fields=["status", "created_at"]),
            # The extraction log's newest-first pages (keyset on (created_at, id); the rowid
            # ends the index): without it every page sorted every record. `bench pages`
            # at 60k records: ~100 ms scan + sort -> an index walk of one page.
            models.Index(fields=["created_at"], name="extraction_created_idx"),
        ]

    def __str__(self) -> str:
        return f"extraction {self.pk} ({self.status})"


class ReembedJob(models.Model):
    """Re-embedding every memory with another embedder (Settings > Memory > Embeddings).

    The worker writes the new vectors beside the index in use, which keeps serving; the
    switch (new index, new embedder setting) happens in one transaction at the end.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    provider = models.CharField(max_length=50)
    model = models.CharField(max_length=200, blank=True)
    dimensions = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    started_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    switched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"re-embed to {self.provider}/{self.model}/{self.dimensions}d ({self.status})"

    @property
    def percent(self) -> int:
        return 100 if not self.total else min(100, round(100 * self.done / self.total))


class Conflict(models.Model):
    """Two memories the engine would not decide between on its own: the conflict inbox.

    ``new`` waits as a candidate beside ``old`` (live) until a person replaces the old one
    with it, keeps both, or edits them into one (``memories.write.conflicts``).
    """

    class Status(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"

    class Resolution(models.TextChoices):
        REPLACE = "replace", "replace"  # lowercase like the others: reasons quote them
        KEEP_BOTH = "keep_both", "keep both"
        MERGE = "merge", "edit into one"
        SETTLED = "settled", "settled elsewhere"

    namespace = models.CharField(max_length=255)
    old = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="conflicts_as_old")
    new = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="conflicts_as_new")
    reason = models.TextField(help_text="Why the engine did not decide on its own.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    resolution = models.CharField(max_length=16, choices=Resolution.choices, blank=True)
    resolved_by = models.CharField(max_length=255, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering: ClassVar = ["-created_at", "-id"]
        indexes: ClassVar = [
            # The inbox (newest open first) and its count in the navigation.
            models.Index(fields=["status", "created_at"], name="conflict_status_created_idx"),
            models.Index(fields=["namespace", "status"], name="conflict_ns_status_idx"),
        ]

    def __str__(self) -> str:
        return f"conflict {self.pk}: memory {self.old_id} vs {self.new_id} ({self.status})"
