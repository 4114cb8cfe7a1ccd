"""GET /api/extractions (filters, pages, only the token's namespaces) and
POST /api/extractions/{id}/retry (write permission, 409 unless failed, 404 outside grants)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import Extraction, Message
from memories.write.ingest import message_ingest
from memories.write.services import create_thread
from tests.conftest import Actor, make_actor

pytestmark = pytest.mark.django_db
NS = "user:alice"
DOWN = {"attempt": 1, "error": "chat provider answered 503: down", "at": "2024-05-01T12:00:00"}


def record(**fields: object) -> Extraction:
    return Extraction.objects.create(
        **{"namespace": NS, "status": "done", "thread_id": "t-1", **fields}
    )


def failed_extraction(namespace: str = NS) -> Extraction:
    thread = create_thread(namespace)
    extraction = message_ingest(thread.pk, "user", "I live in Lisbon.").extraction
    assert extraction is not None
    Extraction.objects.filter(pk=extraction.pk).update(status="failed", attempts=4, errors=[DOWN])
    extraction.refresh_from_db()
    return extraction


def ids(response) -> list[int]:  # type: ignore[no-untyped-def]
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()["extractions"]]


@pytest.fixture
def reader(db: None) -> Actor:
    """Alice's dashboard agent: may read user:alice, not write."""
    return make_actor([NS], ["read"], name="reader")


# --- The list -------------------------------------------------------------------------------


def test_the_list_holds_only_the_tokens_namespaces(owner: Actor, stranger: Actor) -> None:
    alice = record()
    bob = record(namespace="user:bob")
    record(namespace="agent:x")
    assert ids(owner.get("/api/extractions")) == [alice.pk]
    assert ids(stranger.get("/api/extractions")) == [bob.pk]
    everyone = make_actor(["user:*"], ["read"], name="users")
    assert ids(everyone.get("/api/extractions")) == [bob.pk, alice.pk]
    admin = make_actor(["*"], ["read"], name="admin")
    assert len(ids(admin.get("/api/extractions"))) == 3


def test_a_namespace_outside_the_grants_is_a_404_like_a_missing_one(stranger: Actor) -> None:
    record()
    response = stranger.get("/api/extractions", {"namespace": NS})
    assert response.status_code == 404
    assert "not found" in response.json()["detail"]


def test_the_list_needs_the_read_permission(db: None) -> None:
    writer = make_actor([NS], ["write"], name="writer")
    response = writer.get("/api/extractions")
    assert response.status_code == 403
    assert "'read'" in response.json()["detail"]


def test_filters_narrow_the_list(owner: Actor) -> None:
    now = timezone.now()
    plain = record(created_at=now)
    broken = record(status="failed", errors=[DOWN], created_at=now)
    recovered = record(errors=[DOWN], created_at=now)
    waiting = record(status="queued", created_at=now)
    thread = record(thread_id="t-2", created_at=now)
    nightly = record(task_id="nightly", created_at=now)
    old = record(created_at=now - timedelta(days=40))
    cutoff = (now - timedelta(days=1)).isoformat()
    cases = {
        "status=failed": [broken],
        "status=failed,queued": [broken, waiting],
        "thread=t-2": [thread],
        "task_id=nightly": [nightly],
        "failed=true": [broken, recovered],
        f"to={cutoff.replace('+', '%2B')}": [old],
        f"from={cutoff.replace('+', '%2B')}&status=done&failed=false&thread=t-1": [
            plain,
            recovered,
            nightly,
        ],
        "namespace=user:alice&thread=t-2": [thread],
    }
    for query, expected in cases.items():
        assert sorted(ids(owner.get(f"/api/extractions?{query}"))) == sorted(
            r.pk for r in expected
        ), query


@pytest.mark.parametrize(
    "query",
    [
        "status=exploded",
        "from=yesterday",
        "to=2024-05-01",  # a date-time with an offset is required
        "after=not-a-cursor",
        "limit=0",
        "limit=201",
        "namespace=nobody",
        "thread=a%0Ab",
        "statsu=failed",  # a misspelt parameter is named, never ignored
    ],
)
def test_bad_filters_are_a_422_saying_what_is_wrong(owner: Actor, query: str) -> None:
    response = owner.get(f"/api/extractions?{query}")
    assert response.status_code == 422, query
    assert response.json()["detail"]


def test_pages_follow_the_next_cursor_newest_first(owner: Actor) -> None:
    now = timezone.now()
    made = [record(created_at=now - timedelta(minutes=i)).pk for i in range(7)]
    seen: list[int] = []
    query: dict[str, object] = {"limit": 3}
    while True:
        response = owner.get("/api/extractions", query)
        seen += ids(response)
        cursor = response.json()["next"]
        if cursor is None:
            break
        query = {"limit": 3, "after": cursor}
    assert seen == made


def test_a_record_holds_its_candidates_and_errors(owner: Actor) -> None:
    made = record(
        status="failed",
        errors=[DOWN],
        candidates=[{"decision": "stored", "reason": "new memory", "memory_id": 3}],
    )
    item = owner.get("/api/extractions").json()["extractions"][0]
    assert item["id"] == made.pk
    assert item["errors"] == [DOWN]
    assert item["candidates"][0]["decision"] == "stored"


# --- Retry ----------------------------------------------------------------------------------


def test_the_owner_retries_a_failed_extraction(
    owner: Actor,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    extraction = failed_extraction()
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = owner.post(f"/api/extractions/{extraction.pk}/retry")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["id"], body["status"], body["attempts"]) == (extraction.pk, "queued", 0)
    assert body["errors"][0] == DOWN  # kept as history
    assert body["errors"][1]["retry"] is True
    assert body["errors"][1]["by"] == "token:owner"
    assert len(queued) == 1
    queued[0]()  # the worker's run (huey is immediate in tests)
    after = owner.get(f"/api/extractions/{extraction.pk}").json()
    assert after["status"] == "done"
    assert after["candidates"]


@pytest.mark.parametrize("status", ["done", "queued", "running"])
def test_retrying_an_extraction_that_did_not_fail_is_a_409(owner: Actor, status: str) -> None:
    extraction = record(status=status)
    response = owner.post(f"/api/extractions/{extraction.pk}/retry")
    assert response.status_code == 409
    assert f"is {status}; only a failed extraction can be retried" in response.json()["detail"]
    assert Extraction.objects.get(pk=extraction.pk).status == status


def test_retrying_without_the_write_permission_is_a_403(reader: Actor) -> None:
    extraction = failed_extraction()
    response = reader.post(f"/api/extractions/{extraction.pk}/retry")
    assert response.status_code == 403
    assert "'write'" in response.json()["detail"]
    assert reader.get(f"/api/extractions/{extraction.pk}").status_code == 200
    assert Extraction.objects.get(pk=extraction.pk).status == "failed"


def test_a_stranger_gets_a_404_as_for_a_missing_extraction(stranger: Actor) -> None:
    extraction = failed_extraction()
    outside = stranger.post(f"/api/extractions/{extraction.pk}/retry")
    missing = stranger.post("/api/extractions/999999/retry")
    assert outside.status_code == missing.status_code == 404
    assert outside.json()["detail"] == f"extraction {extraction.pk} not found"
    assert Extraction.objects.get(pk=extraction.pk).status == "failed"


def test_retrying_when_the_message_was_deleted_is_a_409_saying_so(owner: Actor) -> None:
    extraction = failed_extraction()
    Message.objects.filter(pk=extraction.message_id).delete()
    response = owner.post(f"/api/extractions/{extraction.pk}/retry")
    assert response.status_code == 409
    assert "its message was deleted" in response.json()["detail"]


def test_a_huge_or_unknown_id_is_not_a_500(owner: Actor) -> None:
    assert owner.post(f"/api/extractions/{2**70}/retry").status_code == 422
    assert owner.post("/api/extractions/0/retry").status_code == 422
    assert owner.post("/api/extractions/123456/retry").status_code == 404
