"""History that reads (issue 40 item 9): an edit is a per-field diff with *Restore this
version*; an undo is recorded as ``undone``; conflict decisions and restores can be undone;
JSON is shown as JSON; an erase record says what went in plain words.

Every action is tried as a plain form (POST -> redirect) and with htmx (the fragment, or a
4xx with the message), through the dashboard as a person uses it.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client

from memories.models import Conflict, Memory, MemoryEvent
from memories.store import keyword_index
from memories.write import edits, lifecycle
from memories.write.services import memory_create, memory_history_record, set_fact
from spaceduck.ops.erasure import describe, erase_namespace

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
NS = "user:alice"


def make(content: str, **fields: object) -> Memory:
    memory = memory_create(namespace=NS, kind="fact", content=content, actor="token:agent")
    if fields:
        Memory.objects.filter(pk=memory.pk).update(**fields)
        memory.refresh_from_db()
    return memory


def page(client: Client, memory: Memory, **headers: str) -> str:
    response = client.get(f"/memories/{memory.pk}/", headers=headers)
    assert response.status_code == 200
    return response.content.decode()


def events(memory: Memory) -> list[tuple[str, str]]:
    rows = MemoryEvent.objects.filter(memory_id=memory.pk).order_by("id")
    return [(e.event, e.reason) for e in rows]


# --- An edit as a diff ---------------------------------------------------------------------


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_an_edit_is_a_per_field_diff_with_the_changed_words_marked(
    staff_client: Client, headers: dict[str, str]
) -> None:
    memory = make("Alice plays the oboe on Sundays.")
    edits.memory_edit(
        memory=memory,
        changes={
            "content": "Alice plays the flute on Sundays.",
            "importance": 0.9,
            "tags": ["music", "weekly"],
        },
        actor="staff:bob",
    )
    html = page(staff_client, memory, **headers)
    # A list: the items it gained are marked, not the whole list.
    assert "[<ins>&quot;music&quot;, &quot;weekly&quot;</ins>]" in html
    assert '<table class="diff">' in html
    assert "Alice plays the <del>oboe</del> on Sundays." in html
    assert "Alice plays the <ins>flute</ins> on Sundays." in html
    assert "<del>0.5</del>" in html  # a number is marked whole
    assert "<ins>0.9</ins>" in html
    assert "{&#x27;before&#x27;" not in html
    assert "{'before'" not in html
    assert "Restore this version" in html


def test_an_edit_recorded_before_edits_kept_their_after_is_diffed_against_the_next_value(
    staff_client: Client,
) -> None:
    memory = make("Alice lives in Lisbon.")
    # As edits were recorded before: ``before`` alone, then the memory changed.
    memory_history_record(
        memory=memory,
        event="edited",
        actor="staff:bob",
        data={"before": {"content": "Alice lives in Porto."}},
    )
    html = page(staff_client, memory)
    assert "Alice lives in <del>Porto</del>." in html
    assert "Alice lives in <ins>Lisbon</ins>." in html


def test_the_diff_escapes_what_the_memory_says(staff_client: Client) -> None:
    memory = make("Alice likes <b>tea</b>.")
    edits.memory_edit(
        memory=memory, changes={"content": "Alice likes <i>coffee</i>."}, actor="staff:bob"
    )
    html = page(staff_client, memory)
    assert "<b>tea</b>" not in html
    assert "<i>coffee</i>" not in html
    assert "&lt;<del>b</del>&gt;<del>tea</del>&lt;/<del>b</del>&gt;" in html
    assert "&lt;<ins>i</ins>&gt;<ins>coffee</ins>&lt;/<ins>i</ins>&gt;" in html


def test_other_data_is_shown_as_json(staff_client: Client) -> None:
    memory = make("Alice plays the oboe.")
    memory_history_record(
        memory=memory, event="reindexed", actor="worker", data={"vectors": [1, 2], "ok": True}
    )
    html = page(staff_client, memory)
    assert "&quot;vectors&quot;: [\n    1,\n    2\n  ]" in html
    assert "&quot;ok&quot;: true" in html
    assert "True" not in html.split('<ol class="timeline history">')[1]


# --- Restore this version ----------------------------------------------------------------


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_restore_this_version_puts_the_fields_back_as_a_new_edit(
    staff_client: Client, headers: dict[str, str]
) -> None:
    memory = make("Alice plays the oboe.", title="Music")
    edits.memory_edit(
        memory=memory,
        changes={"content": "Alice plays the zither.", "title": "Instruments"},
        actor="staff:bob",
    )
    edit = MemoryEvent.objects.get(memory_id=memory.pk, event="edited")
    response = staff_client.post(
        f"/memories/{memory.pk}/restore-version/", {"event": edit.pk}, headers=headers
    )
    if headers:
        assert response.status_code == 200
        html = response.content.decode()
        assert 'id="memory-page"' in html
        assert "<html" not in html
        assert "Restored: content, title." in html
    else:
        assert response.status_code == 302
        assert response["Location"] == f"/memories/{memory.pk}/"
    memory.refresh_from_db()
    assert (memory.content, memory.title) == ("Alice plays the oboe.", "Music")
    # Through memory_edit, as PATCH: re-indexed, and recorded as a new edit by the person.
    assert keyword_index.matching_ids(NS, "oboe") == [memory.pk]
    assert keyword_index.matching_ids(NS, "zither") == []
    restored = MemoryEvent.objects.filter(memory_id=memory.pk, event="edited").last()
    assert restored is not None
    assert restored.pk != edit.pk
    assert restored.actor == "staff:staff"
    assert restored.reason.startswith("restored the version before the edit of ")
    assert restored.data["before"]["content"] == "Alice plays the zither."
    assert restored.data["after"]["content"] == "Alice plays the oboe."


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_restore_refusals_say_why_and_change_nothing(
    staff_client: Client, headers: dict[str, str]
) -> None:
    memory = make("Alice plays the oboe.")
    other = make("Bob plays the drums.")
    edits.memory_edit(memory=other, changes={"content": "Bob plays jazz."}, actor="staff:x")
    foreign = MemoryEvent.objects.get(memory_id=other.pk, event="edited")
    created = MemoryEvent.objects.get(memory_id=memory.pk, event="created")
    url = f"/memories/{memory.pk}/restore-version/"
    for data, status, message in (
        ({"event": "x"}, 400, "choose the history entry to restore"),
        ({}, 400, "choose the history entry to restore"),
        ({"event": foreign.pk}, 422, f"is not an edit of memory {memory.pk}"),
        ({"event": created.pk}, 422, f"is not an edit of memory {memory.pk}"),
    ):
        response = staff_client.post(url, data, headers=headers)
        assert response.status_code == status, data
        assert message in response.content.decode()
    edits.memory_edit(memory=memory, changes={"content": "Alice sings."}, actor="staff:x")
    edits.memory_edit(memory=memory, changes={"content": "Alice sings."}, actor="staff:x")
    same = MemoryEvent.objects.filter(memory_id=memory.pk, event="edited").last()
    response = staff_client.post(url, {"event": same.pk}, headers=headers)  # type: ignore[union-attr]
    assert response.status_code == 422
    assert "holds this version already" in response.content.decode()
    assert staff_client.get(url).status_code == 405
    assert staff_client.post("/memories/999999/restore-version/", {"event": 1}).status_code == 404
    memory.refresh_from_db()
    assert memory.content == "Alice sings."


# --- Undo of a restore ---------------------------------------------------------------------


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_a_restore_of_an_archived_memory_can_be_undone(
    staff_client: Client, headers: dict[str, str]
) -> None:
    memory = make("Alice plays the oboe.")
    lifecycle.memory_archive(memory=memory, actor="staff:x")
    assert "Undo restore" not in page(staff_client, memory)
    staff_client.post(f"/memories/{memory.pk}/status/", {"status": "active"})
    assert "Undo restore" in page(staff_client, memory)
    response = staff_client.post(
        f"/memories/{memory.pk}/undo-restore/", headers=headers, follow=not headers
    )
    assert response.status_code == 200
    assert f"Restore undone: memory {memory.pk} is archived." in response.content.decode()
    memory.refresh_from_db()
    assert memory.status == "archived"
    assert events(memory)[-1] == ("undone", "undo of a restore")
    # Nothing left to undo: a second one is refused with why.
    again = staff_client.post(f"/memories/{memory.pk}/undo-restore/", headers=headers)
    assert again.status_code == 422
    assert "has no restore to undo" in again.content.decode()


def test_a_reversed_supersession_can_be_undone(staff_client: Client) -> None:
    new = make("Alice lives in Lille.")
    old = make("Alice lives in Lyon.", status="superseded", superseded_by=new)
    staff_client.post(f"/memories/{old.pk}/reverse/")
    old.refresh_from_db(), new.refresh_from_db()
    assert (old.status, new.status) == ("active", "archived")
    response = staff_client.post(f"/memories/{old.pk}/undo-restore/", headers=HTMX)
    assert response.status_code == 200
    assert f"Restore undone: memory {old.pk} is superseded." in response.content.decode()
    old.refresh_from_db(), new.refresh_from_db()
    assert (old.status, old.superseded_by_id, new.status) == ("superseded", new.pk, "active")
    assert events(old)[-1] == ("undone", "undo of a reversed supersession")
    assert events(new)[-1][0] == "undone"


# --- Undo of a conflict decision ---------------------------------------------------------


def conflict() -> Conflict:
    claim = {"claim_subject": "user", "claim_attribute": "location", "claim_polarity": "affirmed"}
    old = make("The user lives in Lyon.", claim_value="lyon", **claim)
    new = make("The user lives in Nantes.", claim_value="nantes", status="candidate", **claim)
    return Conflict.objects.create(namespace=NS, old=old, new=new, reason="unsure")


def decide(client: Client, pair: Conflict, decision: str, content: str = "") -> None:
    data = {"row": f"{decision}:{pair.pk}", f"content-{pair.pk}": content}
    assert client.post("/review/conflicts/", data, headers=HTMX).status_code == 200


UNDONE_AS = {"replace": "replace", "keep_both": "keep both", "merge": "edit into one"}


@pytest.mark.parametrize("decision", ["replace", "keep_both", "merge"])
def test_each_conflict_decision_can_be_undone_from_the_inbox(
    staff_client: Client, decision: str
) -> None:
    pair = conflict()
    decided = staff_client.post(
        "/review/conflicts/",
        {"row": f"{decision}:{pair.pk}", f"content-{pair.pk}": "The user lives in Nantes now."},
        headers=HTMX,
    )
    # The inbox offers the undo of what was just decided.
    assert f'action="/review/conflicts/{pair.pk}/undo/"' in decided.content.decode()
    response = staff_client.post(f"/review/conflicts/{pair.pk}/undo/", headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="inbox"' in html
    assert "decision undone" in html
    old, new = Memory.objects.get(pk=pair.old_id), Memory.objects.get(pk=pair.new_id)
    assert (old.status, old.superseded_by_id) == ("active", None)
    assert (new.status, new.content) == ("candidate", "The user lives in Nantes.")
    pair.refresh_from_db()
    assert (pair.status, pair.resolution, pair.resolved_by) == ("open", "", "")
    # Every undo says which decision it undid in the same lowercase words.
    undo = f"undo of conflict {pair.pk}: {UNDONE_AS[decision]}"
    assert events(new)[-1] == ("undone", undo)
    assert not any(e == "edited" and r.startswith("undo") for e, r in events(new))
    if decision != "keep_both":
        assert events(old)[-1] == ("undone", undo)
    # It waits in the inbox again, and can be decided again.
    assert f'id="conflict-{pair.pk}"' in staff_client.get("/review/conflicts/").content.decode()
    decide(staff_client, pair, "replace")
    old.refresh_from_db()
    assert old.status == "superseded"


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_an_undone_merge_puts_the_title_back_too(
    staff_client: Client, headers: dict[str, str]
) -> None:
    pair = conflict()
    Memory.objects.filter(pk=pair.new_id).update(title="Nantes")
    data = {
        "row": f"merge:{pair.pk}",
        f"content-{pair.pk}": "The user lives in Nantes now.",
        f"title-{pair.pk}": "Moved to Nantes",
    }
    staff_client.post("/review/conflicts/", data, headers=headers)
    assert Memory.objects.get(pk=pair.new_id).title == "Moved to Nantes"
    staff_client.post(f"/review/conflicts/{pair.pk}/undo/", headers=headers)
    new = Memory.objects.get(pk=pair.new_id)
    assert (new.status, new.title, new.content) == (
        "candidate",
        "Nantes",
        "The user lives in Nantes.",
    )
    # The history's undone entry lists every field it put back.
    undone = MemoryEvent.objects.filter(memory_id=new.pk, event="undone").order_by("id").first()
    assert undone is not None
    assert sorted(undone.data["before"]) == ["content", "title"]
    entry = page(staff_client, new).split(f'id="history-{undone.pk}"')[1].split("</li>")[0]
    assert '<th scope="row">title</th>' in entry
    assert '<th scope="row">content</th>' in entry


def test_a_decision_is_undone_from_a_memorys_page_without_javascript(
    staff_client: Client,
) -> None:
    pair = conflict()
    decide(staff_client, pair, "replace")
    html = page(staff_client, pair.old)
    assert "Undo this decision" in html
    response = staff_client.post(f"/review/conflicts/{pair.pk}/undo/", {"memory": pair.old_id})
    assert response.status_code == 302
    assert response["Location"] == f"/memories/{pair.old_id}/"
    assert Memory.objects.get(pk=pair.old_id).status == "active"
    followed = staff_client.get(response["Location"]).content.decode()
    assert "decision undone" in followed


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_a_decision_whose_memories_changed_since_stays(
    staff_client: Client, headers: dict[str, str]
) -> None:
    pair = conflict()
    decide(staff_client, pair, "merge", "The user lives in Nantes now.")
    edits.memory_edit(
        memory=Memory.objects.get(pk=pair.new_id),
        changes={"content": "The user lives in Nantes, near the river."},
        actor="staff:x",
    )
    response = staff_client.post(
        f"/review/conflicts/{pair.pk}/undo/", {"memory": pair.new_id}, headers=headers
    )
    if headers:
        assert response.status_code == 409
        assert "was edited after the merge" in response.content.decode()
    else:
        followed = staff_client.get(response["Location"]).content.decode()
        assert "was edited after the merge" in followed
    assert Memory.objects.get(pk=pair.old_id).status == "superseded"
    pair.refresh_from_db()
    assert pair.status == "resolved"
    # An open conflict has nothing to undo; a missing one is a 404 with the message.
    fresh = conflict()
    refused = staff_client.post(f"/review/conflicts/{fresh.pk}/undo/", headers=headers)
    assert refused.status_code == (422 if headers else 302)
    missing = staff_client.post("/review/conflicts/999999/undo/", headers=HTMX)
    assert missing.status_code == 404
    assert "does not exist" in missing.content.decode()
    assert staff_client.get(f"/review/conflicts/{pair.pk}/undo/").status_code == 405


def test_an_undo_of_a_candidate_decision_is_recorded_as_undone() -> None:
    memory = make("Alice plays the oboe.", status="candidate")
    outcome = lifecycle.memories_decide(
        memory_ids=[memory.pk], decision="approve", actor="staff:x", can_approve=True
    )
    lifecycle.memories_undo(statuses=outcome.statuses, actor="staff:x", what="approve")
    assert events(memory)[-1] == ("undone", "undo of a bulk approve")


# --- Plain words and JSON on the people pages ---------------------------------------------


def test_an_erase_record_says_what_went_in_plain_words(staff_client: Client) -> None:
    memory = make("Alice plays the oboe.")
    for n in range(5):
        memory_history_record(memory=memory, event="seen", actor="t", reason=str(n))
    set_fact(NS, "theme", {"colour": "dark"})
    erasure = erase_namespace(NS, by="staff:staff")
    assert describe(erasure.counts) == "1 memory, 6 history entries, 1 fact, 1 fact change"
    for url in ("/people/", f"/people/?namespace={NS}"):
        html = staff_client.get(url).content.decode()
        assert "6 history entries, 1 fact, 1 fact change" in html, url
        assert "memory_history" not in html
        assert "1 facts" not in html


def test_a_persons_facts_are_shown_as_json(staff_client: Client) -> None:
    set_fact(NS, "prefs", {"sound": False, "theme": "dark"})  # in jsonb's order too
    html = staff_client.get(f"/people/?namespace={NS}").content.decode()
    assert (
        '<pre class="json">{\n  &quot;sound&quot;: false,\n  &quot;theme&quot;: &quot;dark&quot;'
        in html
    )
    assert "&#x27;theme&#x27;" not in html
    assert "False" not in html


def test_the_new_actions_need_staff_and_a_csrf_token(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    memory = make("Alice plays the oboe.")
    edits.memory_edit(memory=memory, changes={"content": "Alice sings."}, actor="staff:x")
    edit = MemoryEvent.objects.get(memory_id=memory.pk, event="edited")
    pair = conflict()
    set_fact(NS, "theme", "dark")
    posts = [
        (f"/memories/{memory.pk}/restore-version/", {"event": edit.pk}),
        (f"/memories/{memory.pk}/undo-restore/", {}),
        (f"/review/conflicts/{pair.pk}/undo/", {}),
        ("/facts/edit/", {"namespace": NS, "key": "theme", "value": '"light"'}),
    ]
    for url, data in posts:
        response = client.post(url, data)
        assert response.status_code == 302, url
        assert "/login/" in response["Location"]
    staff = django_user_model.objects.create_user("eve", password="pw-12345678", is_staff=True)
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(staff)
    for url, data in posts:
        assert checked.post(url, data).status_code == 403, url
    memory.refresh_from_db()
    assert memory.content == "Alice sings."


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_status_moves_read_as_rows_not_data(staff_client: Client, headers: dict[str, str]) -> None:
    """An archive keeps only the status it left, a restore nothing, a reversed supersession
    the memory that had taken over: each reads as a status row (and who had taken over),
    not as raw data."""
    memory = make("Alice plays the oboe.")
    staff_client.post(f"/memories/{memory.pk}/status/", {"status": "archived"})
    staff_client.post(f"/memories/{memory.pk}/status/", {"status": "active"})
    new = make("Alice lives in Lille.")
    old = make("Alice lives in Lyon.", status="superseded", superseded_by=new)
    staff_client.post(f"/memories/{old.pk}/reverse/")

    assert moves(page(staff_client, memory, **headers)) == {
        "archived": ["status", "active", "archived"],
        "restored": ["status", "archived", "active"],
    }
    assert moves(page(staff_client, old, **headers))["restored"] == [
        "status",
        "superseded",
        "active",
        "was",
        "superseded",
        "by",
        "—",
        f"#{new.pk}",
    ]


def moves(html: str) -> dict[str, list[str]]:
    """Each history entry's table, as words, by event; no entry shows raw data."""
    history = html.split('class="timeline history"')[1].split("</ol>")[0]
    assert "<summary>data</summary>" not in history
    shown = {}
    for entry in history.split('<li class="event event-')[1:]:
        event, _, rest = entry.partition('"')
        body = rest.split("<tbody>")[1].split("</tbody>")[0] if "<tbody>" in rest else ""
        shown[event] = re.sub(r"<[^>]+>", " ", body).split()
    return {event: words for event, words in shown.items() if words}
