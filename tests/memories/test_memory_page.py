"""A page per memory: everything about it, its history, and the actions a person takes there.

Every action goes through the same services as the API (lifecycle.*, services.memory_delete),
works as a plain form (POST -> redirect) and, with htmx, answers with the page fragment.
"""

from __future__ import annotations

import pytest
from django.test import Client

from memories.models import Extraction, Memory, MemoryEvent
from memories.recall.hybrid import RecallQuery, recall
from memories.store import keyword_index, vector_index
from memories.write.ingest import message_ingest
from memories.write.services import content_hash, create_thread, memory_create
from spaceduck.core.providers import get_embedder

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
NS = "user:alice"


def make(content: str = "Alice plays the oboe.", **fields: object) -> Memory:
    memory = memory_create(namespace=NS, kind="fact", content=content, actor="t")
    if fields:
        Memory.objects.filter(pk=memory.pk).update(**fields)
        memory.refresh_from_db()
    return memory


def edit_data(memory: Memory, **changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "title": memory.title,
        "content": memory.content,
        "summary": memory.summary,
        "tags": ", ".join(memory.tags),
        "importance": memory.importance,
        "confidence": memory.confidence,
        "scope": memory.scope,
        "scope_id": memory.scope_id,
    }
    return data | changes


def nearest(text: str) -> tuple[int, float]:
    """The memory whose vector is nearest to ``text``'s embedding, and the cosine."""
    return vector_index.knn(NS, get_embedder().embed([text])[0], 1)[0]


def found(text: str) -> list[int]:
    return [hit.memory.pk for hit in recall(RecallQuery(namespace=NS, text=text))]


def test_the_page_shows_every_field_and_where_the_memory_came_from(
    staff_client: Client,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    thread = create_thread(NS, "Music chat")
    with django_capture_on_commit_callbacks(execute=True):  # the queued extraction runs
        ingested = message_ingest(thread.pk, "user", "My name is Alice and I live in Lisbon.")
    extraction = Extraction.objects.get(pk=ingested.extraction.pk)  # type: ignore[union-attr]
    assert extraction.status == "done"
    memory = Memory.objects.filter(source_message=ingested.message).first()
    assert memory is not None
    html = staff_client.get(f"/memories/{memory.pk}/").content.decode()
    for text in (
        memory.content,
        "Music chat",
        f"/threads/{thread.pk}/",  # the thread page, not the raw admin row
        "My name is Alice and I live in Lisbon.",
        f"/extractions/{extraction.pk}/",  # the extraction record page
        "decision <strong>stored</strong>",
        "User Message",
        "Importance",
        "Confidence",
        "Last seen",
        "Expires",
        "Occurred",
        "Learnt from",
    ):
        assert text in html, text
    assert "<strong>created</strong>" in html  # the history timeline


def test_a_missing_memory_is_a_404_and_a_deleted_one_shows_its_tombstone(
    staff_client: Client,
) -> None:
    assert staff_client.get("/memories/999999/").status_code == 404
    memory = make("Alice once lived in Porto.")
    staff_client.post(f"/memories/{memory.pk}/delete/")
    gone = staff_client.get(f"/memories/{memory.pk}/")
    assert gone.status_code == 404
    html = gone.content.decode()
    assert "It was deleted" in html
    assert "staff:staff" in html
    assert "Alice once lived in Porto." not in html  # a tombstone, not a copy (issue 37)


def test_editing_re_embeds_re_indexes_and_records_history(staff_client: Client) -> None:
    memory = make("Alice plays the oboe.")
    response = staff_client.post(
        f"/memories/{memory.pk}/edit/",
        edit_data(memory, content="Alice plays the bassoon.", tags="music, woodwind"),
    )
    assert (response.status_code, response["Location"]) == (302, f"/memories/{memory.pk}/")
    memory.refresh_from_db()
    assert memory.content == "Alice plays the bassoon."
    assert memory.tags == ["music", "woodwind"]
    assert memory.content_hash == content_hash("Alice plays the bassoon.")
    assert nearest("Alice plays the bassoon.") == (memory.pk, pytest.approx(1.0, abs=1e-5))
    assert keyword_index.matching_ids(NS, "bassoon") == [memory.pk]
    assert keyword_index.matching_ids(NS, "oboe") == []
    assert found("bassoon") == [memory.pk]
    event = MemoryEvent.objects.filter(memory_id=memory.pk).last()
    assert event is not None
    assert (event.event, event.actor) == ("edited", "staff:staff")
    assert event.data["before"]["content"] == "Alice plays the oboe."
    page = staff_client.get(f"/memories/{memory.pk}/").content.decode()
    assert "Saved: content, tags." in page


def test_editing_with_htmx_answers_with_the_page_fragment(staff_client: Client) -> None:
    memory = make()
    response = staff_client.post(
        f"/memories/{memory.pk}/edit/", edit_data(memory, title="Instrument"), headers=HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.strip().startswith('<article id="memory-page"')
    assert "Instrument" in html
    assert 'id="flash" role="status" aria-live="polite" hx-swap-oob="innerHTML"' in html


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"content": "   "}, "This field is required"),
        ({"importance": "2"}, "less than or equal to 1"),
        ({"confidence": "high"}, "Enter a number"),
        ({"scope": "galaxy"}, "Select a valid choice"),
        ({"scope": "thread", "scope_id": ""}, "a thread memory needs the id of its thread"),
        ({"title": "t" * 201}, "at most 200 characters"),
    ],
)
def test_invalid_edits_are_shown_in_the_form_and_change_nothing(
    staff_client: Client, changes: dict[str, object], says: str
) -> None:
    memory = make()
    for headers in ({}, HTMX):
        response = staff_client.post(
            f"/memories/{memory.pk}/edit/", edit_data(memory, **changes), headers=headers
        )
        assert response.status_code == 400
        html = response.content.decode()
        assert says in html
        assert '<details class="edit" open>' in html
    memory.refresh_from_db()
    assert memory.content == "Alice plays the oboe."
    assert not MemoryEvent.objects.filter(memory_id=memory.pk, event="edited").exists()


def test_archive_restore_and_approve_from_the_page(staff_client: Client) -> None:
    memory = make(status="candidate")
    page = staff_client.get(f"/memories/{memory.pk}/").content.decode()
    assert 'value="active" class="approve"' in page
    staff_client.post(f"/memories/{memory.pk}/status/", {"status": "active"})
    memory.refresh_from_db()
    assert memory.status == "active"
    staff_client.post(f"/memories/{memory.pk}/status/", {"status": "archived"})
    memory.refresh_from_db()
    assert memory.status == "archived"
    response = staff_client.post(
        f"/memories/{memory.pk}/status/", {"status": "active"}, headers=HTMX
    )
    assert "status-active" in response.content.decode()
    memory.refresh_from_db()
    assert memory.status == "active"
    events = list(MemoryEvent.objects.filter(memory_id=memory.pk).values_list("event", "actor"))
    assert events[1:] == [
        ("promoted", "staff:staff"),
        ("archived", "staff:staff"),
        ("restored", "staff:staff"),
    ]


def test_a_refused_status_change_says_why(staff_client: Client) -> None:
    memory = make()
    response = staff_client.post(f"/memories/{memory.pk}/status/", {"status": "superseded"})
    assert response.status_code == 422
    assert "active (approve/restore) or archived" in response.content.decode()


def test_reversing_a_supersession_revives_the_old_memory(staff_client: Client) -> None:
    old = make("Alice lives in Porto.")
    new = make("Alice lives in Lisbon.")
    Memory.objects.filter(pk=old.pk).update(status="superseded", superseded_by=new)
    page = staff_client.get(f"/memories/{old.pk}/").content.decode()
    assert "Reverse supersession" in page
    assert f'href="/memories/{new.pk}/"' in page  # superseded by, linked
    assert (
        f'href="/memories/{old.pk}/"' in staff_client.get(f"/memories/{new.pk}/").content.decode()
    )
    response = staff_client.post(f"/memories/{old.pk}/reverse/")
    assert response.status_code == 302
    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.status, old.superseded_by_id) == ("active", None)
    assert new.status == "archived"
    again = staff_client.post(f"/memories/{old.pk}/reverse/")
    assert again.status_code == 422
    assert "is not superseded" in again.content.decode()


def test_deleting_asks_first_then_leaves_a_tombstone(staff_client: Client) -> None:
    memory = make()
    confirm = staff_client.get(f"/memories/{memory.pk}/delete/")
    assert confirm.status_code == 200
    assert "Delete for good" in confirm.content.decode()
    fragment = staff_client.get(f"/memories/{memory.pk}/delete/", headers=HTMX).content.decode()
    assert fragment.strip().startswith('<form method="post"')
    assert Memory.objects.filter(pk=memory.pk).exists()  # asking deletes nothing
    response = staff_client.post(f"/memories/{memory.pk}/delete/", headers=HTMX)
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/"
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert vector_index.knn(NS, get_embedder().embed(["oboe"])[0], 5) == []
    assert keyword_index.matching_ids(NS, "oboe") == []
    tombstone = MemoryEvent.objects.get(memory_id=memory.pk, event="deleted")
    assert tombstone.actor == "staff:staff"
    assert tombstone.data == {"kind": "fact"}  # a tombstone, not a copy (issue 37)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/memories/{pk}/edit/"),
        ("get", "/memories/{pk}/status/"),
        ("get", "/memories/{pk}/reverse/"),
        ("put", "/memories/{pk}/delete/"),
        ("post", "/memories/{pk}/"),
    ],
)
def test_wrong_methods_are_405(staff_client: Client, method: str, path: str) -> None:
    memory = make()
    assert getattr(staff_client, method)(path.format(pk=memory.pk)).status_code == 405


@pytest.mark.parametrize(
    "path",
    [
        "/memories/999999/edit/",
        "/memories/999999/status/",
        "/memories/999999/reverse/",
        "/memories/999999/delete/",
    ],
)
def test_actions_on_a_missing_memory_are_404(staff_client: Client, path: str) -> None:
    assert staff_client.post(path, {"status": "archived"}).status_code == 404


def test_actions_need_staff_and_a_csrf_token(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    memory = make()
    assert client.post(f"/memories/{memory.pk}/delete/").status_code == 302  # to the login
    assert client.get(f"/memories/{memory.pk}/").status_code == 302
    staff = django_user_model.objects.create_user("eve", password="pw-12345678", is_staff=True)
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(staff)
    assert checked.post(f"/memories/{memory.pk}/delete/").status_code == 403
    assert checked.post(f"/memories/{memory.pk}/edit/", edit_data(memory)).status_code == 403
    assert Memory.objects.filter(pk=memory.pk).exists()


def test_the_page_shows_what_the_memory_claims(staff_client: Client) -> None:
    from memories.extraction.types import Candidate
    from memories.write.ingest import memory_write

    jazz = memory_write(
        Candidate(kind="fact", content="The user no longer likes jazz.", stage="api"),
        namespace=NS,
        actor="test",
    )
    html = staff_client.get(f"/memories/{jazz.memory_id}/").content.decode()
    assert "<dt>Holder</dt><dd><code>user</code></dd>" in html
    assert "<dt>Predicate</dt><dd><code>opinion:jazz</code></dd>" in html
    assert "<dt>Value</dt><dd><q>positive</q></dd>" in html
    assert '<dt>Polarity</dt><dd><span class="badge">negated</span></dd>' in html
    bees = memory_create(namespace=NS, kind="fact", content="Alice keeps bees.", actor="t")
    html = staff_client.get(f"/memories/{bees.pk}/").content.decode()
    assert "none read" in html
