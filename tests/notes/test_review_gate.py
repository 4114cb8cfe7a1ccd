"""The note approval gate in the dashboard: staff accept or reject pending notes."""

from __future__ import annotations

import pytest
from django.test import Client

from notes.models import Note
from notes.selectors import list_notes
from notes.services import save_note

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


@pytest.fixture
def proposal() -> Note:
    save_note("agent:oncall", "Restart the <b>api</b> pods first.", kind="runbook", id="rb-1")
    return save_note(
        "agent:oncall",
        "Drain the node, then restart the api pods.",
        kind="runbook",
        author="agent:oncall-bot",
        status="pending",
        supersedes=["rb-1"],
        id="rb-2",
    )


def test_people_who_are_not_staff_are_sent_to_the_login(client: Client, proposal: Note) -> None:
    assert client.get("/notes/review/").status_code == 302
    response = client.post(f"/notes/{proposal.uid}/decision/", {"status": "accepted"})
    assert response.status_code == 302
    assert Note.objects.get(uid="rb-2").status == "pending"


def test_the_queue_shows_pending_notes_and_what_they_replace(
    staff_client: Client, proposal: Note
) -> None:
    save_note("user:alice", "An accepted note nobody needs to review.", id="done")
    page = staff_client.get("/notes/review/").content.decode()
    assert "Drain the node, then restart the api pods." in page
    assert "replaces <code>rb-1</code> (accepted)" in page
    assert "Restart the &lt;b&gt;api&lt;/b&gt; pods first." in page  # escaped
    assert "An accepted note nobody needs to review." not in page
    assert "by agent:oncall-bot" in page


def test_accepting_answers_with_the_row_and_the_old_note_is_hidden(
    staff_client: Client, proposal: Note
) -> None:
    response = staff_client.post(
        f"/notes/{proposal.uid}/decision/", {"status": "accepted"}, headers=HTMX
    )
    assert response.status_code == 200
    fragment = response.content.decode()
    assert fragment.strip().startswith(f'<tr id="note-{proposal.pk}"')
    assert "<strong>accepted</strong>" in fragment
    assert "by staff:staff" in fragment
    note = Note.objects.get(uid="rb-2")
    assert (note.status, note.status_by) == ("accepted", "staff:staff")
    assert [n.uid for n in list_notes("agent:oncall")] == ["rb-2"]
    assert "Nothing is waiting for review." in staff_client.get("/notes/review/").content.decode()


def test_rejecting_keeps_the_old_note(staff_client: Client, proposal: Note) -> None:
    response = staff_client.post(
        f"/notes/{proposal.uid}/decision/", {"status": "rejected"}, headers=HTMX
    )
    assert "<strong>rejected</strong>" in response.content.decode()
    assert [n.uid for n in list_notes("agent:oncall")] == ["rb-1"]


def test_without_javascript_a_decision_is_a_form_post_that_redirects(
    staff_client: Client, proposal: Note
) -> None:
    page = staff_client.get("/notes/review/").content.decode()
    assert f'<form method="post" action="/notes/{proposal.uid}/decision/"' in page
    response = staff_client.post(f"/notes/{proposal.uid}/decision/", {"status": "accepted"})
    assert (response.status_code, response["Location"]) == (302, "/notes/review/")
    assert Note.objects.get(uid="rb-2").status == "accepted"
    assert "Note rb-2 accepted." in staff_client.get("/notes/review/").content.decode()


@pytest.mark.parametrize("status", ["", "pending", "ACCEPTED", "deleted"])
def test_only_accept_or_reject_are_decisions(
    staff_client: Client, proposal: Note, status: str
) -> None:
    response = staff_client.post(f"/notes/{proposal.uid}/decision/", {"status": status})
    assert response.status_code == 400
    html = response.content.decode()
    assert "status must be accepted or rejected" in html
    assert 'id="site-nav"' in html  # a page with the navigation, not a bare line
    response = staff_client.post(
        f"/notes/{proposal.uid}/decision/", {"status": status}, headers=HTMX
    )
    assert response.status_code == 400
    assert response["HX-Retarget"] == "#flash"  # the message area, the queue left as it is
    assert "status must be accepted or rejected" in response.content.decode()
    assert Note.objects.get(uid="rb-2").status == "pending"


def test_an_unknown_note_is_a_404_and_get_is_not_allowed(
    staff_client: Client, proposal: Note
) -> None:
    response = staff_client.post("/notes/nope/decision/", {"status": "accepted"})
    assert response.status_code == 404
    html = response.content.decode()
    assert "note &#x27;nope&#x27; not found" in html
    assert 'id="site-nav"' in html
    assert staff_client.get(f"/notes/{proposal.uid}/decision/").status_code == 405
