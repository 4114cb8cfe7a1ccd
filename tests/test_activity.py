"""``/activity/`` (spaceduck.ops.activity): who did what, when, from the records the project
keeps; filtered by actor, namespace, kind and dates, paged by keyset, exported as CSV and
JSON Lines with the same filters. Staff only."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from memories.models import CONFLICT_HISTORY, Conflict, Fact, Memory, MemoryEvent, Thread
from memories.write import lifecycle
from memories.write.conflicts import conflict_undo
from memories.write.services import (
    create_thread,
    delete_fact,
    memory_create,
    memory_delete,
    set_fact,
)
from notes.services import save_note, set_note_status
from spaceduck.core import runtime
from spaceduck.core.tokens import token_create, token_revoke
from spaceduck.models import ApiToken
from spaceduck.ops.activity import (
    CONFLICT_ROWS,
    STREAMS,
    ActivityFilter,
    ActivityPosition,
    activity_page,
)
from spaceduck.ops.erasure import erase_namespace
from tests.conftest import Actor, make_actor
from tests.memories.test_conflict_inbox import flip

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}
NS = "user:alice"


def _all_kinds(owner: Actor) -> dict[str, int]:
    """One change of every kind, by people and agents; the ids the page should link."""
    conflict = flip(owner)  # token:owner says tea, tea, coffee: a conflict opens
    reviewer = make_actor([NS], ["read", "approve"], name="reviewer")
    answer = reviewer.post(f"/api/conflicts/{conflict['id']}/resolve", {"decision": "keep_both"})
    assert answer.status_code == 200, answer.content
    waiting = memory_create(
        namespace=NS, kind="fact", content="The user likes Lyon.", actor="token:owner"
    )
    waiting.status = "candidate"
    waiting.save(update_fields=["status"])
    lifecycle.memory_approve(memory=waiting, actor="staff:ada", can_approve=True)
    note = save_note(NS, "A pending note.", author="token:owner", status="pending")
    set_note_status(note.uid, "accepted", "staff:ada")
    set_fact(NS, "city", "Lyon", actor="token:owner")
    set_fact(NS, "city", "Paris", actor="staff:ada")
    set_fact(NS, "gone", 1, actor="token:owner")
    delete_fact(NS, "gone", actor="token:owner")
    made = token_create(name="helper", namespaces=[NS], permissions=["read"], created_by="cli")
    token_revoke(token_id=made.token.pk, revoked_by="staff:ada")
    memory_create(namespace="user:bob", kind="fact", content="Bob is here.", actor="cli")
    erase_namespace("user:bob", by="staff:ada")
    runtime.settings_update(values={"memory_enabled": False}, actor="staff:ada")
    return {"new": conflict["new"]["id"], "approved": waiting.pk}


def test_the_page_shows_every_kind_of_change_with_who_and_a_link(
    owner: Actor, staff_client: Client
) -> None:
    ids = _all_kinds(owner)
    page = staff_client.get("/activity/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="site-nav"' in html
    assert 'href="/activity/"' in html
    for who in ("token:owner", "token:reviewer", "staff:ada", "cli"):
        assert f">{who}</a>" in html, who
    for kind in ("memory", "conflict", "note", "fact", "token", "erase", "setting"):
        assert f"kind-{kind}" in html, kind
    assert f'href="/memories/{ids["approved"]}/"' in html  # the approval links the memory
    assert f'href="/memories/{ids["new"]}/"' in html  # the conflict's decision, its memory
    assert "keep both" in html
    assert "promoted" in html
    assert "revoked" in html
    assert "memory_enabled: true → false" in html
    assert "1 memory, 1 history entry" in html  # the erasure, in words
    assert "Bob is here" not in html  # who and what, never what a memory said


def test_htmx_gets_the_list_only(owner: Actor, staff_client: Client) -> None:
    _all_kinds(owner)
    part = staff_client.get("/activity/", {"kind": "token"}, headers=HX)
    assert part.status_code == 200
    html = part.content.decode()
    assert html.lstrip().startswith('<section id="activity-list">')
    assert 'id="site-nav"' not in html
    assert "token helper" in html
    assert "kind-memory" not in html


def _entries(staff_client: Client, **query: str) -> list[str]:
    found = staff_client.get("/activity/activity.jsonl", query)
    assert found.status_code == 200
    return [json.loads(line) for line in b"".join(found.streaming_content).splitlines()]


def test_filters_by_actor_namespace_kind_and_dates(owner: Actor, staff_client: Client) -> None:
    _all_kinds(owner)
    by_ada = _entries(staff_client, actor="staff:ada")
    assert {e["actor"] for e in by_ada} == {"staff:ada"}
    assert {e["kind"] for e in by_ada} == {"memory", "note", "fact", "token", "setting", "erase"}
    in_bob = _entries(staff_client, namespace="user:bob")
    assert {e["kind"] for e in in_bob} == {"erase"}  # bob's memory went with the erase
    assert {e["namespace"] for e in _entries(staff_client, namespace="user:alice")} == {NS}
    facts = _entries(staff_client, kind="fact")
    assert sorted(e["action"] for e in facts) == ["changed", "deleted", "set", "set"]
    city = Fact.objects.get(namespace=NS, key="city").pk
    assert [
        (e["action"], e["actor"]) for e in facts if e["summary"].startswith(f"fact #{city}")
    ] == [
        ("changed", "staff:ada"),
        ("set", "token:owner"),
    ]  # who set a fact, and who changed it: never its value
    assert not any("Lyon" in e["summary"] or "Paris" in e["summary"] for e in facts)
    assert [e["actor"] for e in facts if e["action"] == "deleted"] == ["token:owner"]
    today = timezone.localdate()
    assert _entries(staff_client, **{"from": str(today + timedelta(days=1))}) == []
    assert len(_entries(staff_client, to=str(today))) == len(_entries(staff_client))
    assert _entries(staff_client, to=str(today - timedelta(days=1))) == []


@pytest.mark.parametrize("headers", [{}, HX])
@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"kind": "nope"}, "Select a valid choice"),
        ({"namespace": "not a namespace"}, "namespace"),
        ({"after": "12-x"}, "page cursor"),
        ({"from": "2026-02-02", "to": "2026-02-01"}, "must not be before"),
        ({"from": "yesterday"}, "Enter a valid date"),
    ],
)
def test_bad_filters_are_a_400_that_says_why(
    staff_client: Client, headers: dict[str, str], query: dict[str, str], said: str
) -> None:
    answer = staff_client.get("/activity/", query, headers=headers)
    assert answer.status_code == 400
    assert said in answer.content.decode()
    exported = staff_client.get("/activity/activity.csv", query, headers=headers)
    assert exported.status_code == 400
    assert said in exported.content.decode()


def test_staff_only(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    for url in ("/activity/", "/activity/activity.csv", "/activity/activity.jsonl"):
        assert client.get(url).status_code == 302
    user = django_user_model.objects.create_user("visitor", password="pw-visitor-1")
    client.force_login(user)
    for url in ("/activity/", "/activity/activity.csv"):
        answer = client.get(url)
        assert answer.status_code == 302
        assert "/activity/" not in answer["Location"].split("?")[0]


def _many_at_one_instant(count: int) -> None:
    """``count`` memory events, tokens and settings changes all at one instant: the
    order must still be total (stream, then id) for keyset pages to lose nothing."""
    at = timezone.now().replace(microsecond=0)
    MemoryEvent.objects.bulk_create(
        MemoryEvent(memory_id=n, namespace=NS, event="created", actor="bench", created_at=at)
        for n in range(count)
    )
    ApiToken.objects.bulk_create(
        ApiToken(name=f"t{n}", prefix="sd_x", key_hash=f"{n:064d}", created_at=at)
        for n in range(count)
    )


def test_keyset_pages_walk_every_entry_once_both_ways(staff_client: Client) -> None:
    _many_at_one_instant(7)
    filters = ActivityFilter()
    seen, after, pages = [], None, []
    while True:
        page = activity_page(filters=filters, after=after, size=3)
        pages.append(page)
        seen += [e.position for e in page.entries]
        if page.older is None:
            break
        after = page.older
    assert len(seen) == len(set(seen)) == 14
    assert [p.key() for p in seen] == sorted((p.key() for p in seen), reverse=True)
    back = activity_page(filters=filters, before=pages[-1].newer, size=3)
    assert back.entries == pages[-2].entries
    assert back.newer == pages[-2].newer == pages[-2].entries[0].position
    assert back.older == pages[-2].older
    top = activity_page(filters=filters, before=pages[1].newer, size=3)
    assert top.entries == pages[0].entries
    assert top.newer is None


def test_the_pager_links_follow_in_html_and_htmx(staff_client: Client) -> None:
    _many_at_one_instant(40)  # 80 entries: two pages of 50
    first = staff_client.get("/activity/", {"kind": ""}).content.decode()
    assert first.count('class="activity-row') == 50
    assert 'class="newer"' not in first
    cursor = first.split('rel="next" href="?')[1].split('"')[0].replace("&amp;", "&")
    second = staff_client.get(f"/activity/?{cursor}", headers=HX)
    html = second.content.decode()
    assert second.status_code == 200
    assert html.count('class="activity-row') == 30
    assert 'class="older"' not in html
    assert 'class="newer"' in html


def test_a_position_is_checked_and_held_in_range() -> None:
    at = timezone.now()
    position = ActivityPosition(at.replace(microsecond=0), 3, 12)
    assert ActivityPosition.decode(position.encode()) == position
    far = ActivityPosition.decode(f"{10**18}-{len(STREAMS)}-{10**19 - 1}")
    assert far.at.year == 9999
    for raw in ("", "1-2", "a-1-2", "1-1-1-1", "1-1234-1", "1-1-s", "1-1-s_w", "1-1-s!"):
        with pytest.raises(Exception, match="page cursor"):
            ActivityPosition.decode(raw)


def test_a_thread_s_text_key_round_trips_in_a_position() -> None:
    """A thread's key is text (any id a client gave it): written in base64url."""
    at = timezone.now().replace(microsecond=0)
    for key in ("t-1", "plans: café/☕ 2026", "a" * 64):
        position = ActivityPosition(at, 5, key)
        assert ActivityPosition.decode(position.encode()) == position


def test_threads_started_at_the_same_time_page_by_their_ids() -> None:
    """Rows of equal time are ordered by their key, text for threads: a page boundary
    between two of them loses and repeats none, newest first and back."""
    ids = [create_thread(NS, actor="token:owner").pk for _ in range(3)]
    Thread.objects.filter(namespace=NS).update(created_at=timezone.now())
    newest_first = [f"thread {thread_id}" for thread_id in sorted(ids, reverse=True)]
    filters = ActivityFilter(kind="thread")
    first = activity_page(filters=filters, size=2)
    rest = activity_page(filters=filters, after=first.older, size=2)
    assert [e.summary for e in [*first.entries, *rest.entries]] == newest_first
    back = activity_page(filters=filters, before=rest.newer, size=2)
    assert [e.summary for e in back.entries] == newest_first[:2]


def test_exports_stream_the_filtered_log_and_defuse_formulas(
    owner: Actor, staff_client: Client
) -> None:
    _all_kinds(owner)
    set_fact(NS, "formula", 1, actor="=HYPERLINK(1)")
    answer = staff_client.get("/activity/activity.csv", {"kind": "fact"})
    assert answer.status_code == 200
    assert answer.streaming
    assert answer["Content-Type"].startswith("text/csv")
    assert "attachment" in answer["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(b"".join(answer.streaming_content).decode())))
    assert rows[0] == ["at", "kind", "action", "actor", "namespace", "summary", "url"]
    assert {row[1] for row in rows[1:]} == {"fact"}
    assert ["set", "'=HYPERLINK(1)", NS] in [row[2:5] for row in rows[1:]]
    assert all(not cell.startswith("=") for row in rows for cell in row)
    lines = _entries(staff_client, kind="fact")
    assert len(lines) == len(rows) - 1
    empty = staff_client.get("/activity/activity.csv", {"actor": "nobody"})
    assert b"".join(empty.streaming_content).decode().strip() == ",".join(rows[0])


def test_a_deleted_memory_still_shows_who_deleted_it(staff_client: Client) -> None:
    memory = memory_create(namespace=NS, kind="fact", content="Temporary.", actor="token:a")
    memory_delete(memory=memory, actor="staff:ada", reason="asked")
    assert not Memory.objects.filter(pk=memory.pk).exists()
    entries = _entries(staff_client, actor="staff:ada")
    assert [(e["action"], e["summary"]) for e in entries] == [
        ("deleted", f"memory {memory.pk}: asked")
    ]


# --- QA walk of issue 40, item 8: undone conflict decisions, a note as written -----------


@pytest.mark.parametrize("headers", [{}, HX])
def test_an_undone_conflict_decision_is_listed_with_its_undo(
    owner: Actor, staff_client: Client, headers: dict[str, str]
) -> None:
    conflict = flip(owner)
    reviewer = make_actor([NS], ["read", "approve"], name="reviewer")
    answer = reviewer.post(f"/api/conflicts/{conflict['id']}/resolve", {"decision": "replace"})
    assert answer.status_code == 200, answer.content
    conflict_undo(
        conflict=Conflict.objects.get(pk=conflict["id"]), actor="staff:ada", can_approve=True
    )
    page = staff_client.get("/activity/", {"kind": "conflict"}, headers=headers)
    assert page.status_code == 200
    html = page.content.decode()
    new, old = conflict["new"]["id"], conflict["old"]["id"]
    tag = f"conflict {conflict['id']}"
    # The decision (undone since: the conflict's row is open again) and what it changed...
    assert f"memory {new}: {tag} with memory {old}: replaced" in html
    assert f"memory {old}: {tag}: replaced" in html
    assert ">token:reviewer</a>" in html
    # ... and the undo, by whom.
    assert html.count(f"undo of {tag}") == 2  # the old memory live again, the new a candidate
    assert ">staff:ada</a>" in html
    assert html.count(">undone</span>") == 2
    memory_rows = _entries(staff_client, kind="memory")
    assert not any(tag in e["summary"] for e in memory_rows)  # listed once, as the conflict's


@pytest.mark.parametrize("headers", [{}, HX], ids=["plain", "htmx"])
def test_keep_both_of_two_live_memories_and_its_undo_are_listed(
    owner: Actor, staff_client: Client, headers: dict[str, str]
) -> None:
    """Two live memories kept side by side change no memory: the decision and its undo
    are each recorded, so the activity log and the memories' histories show them."""
    conflict = flip(owner)
    new = Memory.objects.get(pk=conflict["new"]["id"])
    Memory.objects.filter(pk=new.pk).update(status="active")  # a live pair
    reviewer = make_actor([NS], ["read", "approve"], name="reviewer")
    answer = reviewer.post(f"/api/conflicts/{conflict['id']}/resolve", {"decision": "keep_both"})
    assert answer.status_code == 200, answer.content
    conflict_undo(
        conflict=Conflict.objects.get(pk=conflict["id"]), actor="staff:ada", can_approve=True
    )
    new.refresh_from_db()
    assert new.status == "active"  # it was live before the decision: it stays so
    html = staff_client.get("/activity/", {"kind": "conflict"}, headers=headers).content.decode()
    tag = f"conflict {conflict['id']}"
    assert f"memory {new.pk}: {tag}: both kept" in html
    assert f"memory {new.pk}: undo of {tag}: keep both" in html
    assert ">token:reviewer</a>" in html
    assert ">staff:ada</a>" in html


def test_a_note_written_shows_its_status_then_not_now(staff_client: Client) -> None:
    decided = save_note(NS, "Deploys wait.", author="token:owner", status="pending", id="rb-2")
    set_note_status(decided.uid, "rejected", "staff:ada")
    save_note(NS, "Still waiting.", author="token:owner", status="pending", id="rb-3")
    notes = _entries(staff_client, kind="note")
    assert [(e["action"], e["summary"]) for e in notes] == [
        ("written", "note rb-3 (pending)"),  # never changed: what it was written with
        ("rejected", "note rb-2"),
        ("written", "note rb-2"),  # the status it was written with is recorded nowhere
    ]


# --- Item 9: the actor filter finds a kind of actor and a name under any kind --------------


def _by_many() -> None:
    for actor in ("staff:admin", "extraction:24", "extraction:25", "token:admin", "admin", "cli"):
        memory_create(namespace=NS, kind="fact", content=f"By {actor}.", actor=actor)
    set_fact(NS, "city", "Lyon", actor="staff:admin")
    save_note(NS, "A note.", author="staff:admin")


@pytest.mark.parametrize("headers", [{}, HX])
@pytest.mark.parametrize(
    ("actor", "found"),
    [
        ("admin", {"staff:admin", "token:admin", "admin"}),
        ("extraction", {"extraction:24", "extraction:25"}),
        ("staff", {"staff:admin"}),
        ("staff:admin", {"staff:admin"}),
        ("extraction:24", {"extraction:24"}),
        ("adm", set()),
        ("staff:", set()),
    ],
)
def test_the_actor_filter_finds_kinds_and_names(
    staff_client: Client, headers: dict[str, str], actor: str, found: set[str]
) -> None:
    _by_many()
    assert {e["actor"] for e in _entries(staff_client, actor=actor)} == found
    page = staff_client.get("/activity/", {"actor": actor}, headers=headers)
    assert page.status_code == 200
    shown = set(re.findall(r'class="actor" href="[^"]*">([^<]+)</a>', page.content.decode()))
    assert shown == found
    if actor == "admin":
        kinds = {e["kind"] for e in _entries(staff_client, actor=actor)}
        assert kinds == {"memory", "fact", "note"}


def test_an_actor_filter_pages_by_keyset_over_its_terms(staff_client: Client) -> None:
    _by_many()
    for n in range(5):
        memory_create(namespace=NS, kind="fact", content=f"More {n}.", actor=f"staff:u{n}")
    filters = ActivityFilter(actor="staff")
    seen, after = [], None
    while True:
        page = activity_page(filters=filters, after=after, size=2)
        seen += page.entries
        if page.older is None:
            break
        after = page.older
    everything = activity_page(filters=filters, size=100).entries
    assert seen == everything
    assert len(everything) == 8  # 6 memories by staff:*, the fact, the note
    assert {e.actor for e in everything} == {"staff:admin", *(f"staff:u{n}" for n in range(5))}


def test_a_thread_started_through_the_api_is_listed_with_who(
    owner: Actor, staff_client: Client
) -> None:
    made = owner.post("/api/threads", {"namespace": NS, "title": "Plans with Bob"})
    assert made.status_code == 201, made.content
    thread_id = made.json()["id"]
    assert Thread.objects.get(pk=thread_id).created_by == "token:owner"
    create_thread(NS, "Another")  # started by the service itself: no one recorded
    rows = _entries(staff_client, kind="thread")
    assert [(e["action"], e["actor"]) for e in rows] == [
        ("started", ""),
        ("started", "token:owner"),
    ]
    assert rows[1]["summary"] == f"thread {thread_id}"  # never its title
    assert rows[1]["url"] == f"/threads/{thread_id}/"
    html = staff_client.get("/activity/", {"actor": "owner", "kind": "thread"}).content.decode()
    assert f'href="/threads/{thread_id}/"' in html
    assert "Plans with Bob" not in html


def test_activity_cells_name_their_column_for_the_phone_cards(
    owner: Actor, staff_client: Client
) -> None:
    _all_kinds(owner)
    html = staff_client.get("/activity/").content.decode()
    row = html[html.index('<tr class="activity-row') :]
    row = row[: row.index("</tr>")]
    labels = re.findall(r'<td data-label="([^"]+)"', row)
    assert labels == ["When", "Who", "Kind", "What", "Namespace", "Object"]


def test_the_conflict_rows_are_read_by_their_partial_index() -> None:
    """SQLite uses memoryevent_conflict_idx only for the same LIKE constants (never a bound
    parameter): the query's SQL and the index's condition must select the same rows."""
    for reason in ("conflict 4: replaced", "undo of conflict 4: replace", "a conflict", ""):
        MemoryEvent.objects.create(memory_id=1, namespace=NS, event="edited", reason=reason)
    by_sql = MemoryEvent.objects.filter(CONFLICT_ROWS).values_list("reason", flat=True)
    by_index = MemoryEvent.objects.filter(CONFLICT_HISTORY).values_list("reason", flat=True)
    assert (
        sorted(by_sql)
        == sorted(by_index)
        == [
            "conflict 4: replaced",
            "undo of conflict 4: replace",
        ]
    )


@pytest.mark.sqlite_only  # PostgreSQL's planner weighs its indexes by their statistics
def test_sqlite_reads_the_conflict_rows_by_their_partial_index() -> None:
    conflicts = next(s for s in STREAMS if s.kind == "conflict" and s.model is MemoryEvent)
    for filters in (ActivityFilter(), ActivityFilter(namespace=NS, actor="staff")):
        rows = conflicts.rows().filter(filters.q(conflicts) & filters.actors(conflicts, {})[0])
        sql, params = rows.order_by("-created_at", "-id")[:51].query.sql_with_params()
        with connection.cursor() as cursor:  # bound as a page's query is
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            plan = " ".join(str(row[-1]) for row in cursor.fetchall())
        assert "memoryevent_conflict_idx" in plan, plan


@pytest.mark.parametrize("dense", [1, 2_000])
def test_a_kind_of_actor_is_read_by_either_index_with_the_same_rows(
    monkeypatch: pytest.MonkeyPatch, dense: int
) -> None:
    """Few rows of the kind: read by the actor index and sorted; many: by the time index
    (``+actor`` in the range, which no index serves). Either way the same rows, in order."""
    _by_many()
    memory_create(namespace=NS, kind="fact", content="Shouted.", actor="STAFF:loud")
    monkeypatch.setattr("spaceduck.ops.activity._DENSE", dense)
    entries = activity_page(filters=ActivityFilter(actor="staff"), size=100).entries
    assert [e.actor for e in entries] == ["staff:admin"] * 3  # a note, a fact, a memory
    assert [e.kind for e in entries] == ["note", "fact", "memory"]


@pytest.mark.sqlite_only  # PostgreSQL's planner weighs its indexes by their statistics
@pytest.mark.parametrize("dense", [1, 2_000])
def test_sqlite_reads_a_kind_of_actor_by_the_index_its_density_picks(
    monkeypatch: pytest.MonkeyPatch, dense: int
) -> None:
    _by_many()
    monkeypatch.setattr("spaceduck.ops.activity._DENSE", dense)
    memory = next(s for s in STREAMS if s.kind == "memory")
    [*_, kind] = ActivityFilter(actor="staff").actors(memory, {})
    sql, params = (
        MemoryEvent.objects.filter(kind).order_by("-created_at", "-id")[:51].query.sql_with_params()
    )
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    index = "memoryevent_created_idx" if dense == 1 else "memoryevent_actor_created_idx"
    assert index in plan, plan
