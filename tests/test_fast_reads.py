"""spaceduck.core.db.fast.read_plan: a hand-written SELECT builds the same instances as the ORM."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection

from memories.models import Memory
from memories.write.services import memory_create
from spaceduck.core.db.fast import read_plan

pytestmark = pytest.mark.django_db


def test_instances_from_a_plan_equal_orm_reads() -> None:
    memory = memory_create(
        namespace="user:alice",
        kind="episode",
        content="Alice ran the Boston marathon.",
        tags=["sport", "travel"],
        occurred_at=datetime(2023, 4, 17, 9, 30, tzinfo=UTC),
        actor="t",
    )
    plan = read_plan(Memory)
    with connection.cursor() as cursor:
        row = cursor.execute(
            f"SELECT {plan.columns} FROM memories_memory WHERE id = %s", [memory.pk]
        ).fetchone()
    built = plan.instance(Memory, row)
    stored = Memory.objects.get(pk=memory.pk)
    for field in Memory._meta.concrete_fields:
        assert getattr(built, field.attname) == getattr(stored, field.attname), field.name
    assert built.tags == ["sport", "travel"]
    assert built.occurred_at == datetime(2023, 4, 17, 9, 30, tzinfo=UTC)
    assert built.created_at.tzinfo is not None
    assert built._state.adding is False
    # One column on its own, converted the same way.
    assert plan.value(row, plan.index("last_seen_at")) == stored.last_seen_at
    built.content = "Alice ran the Boston marathon twice."
    built.save(update_fields=["content"])  # a real instance: it saves
    assert Memory.objects.get(pk=memory.pk).content.endswith("twice.")


def test_a_message_from_a_plan_behaves_like_an_orm_read() -> None:
    from memories.models import Message
    from memories.write.services import create_thread, save_message

    thread = create_thread("user:alice", "t")
    saved = save_message(thread.pk, "user", {"text": "hi"}, provenance={"k": 1})
    plan = read_plan(Message)
    with connection.cursor() as cursor:
        row = cursor.execute(
            f"SELECT {plan.columns} FROM memories_message WHERE id = %s", [saved.pk]
        ).fetchone()
    built = plan.instance(Message, row)
    stored = Message.objects.get(pk=saved.pk)
    assert built == stored  # same model, same primary key
    for field in Message._meta.concrete_fields:
        assert getattr(built, field.attname) == getattr(stored, field.attname), field.name
    assert built.thread.namespace == "user:alice"  # the foreign key resolves
    assert built._state.db == stored._state.db
    built.refresh_from_db()
    assert built.content == {"text": "hi"}


def test_a_thread_from_get_thread_equals_an_orm_read() -> None:
    from memories.models import Thread
    from memories.store.selectors import get_thread
    from memories.write.services import create_thread

    thread = create_thread("user:alice", "plans")
    built = get_thread(thread.pk)
    stored = Thread.objects.get(pk=thread.pk)
    for field in Thread._meta.concrete_fields:
        assert getattr(built, field.attname) == getattr(stored, field.attname), field.name
    assert built.updated_at.tzinfo is not None
    assert built._state.adding is False


def test_fast_update_writes_what_save_with_update_fields_writes() -> None:
    from django.db import DatabaseError

    from spaceduck.core.db.fast import fast_update

    memory = memory_create(
        namespace="user:alice", kind="fact", content="Alice likes tea.", actor="t"
    )
    newer = memory_create(
        namespace="user:alice", kind="fact", content="Alice likes mate.", actor="t"
    )
    memory.status, memory.superseded_by = "superseded", newer
    memory.confidence = 0.95
    memory.last_seen_at = datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    fast_update(memory, ("status", "superseded_by", "confidence", "last_seen_at"))
    stored = Memory.objects.get(pk=memory.pk)
    assert (stored.status, stored.superseded_by_id) == ("superseded", newer.pk)
    assert stored.confidence == 0.95
    assert stored.last_seen_at == datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert stored.content == "Alice likes tea."  # fields not named stay as they were
    Memory.objects.filter(pk=memory.pk).delete()
    with pytest.raises(DatabaseError, match="did not affect any rows"):
        fast_update(memory, ("status",))  # a row that is gone: as save(update_fields=...)
