"""The candidate review queue: candidates with where they came from and why they wait;
approve or reject one by one or in bulk (one POST), the navigation count follows."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from memories.models import Memory, MemoryEvent
from memories.write.ingest import message_ingest
from memories.write.services import create_thread, memory_create

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def candidate(content: str, namespace: str = "user:alice") -> Memory:
    memory = memory_create(namespace=namespace, kind="fact", content=content, actor="t")
    Memory.objects.filter(pk=memory.pk).update(status="candidate", confidence=0.6)
    memory.refresh_from_db()
    return memory


def statuses(*memories: Memory) -> list[str]:
    return [Memory.objects.get(pk=m.pk).status for m in memories]


def test_the_queue_lists_only_candidates_with_their_source_and_reason(
    staff_client: Client,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    memory_create(namespace="user:alice", kind="fact", content="Alice likes tea.", actor="t")
    thread = create_thread("user:alice")
    with django_capture_on_commit_callbacks(execute=True):
        ingested = message_ingest(thread.pk, "user", "I think I might move to Oslo next year.")
    learnt = Memory.objects.filter(source_message=ingested.message).first()
    assert learnt is not None
    Memory.objects.filter(pk=learnt.pk).update(status="candidate", confidence=0.6)
    waiting = candidate("Alice may be vegetarian.")
    html = staff_client.get("/review/memories/").content.decode()
    assert "Alice likes tea." not in html
    assert "Alice may be vegetarian." in html
    assert "I think I might move to Oslo next year." in html  # the message it came from
    assert "low confidence (0.60 &lt; 0.70)" in html  # why it waits
    assert "offline rules" in html  # the extraction's record of it: what proposed it
    assert f'value="{waiting.pk}"' in html


def test_the_navigation_counts_candidates(staff_client: Client) -> None:
    candidate("Alice may be vegetarian.")
    candidate("Alice may like jazz.")
    html = staff_client.get("/").content.decode()
    assert 'Candidates <span class="count">2</span>' in html


def test_bulk_approve_changes_every_ticked_candidate_in_one_post(staff_client: Client) -> None:
    a, b, c = (candidate(f"Maybe fact {i}.") for i in range(3))
    response = staff_client.post(
        "/review/memories/", {"decision": "approve", "ids": [a.pk, c.pk]}, headers=HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.strip().startswith('<section id="queue" data-queue="candidates" data-shortcuts>')
    assert statuses(a, b, c) == ["active", "candidate", "active"]
    assert "2 approved." in html
    assert 'id="review-nav" href="/review/memories/" hx-swap-oob="true"' in html
    assert '<span class="count">1</span>' in html  # the count in the navigation follows
    events = MemoryEvent.objects.filter(memory_id=a.pk, event="promoted")
    assert [e.actor for e in events] == ["staff:staff"]


def test_bulk_reject_archives_and_without_htmx_redirects(staff_client: Client) -> None:
    a, b = candidate("Maybe A."), candidate("Maybe B.")
    response = staff_client.post("/review/memories/", {"decision": "reject", "ids": [a.pk, b.pk]})
    assert response.status_code == 302
    assert response["Location"].startswith("/review/memories/?undo=")  # the page offers Undo
    assert statuses(a, b) == ["archived", "archived"]
    assert "2 rejected." in staff_client.get("/review/memories/").content.decode()


def test_one_row_button_decides_that_row_only(staff_client: Client) -> None:
    a, b = candidate("Maybe A."), candidate("Maybe B.")
    staff_client.post("/review/memories/", {"row": f"approve:{b.pk}", "ids": [a.pk]})
    assert statuses(a, b) == ["candidate", "active"]


def test_a_memory_that_is_no_longer_a_candidate_is_skipped_with_a_reason(
    staff_client: Client,
) -> None:
    a, b = candidate("Maybe A."), candidate("Maybe B.")
    Memory.objects.filter(pk=b.pk).update(status="archived")
    html = staff_client.post(
        "/review/memories/", {"decision": "approve", "ids": [a.pk, b.pk, 999999]}, headers=HTMX
    ).content.decode()
    assert statuses(a, b) == ["active", "archived"]
    assert f"Memory {b.pk} left as it was: it is archived, not a candidate." in html
    assert "Memory 999999 left as it was: it does not exist." in html


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"decision": "delete", "ids": ["1"]}, "decision must be approve or reject"),
        ({"decision": "approve"}, "choose at least one memory"),
        ({"decision": "approve", "ids": ["one"]}, "choose at least one memory"),
        ({"row": "approve:x"}, "choose at least one memory"),
    ],
)
def test_bad_decisions_are_400_with_a_message(
    staff_client: Client, data: dict[str, object], says: str
) -> None:
    response = staff_client.post("/review/memories/", data)
    assert response.status_code == 400
    assert says in response.content.decode()


def test_the_queue_filters_by_namespace_and_refuses_a_bad_one(staff_client: Client) -> None:
    candidate("Alice maybe.")
    candidate("Bob maybe.", namespace="user:bob")
    html = staff_client.get(
        "/review/memories/", {"namespace": "user:bob"}, headers=HTMX
    ).content.decode()
    assert "Bob maybe." in html
    assert "Alice maybe." not in html
    bad = staff_client.get("/review/memories/", {"namespace": "nobody"})
    assert bad.status_code == 400
    assert "invalid namespace" in bad.content.decode()


def test_the_queue_is_staff_only_and_csrf_protected(
    client: Client,
    django_user_model,  # type: ignore[no-untyped-def]
) -> None:
    a = candidate("Maybe A.")
    assert client.get("/review/memories/").status_code == 302
    assert (
        client.post("/review/memories/", {"decision": "approve", "ids": [a.pk]}).status_code == 302
    )
    staff = django_user_model.objects.create_user("eve", password="pw-12345678", is_staff=True)
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(staff)
    response = checked.post("/review/memories/", {"decision": "approve", "ids": [a.pk]})
    assert response.status_code == 403
    assert statuses(a) == ["candidate"]


def test_the_queue_answers_get_and_post_only(staff_client: Client) -> None:
    assert staff_client.put("/review/memories/").status_code == 405


def test_the_navigation_count_stops_counting_at_the_cap(staff_client: Client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from memories.store import selectors

    monkeypatch.setattr(selectors, "COUNT_CAP", 2)
    monkeypatch.setattr(selectors.memory_review_count, "__kwdefaults__", {"cap": 2})
    for i in range(3):
        candidate(f"Maybe {i}.")
    html = staff_client.get("/").content.decode()
    assert 'Candidates <span class="count">2+</span>' in html


def test_a_bulk_reject_can_be_undone_from_where_it_was_made(staff_client) -> None:  # type: ignore[no-untyped-def]
    import re

    from memories.models import Memory, MemoryEvent
    from memories.write.services import memory_create

    ids = [
        memory_create(
            namespace="user:alice", kind="fact", content=f"Fact {n}.", actor="t", status="candidate"
        ).pk
        for n in range(2)
    ]
    for headers in ({"HX-Request": "true"}, {}):
        answer = staff_client.post(
            "/review/memories/", {"decision": "reject", "ids": ids}, headers=headers, follow=True
        )
        html = answer.content.decode()
        statuses = Memory.objects.filter(pk__in=ids).values_list("status", flat=True)
        assert set(statuses) == {"archived"}
        assert "Just 2 rejected." in html
        token = re.search(r'name="undo" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]
        undone = staff_client.post("/review/memories/", {"undo": token}, headers=headers)
        assert undone.status_code in (200, 302)
        assert set(Memory.objects.filter(pk__in=ids).values_list("status", flat=True)) == {
            "candidate"
        }
    # An undo is recorded as one, not as an edit (which would read as a person's word).
    reasons = MemoryEvent.objects.filter(memory_id=ids[0], event="undone").values_list(
        "reason", flat=True
    )
    assert list(reasons) == ["undo of a bulk reject", "undo of a bulk reject"]
    assert not MemoryEvent.objects.filter(memory_id=ids[0], event="edited").exists()
    # The same undo twice changes nothing; a forged one is refused.
    again = staff_client.post("/review/memories/", {"undo": token}, follow=True)
    assert "left as it is: it is candidate now" in again.content.decode()
    forged = staff_client.post("/review/memories/", {"undo": token[:-2] + "xx"})
    assert forged.status_code == 400


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["plain", "htmx"])
def test_an_undone_decision_puts_the_item_back_in_its_place(staff_client, headers) -> None:  # type: ignore[no-untyped-def]
    ids = [
        memory_create(
            namespace="user:alice", kind="fact", content=f"Fact {n}.", actor="t", status="candidate"
        ).pk
        for n in range(3)
    ]

    def shown() -> list[int]:
        html = staff_client.get("/review/memories/").content.decode()
        return [int(i) for i in re.findall(r'<tr id="candidate-(\d+)"', html)]

    assert shown() == ids[::-1]  # newest learnt first
    decided = staff_client.post("/review/memories/", {"row": f"approve:{ids[1]}"}, headers=headers)
    html = (
        decided.content.decode()
        if headers
        else staff_client.get(decided["Location"]).content.decode()
    )
    token = re.search(r'name="undo" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]
    staff_client.post("/review/memories/", {"undo": token}, headers=headers)
    assert Memory.objects.get(pk=ids[1]).status == "candidate"
    assert shown() == ids[::-1]  # not first: where it was
