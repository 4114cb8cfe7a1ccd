"""Deleting forgets: a tombstone (who, when, kind, id) stays, no copy of what was deleted.

The one home of every delete of a memory, a message, a thread or a fact (issue 37): the API,
the dashboard, the admin, MCP ``forget``, ``memory purge-skill``, compaction and the TTL
expiry of facts all end here, through ``services`` and ``lifecycle``. Each function runs in
the caller's transaction (or its own) and, besides the row itself, removes the copies other
rows keep of its text:

- a memory: its history (an edit event keeps the text it replaced) becomes one ``deleted``
  or ``purged`` event whose data is the kind alone; the extraction verdicts that produced or
  matched it lose their text; a supersession reason that quotes it is blanked; the admin's
  change-log entries about it (named by its text) go.
- a message or thread: a ``Deletion`` row; its extraction records keep their decisions but
  lose every text; the memories learnt from it (or from the message right after it, whose
  ``context`` starts with its words) lose their ``context`` (their own content stays: a
  memory is deleted on its own); the admin's entries about it go.
- a fact: a ``Deletion`` row (its number, not its key, which may name what it held).

Every function asks for the SQLite WAL checkpoint after commit (``forget_after_commit``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import connection, models, transaction
from django.db.models import Q
from django.utils import timezone

from memories.models import (
    Deletion,
    Extraction,
    Fact,
    Memory,
    MemoryEvent,
    Message,
    Thread,
    client_message_id,
)
from memories.store import keyword_index
from spaceduck.core.db.scrub import forget_after_commit

CHUNK = 500  # ids per statement (SQLite's bound-parameter limit)
MEMORY_CHUNK = 100  # memories forgotten per round (forget_memories)
ENDS = (MemoryEvent.Event.DELETED, MemoryEvent.Event.PURGED)
# What an extraction verdict keeps once the text it was about is deleted: its decision, the
# memories it names and the candidate's shape; no content, title, summary, tags, claim,
# reason (a reason may quote a claim or an arbiter's words) or details beyond these.
_VERDICT_KEEPS = ("decision", "memory_id", "matched_memory_id")
_CANDIDATE_KEEPS = (
    "kind",
    "stage",
    "slot",
    "retention",
    "reject_reason",
    "importance",
    "confidence",
    "procedure_subtype",
)
_DETAILS_KEEPS = ("status", "cosine", "conflicts", "superseded")


# --- Memories ------------------------------------------------------------------------------


def forget_memories(
    memories: Sequence[Memory],
    *,
    actor: str,
    reason: str = "",
    event: str = MemoryEvent.Event.DELETED,
) -> None:
    """Delete these memories, leaving one tombstone event each (``deleted``/``purged``).

    ``reason`` is the caller's (never derived from the memory); one that quotes the memory's
    text is not kept. Superseded memories pointing at one of them are left without a
    superseder (the foreign key's SET NULL).
    """
    with transaction.atomic():
        # A hundred at a time: the verdicts' lookup has one clause per memory.
        for start in range(0, len(memories), MEMORY_CHUNK):
            _forget_memories(memories[start : start + MEMORY_CHUNK], actor, reason, event)
        forget_after_commit()


def _forget_memories(memories: Sequence[Memory], actor: str, reason: str, event: str) -> None:
    ids = [memory.pk for memory in memories]
    _scrub_verdicts_of(memories)
    _scrub_supersession_reasons(memories)
    MemoryEvent.objects.filter(memory_id__in=ids).delete()
    now = timezone.now()
    MemoryEvent.objects.bulk_create(
        MemoryEvent(
            memory_id=memory.pk,
            namespace=memory.namespace,
            event=event,
            actor=actor,
            reason="" if _quotes(reason, _texts(memory)) else reason,
            data={"kind": memory.kind},
            created_at=now,
        )
        for memory in memories
    )
    _forget_admin_log(Memory, ids)
    Memory.objects.filter(pk__in=ids).delete()
    if connection.vendor == "postgresql":  # its triggers only mark the documents
        keyword_index.delete_rows(ids)


def _texts(memory: Memory) -> list[str]:
    """The memory's own words, as other rows may quote them (casefolded)."""
    texts = [memory.content, memory.title, memory.summary, *(memory.tags or [])]
    return [text.casefold() for text in texts if isinstance(text, str) and len(text.strip()) > 3]


def _quotes(value: str, texts: Iterable[str]) -> bool:
    folded = value.casefold()
    return bool(folded) and any(text in folded for text in texts)


def _scrub_verdicts_of(memories: Sequence[Memory]) -> None:
    """The extraction verdicts that name a memory (stored it, matched it as a duplicate) or
    quote its words (a rejected candidate of its source message) lose their text."""
    texts = {memory.pk: _texts(memory) for memory in memories}
    every_text = [text for group in texts.values() for text in group]
    named = Q()
    for memory_id in texts:
        named |= Q(candidates__icontains=f'memory_id": {memory_id}')
    sources = {m.source_message_id for m in memories if m.source_message_id}
    if sources:
        named |= Q(message_id__in=sources)
    namespaces = {memory.namespace for memory in memories}
    records = Extraction.objects.filter(named, namespace__in=namespaces).only("candidates")

    def doomed(verdict: dict[str, Any]) -> bool:
        ids = {verdict.get("memory_id"), verdict.get("matched_memory_id")}
        return bool(ids & texts.keys()) or _quotes(_verdict_text(verdict), every_text)

    _rewrite_verdicts(records, doomed)


def _scrub_supersession_reasons(memories: Sequence[Memory]) -> None:
    """Other memories' history names a deleted superseder by number; a reason (an arbiter's
    answer) may quote its words: such a reason is blanked."""
    texts = {memory.pk: _texts(memory) for memory in memories}
    ids = list(texts)
    pointing = MemoryEvent.objects.filter(
        Q(data__superseded_by__in=ids) | Q(data__was_superseded_by__in=ids)
    ).exclude(reason="")
    for row in pointing.only("id", "reason", "data"):
        data = row.data if isinstance(row.data, dict) else {}
        by = data.get("superseded_by", data.get("was_superseded_by"))
        if _quotes(row.reason, texts.get(by, [])):
            MemoryEvent.objects.filter(pk=row.pk).update(reason="")


# --- Messages and threads ------------------------------------------------------------------


def forget_messages(thread: Thread, message_ids: Sequence[str], *, actor: str, reason: str) -> int:
    """Delete these messages of ``thread`` (ids it does not hold are ignored); a tombstone
    each. Returns how many were deleted. Runs in the caller's transaction."""
    found: list[str] = []
    for chunk in _chunks(list(message_ids)):
        found += Message.objects.filter(thread=thread, pk__in=chunk).values_list("id", flat=True)
    if not found:
        return 0
    learnt_from = found + _next_messages(thread.pk, found)
    for chunk in _chunks(learnt_from):
        _clear_context(Memory.objects.filter(source_message_id__in=chunk))
    for chunk in _chunks(found):
        _scrub_records(Extraction.objects.filter(message_id__in=chunk))
    _forget_admin_log(Message, found)
    for chunk in _chunks(found):
        Message.objects.filter(thread=thread, pk__in=chunk).delete()
    # The id the client knows the message by (not a namespace-qualified stored key).
    client_ids = [client_message_id(key) for key in found]
    _tombstones(Deletion.Kind.MESSAGE, client_ids, thread.namespace, actor, reason)
    forget_after_commit()
    return len(found)


def forget_thread(thread: Thread, *, actor: str, reason: str = "") -> int:
    """Delete the thread and its messages: one tombstone for the thread (its reason counts
    the messages). Returns how many messages went with it. In the caller's transaction."""
    message_ids = list(Message.objects.filter(thread=thread).values_list("id", flat=True))
    learnt_here = Q(source_thread=thread) | Q(source_message__thread=thread)
    _clear_context(Memory.objects.filter(learnt_here))
    for chunk in _chunks(message_ids):
        _scrub_records(Extraction.objects.filter(message_id__in=chunk))
    _scrub_records(Extraction.objects.filter(thread_id=thread.pk))
    _forget_admin_log(Message, message_ids)
    _forget_admin_log(Thread, [thread.pk])
    namespace, thread_id = thread.namespace, thread.pk
    thread.delete()
    count = len(message_ids)
    why = reason or f"with its {count} message{'' if count == 1 else 's'}"
    _tombstones(Deletion.Kind.THREAD, [thread_id], namespace, actor, why)
    forget_after_commit()
    return count


def _clear_context(memories: models.QuerySet[Memory]) -> None:
    """These memories no longer say where they were learnt: their context quotes a deleted
    message. What they say stays (a memory is deleted on its own)."""
    ids = list(memories.exclude(context="").values_list("id", flat=True))
    for chunk in _chunks(ids):
        Memory.objects.filter(pk__in=chunk).update(context="")
    if ids and connection.vendor == "postgresql":
        keyword_index.index_rows(ids)  # its triggers only mark: the quoted words go now


# The next message after each of these, in the thread's order (created_at, id): its
# memories' context begins with the previous message's words (runner.learnt_from).
_NEXT_SQL = (
    "SELECT id, next_id FROM (SELECT id, LEAD(id) OVER (ORDER BY created_at, id) AS next_id "
    "FROM memories_message WHERE thread_id = %s) AS ordered WHERE id IN ({ids})"
)


def _next_messages(thread_id: str, message_ids: list[str]) -> list[str]:
    found: list[str] = []
    with connection.cursor() as cursor:
        for chunk in _chunks(message_ids):
            sql = _NEXT_SQL.format(ids=", ".join(["%s"] * len(chunk)))
            cursor.execute(sql, [thread_id, *chunk])
            found += [next_id for _, next_id in cursor.fetchall() if next_id is not None]
    return found


# --- Facts ---------------------------------------------------------------------------------


def forget_facts(facts: models.QuerySet[Fact], *, actor: str, reason: str = "") -> int:
    """Delete these facts, a tombstone each (kind, number, namespace, who, when; no key or
    value). Returns how many were deleted."""
    with transaction.atomic():
        rows = list(facts.values_list("id", "namespace"))
        if not rows:
            return 0
        ids = [pk for pk, _ in rows]
        _forget_admin_log(Fact, ids)
        for chunk in _chunks(ids):
            Fact.objects.filter(pk__in=chunk).delete()
        now = timezone.now()
        Deletion.objects.bulk_create(
            Deletion(
                kind=Deletion.Kind.FACT,
                object_id=str(pk),
                namespace=namespace,
                deleted_by=actor,
                reason=reason,
                deleted_at=now,
            )
            for pk, namespace in rows
        )
        forget_after_commit(indexes=False)  # a fact is in no keyword index
    return len(rows)


# --- Shared --------------------------------------------------------------------------------


def _tombstones(kind: str, ids: list[str], namespace: str, actor: str, reason: str) -> None:
    now = timezone.now()
    Deletion.objects.bulk_create(
        (
            Deletion(
                kind=kind,
                object_id=object_id,
                namespace=namespace,
                deleted_by=actor,
                reason=reason,
                deleted_at=now,
            )
            for object_id in ids
        ),
        batch_size=CHUNK,
    )


def _verdict_text(verdict: dict[str, Any]) -> str:
    """Every text of a verdict in one string, for a substring test."""
    return json.dumps(verdict, ensure_ascii=False, default=str)


def scrubbed_verdict(verdict: Any) -> dict[str, Any]:
    """A verdict without text: its decision, the memories it names, the candidate's shape."""
    if not isinstance(verdict, dict):
        return {"forgotten": True}
    kept: dict[str, Any] = {key: verdict[key] for key in _VERDICT_KEEPS if key in verdict}
    candidate = verdict.get("candidate")
    if isinstance(candidate, dict):
        kept["candidate"] = {key: candidate[key] for key in _CANDIDATE_KEEPS if key in candidate}
    details = verdict.get("details")
    if isinstance(details, dict):
        details = {key: details[key] for key in _DETAILS_KEEPS if key in details}
        if details:
            kept["details"] = details
    kept["reason"] = ""
    kept["forgotten"] = True
    return kept


def _scrub_records(records: models.QuerySet[Extraction]) -> None:
    """Every verdict of these records loses its text (the message they read is deleted)."""
    _rewrite_verdicts(records.only("candidates"), lambda verdict: True)


def _rewrite_verdicts(records: models.QuerySet[Extraction], doomed: Any) -> None:
    for record in records:
        verdicts = record.candidates if isinstance(record.candidates, list) else []
        clean = [scrubbed_verdict(v) if doomed(v) and not _is_scrubbed(v) else v for v in verdicts]
        if clean != verdicts:
            Extraction.objects.filter(pk=record.pk).update(candidates=clean)


def _is_scrubbed(verdict: Any) -> bool:
    return isinstance(verdict, dict) and verdict.get("forgotten") is True


def _forget_admin_log(model: type[models.Model], ids: Iterable[object]) -> None:
    """The admin's change log names a row by its text ("user: my PIN is ..."), and keeps
    what a change changed: its entries about a deleted row go (the tombstone is the record)."""
    content_type = ContentType.objects.get_for_model(model)
    keys = [str(pk) for pk in ids]
    for chunk in _chunks(keys):
        LogEntry.objects.filter(content_type=content_type, object_id__in=chunk).delete()


def _chunks(items: list[Any]) -> Iterable[list[Any]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]
