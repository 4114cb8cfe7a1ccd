"""The Python API of the durable store exposes the issue's names over the shared services."""

from __future__ import annotations

import pytest

from spaceduck import store

pytestmark = pytest.mark.django_db


def test_the_python_api_walks_facts_threads_and_notes() -> None:
    store.set_fact("user:alice", "mood", {"level": 3}, ttl_ms=60_000, provenance={"run_id": "r1"})
    assert store.get_fact("user:alice", "mood").value == {"level": 3}
    assert [f.key for f in store.list_all_facts()] == ["mood"]

    thread = store.create_thread("user:alice", title="chat")
    store.save_message(thread.id, "user", "hello", id="m1")
    store.save_message(thread.id, "assistant", {"text": "hi"}, id="m2")
    assert store.count_messages(thread.id) == 2
    assert [m.id for m in store.list_messages(thread.id, limit=1)] == ["m2"]

    old = store.save_note("user:alice", "Tea at 4pm.", kind="habit")
    new = store.save_note("user:alice", "Coffee at 4pm.", kind="habit", supersedes=[old.uid])
    assert [n.uid for n in store.list_notes("user:alice")] == [new.uid]
    store.enable_note_search("user")
    assert [n.uid for n in store.search_notes("user", "coffee")] == [new.uid]
    store.set_note_status(new.uid, "rejected", by="test")
    assert [n.uid for n in store.list_notes("user:alice")] == [old.uid]

    assert store.delete_messages(thread.id, ["m1", "nope"]) == 1
    store.delete_thread(thread.id)
    store.delete_fact("user:alice", "mood")
    assert store.list_facts("user:alice") == []
    assert store.delete_expired_facts() == 0


def test_the_periodic_tasks_are_scheduled_and_do_the_work() -> None:
    from huey.contrib.djhuey import HUEY

    from memories.tasks import compact_threads, expire_facts, merge_keyword_index

    periodic = {task.__name__ for task in HUEY._registry._periodic_tasks}
    assert {"expire_facts", "compact_threads", "merge_keyword_index"} <= periodic
    assert merge_keyword_index.call_local() == 0  # a new database: one segment at most
    store.set_fact("user:alice", "gone", 1, ttl_ms=0)
    assert expire_facts.call_local() == 1
    assert compact_threads.call_local() == {"conversation_compactor": {"compacted": {}}}
