"""The extraction log in the dashboard: filtered, paged list; one record's decisions linked to
the memories they touched; retrying a failed run (plain form and htmx). Staff only."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from memories.models import Extraction, Message, Thread
from memories.write.extraction_log import ExtractionFilter, extraction_page, extraction_retry
from memories.write.ingest import message_ingest
from memories.write.services import create_thread
from spaceduck.core.errors import Conflict

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
NS = "user:alice"
DOWN = {"attempt": 1, "error": "chat provider answered 503: down", "at": "2024-05-01T12:00:00"}


def record(**fields: object) -> Extraction:
    """A bare record, as the log stores it (no message needed for the list)."""
    return Extraction.objects.create(
        **{"namespace": NS, "status": "done", "thread_id": "t-1", **fields}
    )


def ingest(text: str, thread: Thread | None = None, **kwargs: object) -> Extraction:
    thread = thread or create_thread(NS, "Chat")
    extraction = message_ingest(thread.pk, "user", text, **kwargs).extraction  # type: ignore[arg-type]
    assert extraction is not None
    return extraction


def failed(extraction: Extraction) -> Extraction:
    Extraction.objects.filter(pk=extraction.pk).update(
        status="failed", attempts=4, errors=[DOWN], provider="chat=openai/gpt-4o"
    )
    extraction.refresh_from_db()
    return extraction


def listed(html: str) -> list[int]:
    return [
        int(pk) for pk in re.findall(r'class="extraction-link" href="/extractions/(\d+)/"', html)
    ]


# --- The list ---------------------------------------------------------------------------------


def test_the_log_is_staff_only(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/extractions/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
    user = django_user_model.objects.create_user("agent", password="pw-agent-123")
    client.force_login(user)
    assert client.get("/extractions/").status_code == 302


def test_the_log_lists_newest_first_in_pages(staff_client: Client) -> None:
    now = timezone.now()
    ids = [record(created_at=now - timedelta(minutes=i)).pk for i in range(55)]
    first = staff_client.get("/extractions/").content.decode()
    assert listed(first) == ids[:50]
    assert "55 extractions match." in first
    older = re.search(r'class="older" rel="next" href="\?([^"]+)"', first)
    assert older is not None
    second = staff_client.get("/extractions/?" + older[1].replace("&amp;", "&")).content.decode()
    assert listed(second) == ids[50:]
    newer = re.search(r'class="newer" rel="prev" href="\?([^"]+)"', second)
    assert newer is not None
    back = staff_client.get("/extractions/?" + newer[1].replace("&amp;", "&")).content.decode()
    assert listed(back) == ids[:50]


def test_every_filter_narrows_the_log_and_they_combine(staff_client: Client) -> None:
    now = timezone.now()
    done = record(created_at=now)
    bob = record(namespace="user:bob", created_at=now)
    other_thread = record(thread_id="t-2", created_at=now)
    nightly = record(task_id="nightly", created_at=now)
    broken = record(status="failed", errors=[DOWN], created_at=now)
    recovered = record(status="done", errors=[DOWN], created_at=now)
    waiting = record(status="queued", created_at=now)
    old = record(created_at=now - timedelta(days=40))
    day = (now - timedelta(days=40)).date().isoformat()
    cases = {
        "namespace=user:bob": [bob],
        "status=failed": [broken],
        "status=queued": [waiting],
        "thread=t-2": [other_thread],
        "task_id=nightly": [nightly],
        "failed=1": [broken, recovered],  # every record with a failed attempt
        "failed=1&status=done": [recovered],
        f"from={day}&to={day}": [old],
        f"to={day}": [old],
        "namespace=user:alice&thread=t-2": [other_thread],
        "namespace=user:bob&thread=t-2": [],
    }
    for query, expected in cases.items():
        html = staff_client.get(f"/extractions/?{query}", headers=HTMX).content.decode()
        assert sorted(listed(html)) == sorted(r.pk for r in expected), query
    everything = listed(staff_client.get("/extractions/").content.decode())
    assert done.pk in everything
    assert everything[-1] == old.pk  # the oldest last


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("status=exploded", "status"),
        ("namespace=nobody", "namespace"),
        ("from=yesterday", "from"),
        ("from=2024-05-02&to=2024-05-01", "to"),
        ("after=not-a-cursor", "after"),
        ("before=99999999999999999999-1", "before"),
        ("thread=a%0Ab", "thread"),
        ("task_id=" + "x" * 300, "task_id"),
    ],
)
def test_bad_filters_are_a_400_naming_the_field(
    staff_client: Client, query: str, field: str
) -> None:
    for headers in ({}, HTMX):
        response = staff_client.get(f"/extractions/?{query}", headers=headers)
        assert response.status_code == 400, query
        html = response.content.decode()
        assert "These filters cannot be used" in html
        assert f"<code>{field}</code>" in html


def test_htmx_gets_only_the_list_and_filters_stay_in_the_form(staff_client: Client) -> None:
    record(status="failed", errors=[DOWN])
    fragment = staff_client.get("/extractions/?status=failed", headers=HTMX).content.decode()
    assert fragment.strip().startswith('<section id="extraction-list">')
    assert "<html" not in fragment
    page = staff_client.get("/extractions/?status=failed&failed=1").content.decode()
    assert "<html" in page
    assert '<option value="failed" selected>' in page
    assert 'name="failed" type="checkbox" value="1" checked' in page
    assert 'hx-push-url="true"' in page


def test_a_huge_cursor_is_held_at_the_end_not_a_500(staff_client: Client) -> None:
    pk = record().pk
    nines = "9" * 19  # past the last storable time and id
    html = staff_client.get(f"/extractions/?after={nines}-{nines}").content.decode()
    assert listed(html) == [pk]


# --- One record -------------------------------------------------------------------------------


def test_the_page_shows_the_message_the_run_and_every_decision_with_its_memories(
    staff_client: Client,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    thread = create_thread(NS, "Moving")
    with django_capture_on_commit_callbacks(execute=True):
        first = ingest("I live in Lisbon.", thread)
        again = ingest("I live in Lisbon.", thread)
        moved = ingest("I moved to Tokyo, I live in Tokyo now.", thread, task_id="relocate")
    lisbon = Extraction.objects.get(pk=first.pk).candidates[0]["memory_id"]

    html = staff_client.get(f"/extractions/{first.pk}/").content.decode()
    assert "I live in Lisbon." in html
    assert '<span class="role">user</span>' in html
    assert f'href="/threads/{thread.pk}/"' in html
    assert "chat=heuristic" in html  # the provider
    assert " ms</dd>" in html  # the duration
    assert "decision-stored" in html
    assert "new memory" in html
    assert f'created <a class="memory-link" href="/memories/{lisbon}/">#{lisbon}</a>' in html

    html = staff_client.get(f"/extractions/{again.pk}/").content.decode()
    assert "exact duplicate (content hash)" in html
    assert (
        f'deduplicated against (touched) <a class="memory-link" href="/memories/{lisbon}/">' in html
    )

    html = staff_client.get(f"/extractions/{moved.pk}/").content.decode()
    assert "superseded older memory" in html
    assert f'superseded <a class="memory-link" href="/memories/{lisbon}/">' in html
    assert "<code>relocate</code>" in html  # the task


def test_stored_text_is_escaped(staff_client: Client) -> None:
    thread = create_thread(NS, "<b>bold</b> title")
    extraction = ingest("<script>alert(1)</script> I live in Lisbon.", thread)
    Extraction.objects.filter(pk=extraction.pk).update(
        status="failed",
        errors=[{"attempt": 1, "error": "<img src=x onerror=alert(2)>", "at": "now"}],
        candidates=[
            {"candidate": {"content": "<i>x</i>"}, "decision": "<u>d</u>", "reason": "<s>"}
        ],
    )
    html = staff_client.get(f"/extractions/{extraction.pk}/").content.decode()
    for raw in ("<script>alert(1)", "<img src=x", "<i>x</i>", "<u>d</u>", "<b>bold</b>", "<s>"):
        assert raw not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html
    listing = staff_client.get("/extractions/").content.decode()
    assert "<script>alert(1)" not in listing


def test_a_record_whose_message_was_deleted_still_shows_and_says_so(staff_client: Client) -> None:
    extraction = failed(ingest("I live in Lisbon."))
    Message.objects.filter(pk=extraction.message_id).delete()
    html = staff_client.get(f"/extractions/{extraction.pk}/").content.decode()
    assert "The message was deleted" in html
    assert "It cannot be retried: its message was deleted." in html
    assert "Retry extraction" not in html


def test_an_unknown_record_is_a_404(staff_client: Client) -> None:
    assert staff_client.get("/extractions/999999/").status_code == 404
    assert staff_client.get(f"/extractions/{2**70}/").status_code == 404


def test_htmx_gets_the_record_without_the_layout(staff_client: Client) -> None:
    extraction = ingest("I live in Lisbon.")
    fragment = staff_client.get(f"/extractions/{extraction.pk}/", headers=HTMX).content.decode()
    assert fragment.strip().startswith('<article id="extraction-page"')
    assert "<html" not in fragment


# --- Retry ------------------------------------------------------------------------------------


def test_a_failed_run_offers_retry_and_a_done_one_does_not(staff_client: Client) -> None:
    broken = failed(ingest("I live in Lisbon."))
    html = staff_client.get(f"/extractions/{broken.pk}/").content.decode()
    assert f'action="/extractions/{broken.pk}/retry/"' in html
    assert f'hx-post="/extractions/{broken.pk}/retry/"' in html
    assert "chat provider answered 503: down" in html
    done = record()
    assert "Retry extraction" not in staff_client.get(f"/extractions/{done.pk}/").content.decode()


def test_retry_queues_it_again_keeps_its_errors_and_redirects_back(
    staff_client: Client,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    broken = failed(ingest("I live in Lisbon."))
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = staff_client.post(f"/extractions/{broken.pk}/retry/")
    assert response.status_code == 302
    assert response["Location"] == f"/extractions/{broken.pk}/"
    broken.refresh_from_db()
    assert (broken.status, broken.attempts) == ("queued", 0)
    assert broken.errors[0] == DOWN  # history kept
    assert broken.errors[1]["retry"] is True
    assert broken.errors[1]["by"] == "staff:staff"
    assert broken.errors[1]["after_attempts"] == 4
    assert len(queued) == 1  # the huey task, enqueued once the change commits
    page = staff_client.get(response["Location"]).content.decode()
    assert f"Extraction {broken.pk} is queued again" in page
    assert "retried</strong> by <code>staff:staff</code> after 4 attempts" in page
    queued[0]()  # the worker runs it (huey is immediate in tests)
    broken.refresh_from_db()
    assert broken.status == "done"
    assert broken.candidates[0]["decision"] == "stored"


def test_retry_with_htmx_swaps_the_status_and_the_candidates(
    staff_client: Client,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    broken = failed(ingest("I live in Lisbon."))
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(f"/extractions/{broken.pk}/retry/", headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.strip().startswith('<section id="extraction-status"')
    assert "<html" not in html
    assert '<div id="flash" role="status" aria-live="polite" hx-swap-oob="innerHTML">' in html
    # The test's transaction commits after the response; in service it commits first and
    # huey's immediate mode has run it by then ("was retried: it is done").
    assert f"Extraction {broken.pk} is queued again" in html
    assert '<section id="candidates" hx-swap-oob="true">' in html
    assert "No decision yet: the extraction is queued." in html
    assert Extraction.objects.get(pk=broken.pk).status == "done"
    html = staff_client.get(f"/extractions/{broken.pk}/").content.decode()
    assert "The user lives in Lisbon." in html


@pytest.mark.parametrize("status", ["done", "queued", "running"])
def test_retrying_a_run_that_did_not_fail_is_a_409_saying_why(
    staff_client: Client, status: str
) -> None:
    extraction = record(status=status)
    response = staff_client.post(f"/extractions/{extraction.pk}/retry/")
    assert response.status_code == 409
    assert f"extraction {extraction.pk} is {status}; only a failed extraction" in (
        response.content.decode()
    )
    response = staff_client.post(f"/extractions/{extraction.pk}/retry/", headers=HTMX)
    assert response.status_code == 409
    assert response.content.decode().strip().startswith('<section id="extraction-status"')
    assert Extraction.objects.get(pk=extraction.pk).status == status


def test_retrying_when_the_message_was_deleted_is_a_409(staff_client: Client) -> None:
    extraction = failed(ingest("I live in Lisbon."))
    Message.objects.filter(pk=extraction.message_id).delete()
    response = staff_client.post(f"/extractions/{extraction.pk}/retry/")
    assert response.status_code == 409
    assert "its message was deleted" in response.content.decode()
    assert Extraction.objects.get(pk=extraction.pk).status == "failed"


def test_retry_is_a_post_with_csrf_for_staff_only(staff_client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    extraction = failed(ingest("I live in Lisbon."))
    assert staff_client.get(f"/extractions/{extraction.pk}/retry/").status_code == 405
    assert staff_client.post("/extractions/999999/retry/").status_code == 404
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(django_user_model.objects.get(username="staff"))
    assert strict.post(f"/extractions/{extraction.pk}/retry/").status_code == 403
    anonymous = Client().post(f"/extractions/{extraction.pk}/retry/")
    assert anonymous.status_code == 302
    assert Extraction.objects.get(pk=extraction.pk).status == "failed"


# --- The one home both front ends call -----------------------------------------------------------


def test_the_service_retries_once_when_two_ask_at_once() -> None:
    extraction = failed(ingest("I live in Lisbon."))
    extraction_retry(extraction_id=extraction.pk, actor="a")
    with pytest.raises(Conflict):
        extraction_retry(extraction_id=extraction.pk, actor="b")
    retries = [e for e in Extraction.objects.get(pk=extraction.pk).errors if e.get("retry")]
    assert [e["by"] for e in retries] == ["a"]


def test_the_page_selector_never_returns_a_row_twice_across_pages() -> None:
    at = timezone.now()
    same_time = [record(created_at=at).pk for _ in range(7)]  # ties broken by id
    seen: list[int] = []
    page = extraction_page(filters=ExtractionFilter(), size=3)
    while True:
        seen += [r.pk for r in page.extractions]
        if page.older is None:
            break
        page = extraction_page(filters=ExtractionFilter(), after=page.older, size=3)
    assert seen == sorted(same_time, reverse=True)
