"""What one message costs the database: statements (round trips on PostgreSQL) and flushes.

Counted with Django's execute_wrapper, which sees every statement the code sends, in a
real transaction (``transaction=True``: inside the test's usual atomic block every
transaction would be a savepoint). The namespace is new for each test, so the per-process
vector cache starts cold the same way every time and the counts are deterministic.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection, transaction

from memories.models import Extraction, Memory, Message, Thread
from memories.write import runner
from memories.write.ingest import message_ingest
from memories.write.services import create_thread, message_draft, message_write_with
from spaceduck.core.db.fast import PREPARE_THRESHOLD, hot_cursor

pytestmark = pytest.mark.django_db(transaction=True)

# A message with one new memory, in a namespace in use, measured when these were cut (issue
# 30). Before: 36 statements on both databases (2 of them savepoint commands), and on
# PostgreSQL 3 transactions that each waited for a WAL flush (now 1: the message's own).
# Then 30 on PostgreSQL; since the claim reads the message and the one before it and
# switches the commit setting, the finish switches it back, the thread's read takes the
# append lock and the message (its time computed), the thread's touch and the record are
# one INSERT: 22; 19 since a candidate's look-ups before the embedding are one statement,
# and so are those again under the write lock (the message still there, the exact
# duplicate, the claim's holders); 15 since a search reads the row count, the counters and
# the changes past its cached copy with their vectors in one statement; 14 since the reads
# under the lock bring the vector counters too; 13 since the first reads bring them too;
# 11 since a new memory, its vector and its history row are one INSERT; 10 since the first
# reads bring the slot's holders whole (they were their ids, then the rows).
# Lower is fine; higher means a round trip came back on the hot path.
MAX_STATEMENTS = {"postgresql": 10, "sqlite": 31}


@contextmanager
def statements() -> Iterator[list[str]]:
    sent: list[str] = []

    def record(execute: Callable[..., Any], sql: str, *args: Any) -> Any:
        sent.append(" ".join(sql.split()))
        return execute(sql, *args)

    with connection.execute_wrapper(record):
        yield sent


def ingest(text: str) -> tuple[Extraction, list[str]]:
    """``text`` ingested after a first message in the same new namespace (which loads the
    vector cache): the statements of a message in a namespace already in use. Runtime
    settings are read once every 2 s, whichever message that falls on: not counted."""
    thread = create_thread(f"user:{uuid.uuid4().hex[:8]}", title="round trips")
    message_ingest(thread.id, "user", "I work at CERN as a nurse.")
    with statements() as sent:
        ingested = message_ingest(thread.id, "user", text)  # extracted inline (huey immediate)
    assert ingested.extraction is not None
    sent = [s for s in sent if "spaceduck_runtimesetting" not in s]
    return Extraction.objects.get(pk=ingested.extraction.pk), sent


def test_a_stored_memory_costs_no_savepoint_and_one_vector_statement() -> None:
    record, sent = ingest("I live in Paris.")
    assert [c["decision"] for c in record.candidates] == ["stored"]
    assert not [s for s in sent if "SAVEPOINT" in s.upper()]
    vector_writes = [s for s in sent if "memories_vector_version" in s and "INSERT" in s]
    history = [s for s in sent if "INSERT INTO memories_memoryevent" in s]
    assert len(history) == 1
    if connection.vendor == "postgresql":
        # The memory, its vector, its namespace's new version, the change log and its
        # pruning, and its history row at once.
        assert len(vector_writes) == 1
        assert vector_writes[0].startswith('WITH m AS (INSERT INTO "memories_memory"')
        assert "INSERT INTO memories_vec(" in vector_writes[0]
        assert vector_writes == history
        assert not [s for s in sent if s.startswith("SELECT namespace FROM memories_vec")]


def test_the_message_and_its_record_are_saved_in_two_statements_on_postgresql() -> None:
    thread = create_thread(f"user:{uuid.uuid4().hex[:8]}", title="save")
    message_ingest(thread.id, "user", "I work at CERN as a nurse.")
    with statements() as sent, transaction.atomic():
        message, record = message_write_with(
            message_draft(thread.id, "user", "Hello."), lambda m: Extraction(message=m)
        )
    assert record is not None
    assert record.message_id == message.pk
    saved = Message.objects.get(pk=message.pk)
    assert saved.content == "Hello."
    assert Extraction.objects.get(pk=record.pk).status == "queued"
    assert Thread.objects.get(pk=thread.id).updated_at >= saved.created_at
    if connection.vendor == "postgresql":
        # The thread with the append lock, then the writes at once (the time with them).
        assert len(sent) == 2, sent
        assert "pg_advisory_xact_lock" in sent[0]
    else:
        assert len(sent) == 6, sent  # BEGIN IMMEDIATE, thread, newest, message, touch, record


def test_the_claim_reads_the_record_in_the_same_statement() -> None:
    _record, sent = ingest("I live in Paris.")
    claims = [s for s in sent if "UPDATE memories_extraction SET status = 'running'" in s]
    assert len(claims) == 1
    assert " RETURNING " in claims[0]
    assert not [s for s in sent if s.startswith("SELECT * FROM memories_extraction")]
    if connection.vendor == "postgresql":
        # With the message, the one before it and the commit setting: no statement of their own.
        assert claims[0].startswith("WITH c AS (UPDATE memories_extraction")
        assert "set_config('synchronous_commit', 'off', false)" in claims[0]
        assert not [s for s in sent if s.startswith(('SELECT "id", "thread_id"', "SELECT p."))]
        assert not [s for s in sent if "synchronous_commit" in s and s not in [*claims, sent[-1]]]
        assert sent[-1].startswith("WITH f AS (UPDATE memories_extraction SET status = ")


def test_statements_per_message_stay_within_the_measured_count() -> None:
    _record, sent = ingest("I live in Paris.")
    assert len(sent) <= MAX_STATEMENTS[connection.vendor], "\n".join(sent)


def test_the_extraction_commits_without_waiting_for_the_flush_and_the_message_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("synchronous_commit is PostgreSQL's")
    seen: list[str] = []
    real = runner._extract

    def extract(claimed: runner.Claimed) -> Any:
        seen.append(synchronous_commit())
        return real(claimed)

    monkeypatch.setattr(runner, "_extract", extract)
    thread = create_thread(f"user:{uuid.uuid4().hex[:8]}", title="flush")
    message_ingest(thread.id, "user", "I live in Paris.")
    assert seen == ["off"]  # the attempt's writes: derived, recomputed after a crash
    assert synchronous_commit() == "on"  # the next message's save waits for its flush again
    assert Memory.objects.filter(namespace=thread.namespace).count() == 1


def test_a_claim_that_finds_nothing_to_run_leaves_the_flush_on() -> None:
    thread = create_thread(f"user:{uuid.uuid4().hex[:8]}", title="flush")
    ingested = message_ingest(thread.id, "user", "I live in Paris.")
    assert ingested.extraction is not None
    assert runner.run_extraction(ingested.extraction.pk) is None  # done already (inline)
    if connection.vendor == "postgresql":
        assert synchronous_commit() == "on"


def synchronous_commit() -> str:
    with connection.cursor() as cursor:
        return str(cursor.execute("SHOW synchronous_commit").fetchone()[0])


@pytest.mark.parametrize("prepare", [True, False])
def test_hot_statements_are_prepared_once_per_connection_unless_switched_off(
    settings: Any, prepare: bool
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's here")
    settings.DATABASE_PREPARE = prepare
    name = f"prepared_{prepare}".lower()  # each case its own statement, whatever ran before
    sql = f"SELECT count(*) AS {name} FROM memories_thread WHERE id = %s"
    for _ in range(PREPARE_THRESHOLD + 1):
        with hot_cursor() as cursor:
            assert cursor.execute(sql, ["no such thread"]).fetchone()[0] == 0
    with connection.cursor() as cursor:
        prepared = cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            [f"SELECT count(*) AS {name} FROM memories_thread WHERE id = $1%"],
        ).fetchone()[0]
    assert prepared == (1 if prepare else 0)
