"""The overview: per namespace what is remembered, work waiting for a person, the queue,
the worker (alive or dead) and the last day's extractions (test client, with and without htmx)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from memories.models import Extraction, Memory
from memories.web import overview
from memories.write.services import memory_create
from notes.services import save_note
from spaceduck.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
URL = "/overview/"


def make(content: str, namespace: str = "user:alice", **fields: object) -> Memory:
    memory = memory_create(
        namespace=namespace, kind=str(fields.pop("kind", "fact")), content=content, actor="t"
    )
    if fields:
        Memory.objects.filter(pk=memory.pk).update(**fields)
    return memory


def extraction(status: str, *, hours_ago: float = 0, **fields: object) -> Extraction:
    created = timezone.now() - timedelta(hours=hours_ago)
    return Extraction.objects.create(
        namespace=str(fields.pop("namespace", "user:alice")),
        status=status,
        created_at=created,
        **fields,
    )


def card(html: str, card_id: str) -> str:
    found = re.search(rf'<(?:a|div) [^>]*id="{card_id}"[^>]*>(.*?)</(?:a|div)>', html, re.S)
    assert found, f"no #{card_id} on the page"
    return " ".join(found.group(0).split())


# --- Who may look ----------------------------------------------------------------------


def test_anonymous_visitors_are_sent_to_the_login(client: Client) -> None:
    response = client.get(URL)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_non_staff_users_are_sent_to_the_login(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    user = django_user_model.objects.create_user("agent-owner", password="pw-12345678")
    client.force_login(user)
    assert client.get(URL).status_code == 302


def test_the_root_still_shows_the_memory_viewer(staff_client: Client) -> None:
    make("Alice likes tea.")
    root = staff_client.get("/").content.decode()
    assert "<h1>Memories</h1>" in root
    assert 'id="memory-list"' in root
    page = staff_client.get(URL).content.decode()
    assert "<h1>Overview</h1>" in page
    assert '<a href="/overview/">Overview</a>' in page  # the navigation's link


def test_the_overview_answers_get_only(staff_client: Client) -> None:
    assert staff_client.post(URL).status_code == 405


# --- What is remembered, per namespace ---------------------------------------------------


def test_each_namespace_counts_its_memories_by_kind_and_status(staff_client: Client) -> None:
    make("Alice likes tea.")
    make("Alice lives in Porto.")
    make("Alice went to Lisbon.", kind="episode", status="candidate")
    make("Deploy on Fridays.", kind="procedure", status="archived")
    make("Bob likes coffee.", namespace="user:bob")
    page = overview.namespace_counts()
    rows = {row.namespace: row for row in page.rows}
    assert list(rows) == ["user:alice", "user:bob"]
    alice = rows["user:alice"]
    assert alice.kinds == [("fact", 2), ("episode", 1), ("procedure", 1)]
    assert dict(alice.statuses) == {
        "candidate": 1,
        "active": 2,
        "superseded": 0,
        "stale": 0,
        "archived": 1,
    }
    assert (alice.total, alice.candidates) == (4, 1)
    assert rows["user:bob"].total == 1

    html = staff_client.get(URL).content.decode()
    # Every number leads to the memories it counts.
    assert '<a href="/?namespace=user%3Aalice&amp;kind=fact">2</a>' in html
    assert '<a href="/?namespace=user%3Aalice&amp;status=archived">1</a>' in html
    assert '<a class="candidates" href="/review/memories/?namespace=user%3Aalice">1</a>' in html
    assert (
        '<a class="namespace-link" href="/?namespace=user%3Abob"><code>user:bob</code></a>' in html
    )
    # Under 600 px a row is a card, each number under its column's name (data-label).
    episodes = '<a href="/?namespace=user%3Aalice&amp;kind=episode">1</a>'
    assert f'<td class="kind-col" data-label="episode">{episodes}</td>' in html
    assert '<td data-label="stale"><span class="zero">0</span></td>' in html


def test_namespaces_come_a_page_at_a_time(
    staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("user:a", "user:b", "user:c", "user:d", "user:e"):
        make(f"Lives in {name}.", namespace=name)
    monkeypatch.setattr(overview, "NAMESPACES_PER_PAGE", 2)
    seen: list[str] = []
    url = URL
    while url:
        html = staff_client.get(url).content.decode()
        seen += re.findall(r'class="namespace-link"[^>]*><code>([^<]+)</code>', html)
        found = re.search(r'<a class="older" rel="next" href="([^"]+)"', html)
        url = URL + found.group(1).replace("&amp;", "&") if found else ""
    assert seen == ["user:a", "user:b", "user:c", "user:d", "user:e"]  # no gap, no repeat


def test_htmx_gets_only_the_overview_section(staff_client: Client) -> None:
    make("Alice likes tea.")
    response = staff_client.get(URL, headers=HTMX)
    fragment = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in fragment
    assert fragment.strip().startswith('<section id="overview"')
    assert "user:alice" in fragment


def test_a_bad_page_cursor_gets_a_message_and_a_400_not_a_500(staff_client: Client) -> None:
    response = staff_client.get(URL, {"after": "<b>nonsense</b>"})
    html = response.content.decode()
    assert response.status_code == 400
    assert 'role="alert"' in html
    assert "not of the form kind:id" in html
    assert "<b>nonsense</b>" not in html  # the cursor is quoted escaped
    fragment = staff_client.get(URL, {"after": "x"}, headers=HTMX)
    assert fragment.status_code == 400
    assert fragment.content.decode().strip().startswith('<section id="overview"')


def test_no_memories_yet_says_so(staff_client: Client) -> None:
    assert "No memories yet." in staff_client.get(URL).content.decode()


# --- Work waiting for a person -----------------------------------------------------------


def test_candidates_awaiting_review_are_counted_as_in_the_navigation(
    staff_client: Client,
) -> None:
    for i in range(3):
        make(f"Alice may like genre {i}.", status="candidate")
    make("Bob may like jazz.", namespace="user:bob", status="candidate")
    make("Alice likes tea.")
    html = staff_client.get(URL).content.decode()
    text = card(html, "candidates-card")
    assert "<strong>4</strong> candidate memories awaiting review" in text
    assert 'href="/review/memories/"' in text
    assert '<span class="count">4</span>' in html  # the navigation says the same


def test_a_capped_candidate_count_says_so(
    staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(overview, "memory_review_count", lambda: (1000, True))
    assert "<strong>1000+</strong>" in card(
        staff_client.get(URL).content.decode(), "candidates-card"
    )


def test_pending_notes_are_counted_and_linked_to_their_review(staff_client: Client) -> None:
    save_note("user:alice", "Deploys move to Wednesdays.", status="pending")
    save_note("user:bob", "Standups at ten.", status="pending")
    save_note("user:alice", "Accepted already.")
    text = card(staff_client.get(URL).content.decode(), "notes-card")
    assert "<strong>2</strong> pending notes" in text
    assert 'href="/notes/review/"' in text


# --- The queue and the worker --------------------------------------------------------------


def test_the_queue_length_is_the_one_health_reports(
    staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huey.contrib.djhuey import HUEY

    monkeypatch.setattr(HUEY, "pending_count", lambda: 7)
    assert "<strong>7</strong> tasks in the queue" in card(
        staff_client.get(URL).content.decode(), "queue-card"
    )
    assert staff_client.get("/api/health").json()["queue"]["pending"] == 7


def test_a_queue_that_does_not_answer_is_shown_not_a_500(
    staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huey.contrib.djhuey import HUEY

    def broken() -> int:
        raise ConnectionError("redis is down")

    monkeypatch.setattr(HUEY, "pending_count", broken)
    response = staff_client.get(URL)
    assert response.status_code == 200
    assert "the queue did not answer" in card(response.content.decode(), "queue-card")


def test_a_live_worker_is_shown_alive(staff_client: Client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.HUEY_IMMEDIATE = False
    WorkerHeartbeat.objects.create(worker_id="host:1", beat_at=timezone.now())
    html = staff_client.get(URL).content.decode()
    text = card(html, "worker-card")
    assert "worker-alive" in text
    assert "Worker alive" in text
    assert "1 worker, last heartbeat" in text
    assert 'role="alert"' not in html


def test_a_worker_silent_past_the_stale_limit_is_shown_dead_in_red(
    staff_client: Client, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.HUEY_IMMEDIATE = False
    beat = timezone.now() - timedelta(seconds=settings.WORKER_STALE_SECONDS + 300)
    WorkerHeartbeat.objects.create(worker_id="host:1", beat_at=beat)
    html = staff_client.get(URL).content.decode()
    text = card(html, "worker-card")
    assert "worker-dead" in text
    assert "Worker down" in text
    assert "last heartbeat" in text
    # The same words /api/health uses, in the page's list of problems.
    problem = staff_client.get("/api/health").json()["problems"][0]
    assert problem.startswith("no background worker has beaten for")
    assert f"<li>{problem}</li>" in html
    css = staff_client.get("/static/css/spaceduck.css")
    assert ".worker-dead" in b"".join(css.streaming_content).decode()  # type: ignore[attr-defined]


def test_a_stopped_worker_and_no_worker_at_all_are_dead(staff_client: Client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.HUEY_IMMEDIATE = False
    text = card(staff_client.get(URL).content.decode(), "worker-card")
    assert "worker-dead" in text
    assert "no worker has ever started" in text
    WorkerHeartbeat.objects.create(
        worker_id="host:1", beat_at=timezone.now(), stopped_at=timezone.now()
    )
    assert "worker-dead" in card(staff_client.get(URL).content.decode(), "worker-card")


def test_in_immediate_mode_no_worker_is_needed(staff_client: Client) -> None:
    text = card(staff_client.get(URL).content.decode(), "worker-card")
    assert "worker-immediate" in text
    assert "worker-dead" not in text


# --- The last day's extractions --------------------------------------------------------------


def test_extractions_of_the_last_day_are_counted_by_status(staff_client: Client) -> None:
    for status in ("done", "done", "queued", "failed"):
        extraction(status)
    extraction("done", hours_ago=30)  # yesterday's: not counted
    extraction("failed", hours_ago=30)
    recent = overview.recent_extractions()
    assert recent.counts == {"queued": 1, "running": 0, "done": 2, "failed": 1}
    assert recent.total == 4
    html = staff_client.get(URL).content.decode()
    assert '<td class="extractions-done" data-label="done">2</td>' in html
    assert '<td class="extractions-running" data-label="running">0</td>' in html


def test_failures_link_to_the_failed_log_and_each_record(staff_client: Client) -> None:
    failed = extraction(
        "failed", errors=[{"attempt": 3, "error": "<script>alert(1)</script> timed out"}]
    )
    old = extraction("failed", hours_ago=30)
    extraction("done")
    html = staff_client.get(URL).content.decode()
    assert '<a class="bad" href="/extractions/?status=failed">1</a>' in html
    assert f'<a href="/extractions/{failed.pk}/">Extraction #{failed.pk}</a>' in html
    assert f'href="/extractions/{old.pk}/"' not in html  # older than a day
    assert "&lt;script&gt;alert(1)&lt;/script&gt; timed out" in html  # stored text escaped
    assert "<script>alert(1)</script>" not in html


def test_no_failure_no_failure_links(staff_client: Client) -> None:
    extraction("done")
    html = staff_client.get(URL).content.decode()
    assert "/extractions/?status=failed" not in html
    assert '<td class="extractions-failed" data-label="failed">0</td>' in html


def test_stalled_extractions_are_listed_as_problems(staff_client: Client) -> None:
    lease_gone = timezone.now() - timedelta(minutes=5)
    extraction("running", lease_until=lease_gone)
    html = staff_client.get(URL).content.decode()
    assert "<li>1 extraction(s) running with expired leases</li>" in html


# --- The counts the triggers keep (migration 0014) ------------------------------------------


def _kept_counts() -> dict[tuple[str, str, str], int]:
    from django.db import connection

    with connection.cursor() as cursor:
        rows = cursor.execute(
            "SELECT namespace, kind, status, n FROM memories_namespace_count"
        ).fetchall()
    return {(ns, kind, status): n for ns, kind, status, n in rows}


def _counted() -> dict[tuple[str, str, str], int]:
    from django.db.models import Count

    rows = Memory.objects.values_list("namespace", "kind", "status").annotate(n=Count("id"))
    return {(ns, kind, status): n for ns, kind, status, n in rows.order_by()}


def test_the_kept_counts_follow_every_kind_of_write() -> None:
    tea = make("Alice drinks green tea.")
    make("Alice lives in Lisbon.")
    make("Alice hiked on Sunday.", kind="episode")
    bob = make("Bob likes jazz.", namespace="user:bob")
    assert (
        _kept_counts()
        == _counted()
        == {
            ("user:alice", "fact", "active"): 2,
            ("user:alice", "episode", "active"): 1,
            ("user:bob", "fact", "active"): 1,
        }
    )

    Memory.objects.filter(pk=tea.pk).update(status="archived")  # a queryset update
    bob.namespace, bob.kind = "user:carol", "procedure"
    bob.save(update_fields=["namespace", "kind"])  # a row moved and re-kinded
    tea.refresh_from_db()
    tea.title = "tea"
    tea.save(update_fields=["title"])  # no counted column changed
    assert _kept_counts() == _counted()
    assert ("user:bob", "fact", "active") not in _kept_counts()  # zero counts are removed

    Memory.objects.filter(namespace="user:alice", kind="fact").delete()  # a queryset delete
    assert (
        _kept_counts()
        == _counted()
        == {
            ("user:alice", "episode", "active"): 1,
            ("user:carol", "procedure", "active"): 1,
        }
    )


def test_the_overview_shows_the_kept_counts() -> None:
    make("Alice drinks green tea.")
    make("Alice drinks coffee.", status="candidate")
    page = overview.namespace_counts()
    row = page.rows[0]
    assert (row.namespace, row.total, row.candidates) == ("user:alice", 2, 1)
    assert dict(row.kinds)["fact"] == 2
