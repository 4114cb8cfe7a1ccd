"""Recovery in-process: expired leases are released (or given up on), fresh ones kept;
health reports workers and stuck extractions."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from memories.models import Extraction
from memories.write.recovery import recover_extractions
from memories.write.runner import renew_leases, run_extraction
from memories.write.services import create_thread, save_message
from spaceduck.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db


def running(lease_in_s: float | None, attempts: int = 1, worker: str = "host:1") -> Extraction:
    message = save_message(create_thread("user:alice").pk, "user", "I live in Oslo.")
    lease = None if lease_in_s is None else timezone.now() + timedelta(seconds=lease_in_s)
    return Extraction.objects.create(
        message=message,
        thread_id=message.thread_id,
        namespace="user:alice",
        status="running",
        attempts=attempts,
        claimed_by=worker,
        lease_until=lease,
    )


def test_an_expired_lease_is_queued_again_and_then_extracted() -> None:
    dead = running(lease_in_s=-1)
    alive = running(lease_in_s=60)
    recovered = recover_extractions()  # huey immediate: the re-enqueued task runs now
    assert recovered.requeued == [dead.pk]
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert dead.status == "done"
    assert dead.attempts == 2
    assert "lease expired" in dead.errors[0]["error"]
    assert (alive.status, alive.claimed_by) == ("running", "host:1")


def test_a_record_whose_worker_dies_every_time_fails_in_the_end(settings) -> None:  # type: ignore[no-untyped-def]
    settings.EXTRACTION_RETRIES = 2
    poison = running(lease_in_s=-1, attempts=3)
    assert recover_extractions().failed == [poison.pk]
    poison.refresh_from_db()
    assert poison.status == "failed"
    assert poison.lease_until is None


def test_a_live_lease_cannot_be_claimed_twice_but_an_expired_one_can() -> None:
    taken = running(lease_in_s=60)
    assert run_extraction(taken.pk) is None  # another worker holds it
    expired = running(lease_in_s=-1)
    assert run_extraction(expired.pk) is not None
    expired.refresh_from_db()
    assert expired.status == "done"


def test_the_heartbeat_renews_only_its_own_leases() -> None:
    mine = running(lease_in_s=1, worker="host:1")
    theirs = running(lease_in_s=1, worker="host:2")
    assert renew_leases(worker="host:1") == 1
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.lease_until > timezone.now() + timedelta(seconds=30)  # type: ignore[operator]
    assert theirs.lease_until < timezone.now() + timedelta(seconds=2)  # type: ignore[operator]


def test_health_reports_workers_and_stuck_extractions(client: Client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.HUEY_IMMEDIATE = False
    settings.WORKER_STALE_SECONDS = 30
    WorkerHeartbeat.objects.create(
        worker_id="host:9", beat_at=timezone.now() - timedelta(seconds=90)
    )
    running(lease_in_s=-5)
    body = client.get("/api/health").json()
    assert body["status"] == "degraded"
    assert body["worker"] == {
        "alive": 0,
        "last_heartbeat_seconds_ago": pytest.approx(90, abs=5),
        "starting": False,
    }
    assert body["extractions"]["running"] == 1
    assert body["extractions"]["expired_leases"] == 1
    beaten = re.match(r"no background worker has beaten for (\d+) s", body["problems"][0])
    assert beaten is not None
    assert 88 <= int(beaten.group(1)) <= 100  # the clock runs while the request is served
    assert "1 extraction(s) running with expired leases" in body["problems"]
    WorkerHeartbeat.objects.filter(worker_id="host:9").update(beat_at=timezone.now())
    Extraction.objects.update(status="done")
    body = client.get("/api/health").json()
    assert (body["status"], body["problems"], body["worker"]["alive"]) == ("ok", [], 1)


def test_health_reports_memories_missing_from_the_search_indexes(client: Client) -> None:
    from django.db import connection

    from memories.write.services import memory_create

    memory = memory_create(namespace="user:alice", kind="fact", content="Alice rows.", actor="t")
    assert client.get("/api/health").json()["indexes"]["problem"] is None
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memories_vec WHERE memory_id = %s", [memory.pk])
    body = client.get("/api/health").json()
    assert body["status"] == "degraded"
    assert (body["indexes"]["memories"], body["indexes"]["vectors"]) == (1, 0)
    assert "manage.py reindex" in body["indexes"]["problem"]
    assert body["indexes"]["problem"] in body["problems"]


def test_an_unexpected_error_in_an_attempt_is_a_failed_attempt_not_a_record_left_running(
    monkeypatch: pytest.MonkeyPatch,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    from django.db import OperationalError

    from memories.write import runner

    def locked(*args: object, **kwargs: object) -> None:
        raise OperationalError("database is locked")

    settings.EXTRACTION_RETRIES = 1
    monkeypatch.setattr(runner, "commit_candidate", locked)
    record = running(lease_in_s=-1, attempts=0)
    assert run_extraction(record.pk) is not None
    record.refresh_from_db()
    assert (record.status, record.claimed_by, record.lease_until) == ("queued", "", None)
    assert record.next_attempt_at is not None  # retried after the backoff
    assert "database is locked" in record.errors[-1]["error"]
    assert renew_leases(worker=runner.worker_id()) == 0  # nothing for a heartbeat to keep alive
    run_extraction(record.pk)  # the last attempt fails the same way
    record.refresh_from_db()
    assert record.status == "failed"
