"""/api/health while `serve` is starting: "starting" until the worker's first heartbeat is
due, then the usual rules ("degraded" when it never came)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from spaceduck.models import WorkerHeartbeat
from tests.processes import free_port

pytestmark = pytest.mark.django_db

NEVER = "no background worker has ever started (run `manage.py serve`)"


@pytest.fixture
def queued_mode(settings):  # type: ignore[no-untyped-def]
    settings.HUEY_IMMEDIATE = False
    settings.WORKER_HEARTBEAT_SECONDS = 10.0
    settings.WORKER_STALE_SECONDS = 60
    return settings


def health(client: Client) -> tuple[int, dict]:  # type: ignore[type-arg]
    response = client.get("/api/health")
    return response.status_code, response.json()


def test_just_after_serve_started_its_worker_health_says_starting(
    client: Client, queued_mode
) -> None:  # type: ignore[no-untyped-def]
    queued_mode.SERVE_STARTED_AT = time.time() - 5
    status, body = health(client)
    assert status == 200  # the web server answers every request meanwhile
    assert body["status"] == "starting"
    assert body["problems"] == []
    assert body["worker"] == {"alive": 0, "last_heartbeat_seconds_ago": None, "starting": True}


def test_a_heartbeat_left_by_the_previous_run_does_not_end_the_start(
    client: Client, queued_mode
) -> None:  # type: ignore[no-untyped-def]
    queued_mode.SERVE_STARTED_AT = time.time() - 5
    before = timezone.now() - timedelta(seconds=30)
    WorkerHeartbeat.objects.create(worker_id="host:1", beat_at=before, stopped_at=before)
    assert health(client)[1]["status"] == "starting"


def test_once_the_first_beat_is_overdue_health_is_degraded(client: Client, queued_mode) -> None:  # type: ignore[no-untyped-def]
    queued_mode.SERVE_STARTED_AT = time.time() - (10 + 60 + 1)  # heartbeat + stale allowance
    status, body = health(client)
    assert status == 200
    assert body["status"] == "degraded"
    assert body["problems"] == [NEVER]
    assert body["worker"]["starting"] is False


def test_a_worker_that_beat_since_the_start_then_stopped_is_down_not_starting(
    client: Client, queued_mode
) -> None:  # type: ignore[no-untyped-def]
    queued_mode.SERVE_STARTED_AT = time.time() - 5
    now = timezone.now()
    WorkerHeartbeat.objects.create(worker_id="host:1", beat_at=now, stopped_at=now)
    body = health(client)[1]
    assert body["status"] == "degraded"
    assert body["problems"][0].startswith("no background worker has beaten for")


def test_the_first_beat_makes_it_ok(client: Client, queued_mode) -> None:  # type: ignore[no-untyped-def]
    queued_mode.SERVE_STARTED_AT = time.time() - 5
    WorkerHeartbeat.objects.create(worker_id="host:1", beat_at=timezone.now())
    body = health(client)[1]
    assert (body["status"], body["worker"]["alive"], body["worker"]["starting"]) == ("ok", 1, False)


def test_outside_serve_no_worker_is_degraded_at_once(client: Client, queued_mode) -> None:  # type: ignore[no-untyped-def]
    queued_mode.SERVE_STARTED_AT = 0.0  # runserver, gunicorn by hand: no start is known
    body = health(client)[1]
    assert (body["status"], body["problems"]) == ("degraded", [NEVER])


def test_another_problem_while_starting_is_still_degraded(client: Client, queued_mode) -> None:  # type: ignore[no-untyped-def]
    queued_mode.SERVE_STARTED_AT = time.time() - 5
    queued_mode.MCP_ADDRESS = f"127.0.0.1:{free_port()}"  # nothing listens there
    body = health(client)[1]
    assert body["status"] == "degraded"
    assert body["worker"]["starting"] is True
    [problem] = body["problems"]  # the worker is not a problem yet
    assert problem.startswith("the MCP endpoint at")


def test_the_overview_says_the_worker_is_starting(staff_client: Client, queued_mode) -> None:  # type: ignore[no-untyped-def]
    queued_mode.SERVE_STARTED_AT = time.time() - 5
    html = staff_client.get("/overview/").content.decode()
    assert 'class="overview-card worker worker-starting"' in html
    assert "Worker starting" in html
    assert "Worker down" not in html
    assert 'role="alert"' not in html
