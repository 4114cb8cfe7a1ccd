"""How memories fade: decay by scope half-life, and the active <-> stale lifecycle.

A memory's decay is ``exp(-ln 2 * age_days / half_life)``, its age counted from
``last_seen_at``: 1.0 when just seen, 0.5 one half-life later. Half-lives by
scope: thread 30 days, global 90 days, project SPACEDUCK_PROJECT_HALF_LIFE_DAYS
(default 60). Recall uses the decay for its recency multiplier.

``mark_stale`` (a huey periodic task, memories.tasks) marks active memories
stale when they have not been seen for SPACEDUCK_STALE_AFTER_DAYS *and* their
decay is below SPACEDUCK_STALE_DECAY_BELOW, and any active memory whose
``valid_until`` has passed (what it says no longer holds; recall and the context
block left it out from that moment). A stale memory observed again
(memories.write.dedup.touch) or recalled again (``reactivate``) becomes active; the
history records both changes. One past its ``valid_until`` is never recalled, and
``reactivate`` leaves it stale.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, cast

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories.models import (
    Memory,
    MemoryEvent,
    MemoryKind,
    MemoryScope,
    MemoryStatus,
    current,
    utc_text,
)
from memories.upkeep.compaction import record_run
from memories.write.services import memory_history_record

PROCESSOR = "staleness"
ACTOR = "maintenance:staleness"
THREAD_HALF_LIFE_DAYS = 30.0
GLOBAL_HALF_LIFE_DAYS = 90.0
# Rows marked per transaction: bounds the write lock held against the web
# process and the memory used, and keeps ``id IN (...)`` under SQLite's limit.
CHUNK_SIZE = 2000
_DAY_SECONDS = 86400.0
_LN2 = math.log(2)
# History rows go in with executemany: the ORM's bulk_create spent most of a
# 100k-memory run preparing model instances.
_HISTORY_SQL = (
    "INSERT INTO memories_memoryevent (memory_id, namespace, event, actor, reason, data, "
    "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s)"
)


def half_life_days(scope: str) -> float:
    """Days after which a memory of this scope has half its decay left."""
    if scope == MemoryScope.THREAD:
        return THREAD_HALF_LIFE_DAYS
    if scope == MemoryScope.GLOBAL:
        return GLOBAL_HALF_LIFE_DAYS
    if scope == MemoryScope.PROJECT:
        return float(settings.PROJECT_HALF_LIFE_DAYS)
    raise ValueError(f"unknown scope {scope!r}; allowed: {', '.join(MemoryScope.values)}")


def age_days(last_seen_at: datetime, now: datetime) -> float:
    # A last_seen_at in the future (clock skew) counts as just seen, never as > 1.
    return max(0.0, (now - last_seen_at).total_seconds() / _DAY_SECONDS)


def decay(last_seen_at: datetime, scope: str, now: datetime | None = None) -> float:
    """exp(-ln 2 * age_days / half_life): 1.0 when just seen, 0.5 one half-life later."""
    now = timezone.now() if now is None else now
    return math.exp(-_LN2 * age_days(last_seen_at, now) / half_life_days(scope))


def decays(seen_and_scope: Iterable[tuple[datetime, str]], now: datetime) -> list[float]:
    """``decay`` of many memories, the very same floats, without a call per memory
    (recall scores ~70 candidates a query)."""
    half_life: dict[str, float] = {}
    out = []
    for seen, scope in seen_and_scope:
        if scope not in half_life:
            half_life[scope] = half_life_days(scope)
        age = max(0.0, (now - seen).total_seconds() / _DAY_SECONDS)
        out.append(math.exp(-_LN2 * age / half_life[scope]))
    return out


def stale_cutoff(scope: str, now: datetime) -> datetime | None:
    """Active memories of ``scope`` last seen strictly before this turn stale (None: never).

    decay < threshold  <=>  age > half_life * log2(1 / threshold), so both
    conditions become one ``last_seen_at`` bound the database can apply.
    """
    threshold = float(settings.STALE_DECAY_BELOW)
    if threshold <= 0:  # no decay is below 0
        return None
    decay_age = half_life_days(scope) * math.log2(1 / threshold)
    return now - timedelta(days=max(float(settings.STALE_AFTER_DAYS), decay_age))


def mark_stale(now: datetime | None = None) -> int:
    """Mark active memories past their valid_until, and unseen decayed ones, stale; returns
    how many. Logged as a MaintenanceRun: ``marked_stale`` (all), ``expired`` (past
    valid_until) and ``by_scope`` (decayed, per scope)."""
    at = timezone.now() if now is None else now
    run = record_run(PROCESSOR, lambda: _mark_stale(at))
    return int(run.changes["marked_stale"])


def _mark_stale(now: datetime) -> dict[str, Any]:
    # First: a memory both decayed and past its validity is stale for the plainer reason.
    expired, after_id = 0, 0
    while chunk := _mark_expired_chunk(now, after_id):
        expired += len(chunk)
        after_id = chunk[-1]
    by_scope: dict[str, int] = {}
    for scope in MemoryScope.values:
        cutoff = stale_cutoff(scope, now)
        if cutoff is None:
            continue
        marked, after_id = 0, 0
        # Walk up by id: each chunk starts where the last ended instead of
        # rescanning the rows already marked.
        while chunk := _mark_chunk(scope, cutoff, now, after_id):
            marked += len(chunk)
            after_id = chunk[-1]
        if marked:
            by_scope[scope] = marked
    return {
        "marked_stale": expired + sum(by_scope.values()),
        "by_scope": by_scope,
        "expired": expired,
    }


def _mark_chunk(scope: str, cutoff: datetime, now: datetime, after_id: int) -> list[int]:
    """Mark up to CHUNK_SIZE memories and write their history in one transaction; their ids."""
    threshold = float(settings.STALE_DECAY_BELOW)
    with transaction.atomic():
        rows = list(
            Memory.objects.filter(
                status=MemoryStatus.ACTIVE, scope=scope, last_seen_at__lt=cutoff, id__gt=after_id
            )
            # A rule or a workflow holds until it is changed, however long since it was
            # last said: procedures never go stale (a stale constraint left the context).
            .exclude(kind=MemoryKind.PROCEDURE)
            .order_by("id")
            .values_list("id", "namespace", "last_seen_at")[:CHUNK_SIZE]
        )
        if not rows:
            return []
        ids = [memory_id for memory_id, _, _ in rows]
        Memory.objects.filter(pk__in=ids).update(status=MemoryStatus.STALE, updated_at=now)
        half_life = half_life_days(scope)
        history = []
        for memory_id, namespace, last_seen_at in rows:
            value = decay(last_seen_at, scope, now)
            reason = (
                f"not seen for {age_days(last_seen_at, now):.0f} days; "
                f"decay {value:.3f} is below {threshold:g}"
            )
            data = {
                "from": MemoryStatus.ACTIVE.value,
                "decay": round(value, 4),
                "half_life_days": half_life,
                "last_seen_at": last_seen_at.isoformat(),
            }
            history.append((memory_id, namespace, reason, data))
        _write_stale_history(history, now)
    return ids


def _write_stale_history(
    history: list[tuple[int, str, str, dict[str, Any]]], now: datetime
) -> None:
    """One "stale" history row per (memory id, namespace, reason, data), in one statement."""
    created_at = connection.ops.adapt_datetimefield_value(now)
    rows = [
        (
            memory_id,
            namespace,
            MemoryEvent.Event.STALE.value,
            ACTOR,
            reason,
            json.dumps(data),
            created_at,
        )
        for memory_id, namespace, reason, data in history
    ]
    with connection.cursor() as cursor:
        cursor.executemany(_HISTORY_SQL, rows)


def _mark_expired_chunk(now: datetime, after_id: int) -> list[int]:
    """Mark up to CHUNK_SIZE active memories whose valid_until is at or before ``now``, with
    their history, in one transaction; their ids (none left: an empty list). Procedures too:
    a rule "until Friday" no longer holds on Saturday. The partial index on (status,
    valid_until) finds them without reading the memories that have no validity."""
    with transaction.atomic():
        rows = list(
            Memory.objects.filter(status=MemoryStatus.ACTIVE, valid_until__lte=now, id__gt=after_id)
            .order_by("id")
            .values_list("id", "namespace", "valid_until")[:CHUNK_SIZE]
        )
        if not rows:
            return []
        ids = [memory_id for memory_id, _, _ in rows]
        Memory.objects.filter(pk__in=ids).update(status=MemoryStatus.STALE, updated_at=now)
        history = []
        for memory_id, namespace, valid_until in rows:
            ended = cast(datetime, valid_until)  # not null: the filter compared it
            data = {"from": MemoryStatus.ACTIVE.value, "valid_until": ended.isoformat()}
            history.append((memory_id, namespace, f"valid until {utc_text(ended)} passed", data))
        _write_stale_history(history, now)
    return ids


def reactivate(
    memory: Memory, actor: str, reason: str = "recalled again", *, now: datetime | None = None
) -> bool:
    """stale -> active because it was recalled again; False (and no change) if it was not
    stale, or it is past its valid_until or expires_at (``current``): what no longer holds is
    not made active by being found.

    ``last_seen_at`` is refreshed too, or the next staleness run would mark it
    stale again at once. The conditional UPDATE makes concurrent recalls of the
    same memory record one activation, not several.
    """
    at = timezone.now() if now is None else now
    with transaction.atomic():
        changed = Memory.objects.filter(
            current(at), pk=memory.pk, status=MemoryStatus.STALE
        ).update(status=MemoryStatus.ACTIVE, last_seen_at=at, updated_at=at)
        if not changed:
            return False
        memory.status, memory.last_seen_at, memory.updated_at = MemoryStatus.ACTIVE, at, at
        memory_history_record(
            memory=memory,
            event=MemoryEvent.Event.ACTIVATED,
            actor=actor,
            reason=reason,
            data={"from": MemoryStatus.STALE.value},
        )
    return True
