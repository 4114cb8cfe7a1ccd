"""Notes stay append-only in the admin: added through save_note, then only the status changes."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.test import Client

from notes.models import Note, NoteSearchKind, NoteSupersession
from notes.selectors import search_notes
from notes.services import save_note

pytestmark = pytest.mark.django_db

NS = "user:alice"
ADD = "/admin/notes/note/add/"
CHANGELIST = "/admin/notes/note/"


def change(note: Note) -> str:
    return f"/admin/notes/note/{note.pk}/change/"


def add_form(**fields: str) -> dict[str, str]:
    return {
        "namespace": NS,
        "body": "Deploys go out on Tuesdays.",
        "kind": "",
        "tags": "",
        "status": "",
        "supersedes": "",
        **fields,
    }


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_adding_a_note_in_the_admin_goes_through_save_note(admin_client: Client) -> None:
    assert admin_client.get(ADD).status_code == 200
    response = admin_client.post(
        ADD, add_form(namespace="user:alice", kind="runbook", tags="ops, deploy, ops")
    )
    assert response.status_code == 302
    note = Note.objects.get()
    assert (note.namespace, note.namespace_kind, note.kind) == (NS, "user", "runbook")
    assert note.body == "Deploys go out on Tuesdays."
    assert note.tags == ["ops", "deploy"]
    assert (note.author, note.status) == ("staff:admin", "accepted")
    assert LogEntry.objects.get().object_id == str(note.pk)


def test_a_superseding_note_added_in_the_admin_records_its_edges(admin_client: Client) -> None:
    old = save_note(NS, "Deploys go out on Mondays.")
    response = admin_client.post(
        ADD, add_form(supersedes=old.uid, status="pending", _continue="1"), follow=True
    )
    note = Note.objects.exclude(pk=old.pk).get()
    assert note.status == "pending"
    assert list(NoteSupersession.objects.values_list("note", "target")) == [(note.pk, old.pk)]
    assert old.uid in response.content.decode()  # the change page links the superseded note


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"body": ""}, "This field is required"),
        ({"body": "   "}, "body must not be empty"),
        ({"namespace": ""}, "This field is required"),
        ({"namespace": "alice"}, "invalid namespace"),
        ({"supersedes": "no-such-note"}, "supersedes: no note"),
        ({"status": "archived"}, "Select a valid choice"),
    ],
)
def test_bad_notes_are_form_errors_and_nothing_is_saved(
    admin_client: Client, fields: dict[str, str], error: str
) -> None:
    response = admin_client.post(ADD, add_form(**fields))
    assert response.status_code == 200
    assert error in response.content.decode()
    assert not Note.objects.exists()


def test_a_note_cannot_supersede_a_note_of_another_namespace(admin_client: Client) -> None:
    bobs = save_note("user:bob", "Bob deploys on Fridays.")
    response = admin_client.post(ADD, add_form(supersedes=bobs.uid))
    assert response.status_code == 200
    assert "supersedes: no note" in response.content.decode()
    assert Note.objects.count() == 1


def test_a_note_body_cannot_be_changed_in_the_admin(admin_client: Client) -> None:
    note = save_note(NS, "Deploys go out on Tuesdays.", kind="runbook", author="token:agent")
    page = admin_client.get(change(note)).content.decode()
    assert 'name="body"' not in page
    assert 'name="status"' in page
    response = admin_client.post(
        change(note),
        {"status": "accepted", "body": "forged", "namespace": "user:mallory", "author": "x"},
    )
    assert response.status_code == 302
    stored = Note.objects.get(pk=note.pk)
    assert (stored.body, stored.namespace, stored.author) == (
        "Deploys go out on Tuesdays.",
        NS,
        "token:agent",
    )
    assert (stored.status_by, stored.status_at) == ("", None)  # unchanged status: no record


def test_a_status_change_in_the_admin_records_who_and_when(admin_client: Client) -> None:
    note = save_note(NS, "Deploys go out on Tuesdays.")
    response = admin_client.post(change(note), {"status": "rejected"})
    assert response.status_code == 302
    stored = Note.objects.get(pk=note.pk)
    assert (stored.status, stored.status_by) == ("rejected", "staff:admin")
    assert stored.status_at is not None


def test_notes_cannot_be_deleted_in_the_admin(admin_client: Client) -> None:
    note = save_note(NS, "Deploys go out on Tuesdays.")
    delete = f"/admin/notes/note/{note.pk}/delete/"
    assert admin_client.get(delete).status_code == 403
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    page = admin_client.get(CHANGELIST).content.decode()
    assert 'value="delete_selected"' not in page
    admin_client.post(
        CHANGELIST, {"action": "delete_selected", "_selected_action": [note.pk], "post": "yes"}
    )
    assert Note.objects.filter(pk=note.pk).exists()


def test_accept_and_reject_actions_record_the_status_change(admin_client: Client) -> None:
    pending = save_note(NS, "Deploys may move to Wednesdays.", status="pending")
    accepted = save_note(NS, "Deploys go out on Tuesdays.")

    response = admin_client.post(
        CHANGELIST, {"action": "accept", "_selected_action": [pending.pk, accepted.pk]}, follow=True
    )
    said = messages_of(response)
    assert f"Now accepted: {pending.uid}." in said
    assert f"Already accepted: {accepted.uid}." in said
    stored = Note.objects.get(pk=pending.pk)
    assert (stored.status, stored.status_by) == ("accepted", "staff:admin")
    assert Note.objects.get(pk=accepted.pk).status_by == ""

    admin_client.post(CHANGELIST, {"action": "reject", "_selected_action": [accepted.pk]})
    stored = Note.objects.get(pk=accepted.pk)
    assert (stored.status, stored.status_by) == ("rejected", "staff:admin")
    assert stored.status_at is not None


def test_the_note_list_filters_searches_and_escapes_stored_html(admin_client: Client) -> None:
    note = save_note(NS, "<script>alert(1)</script> deploy notes", kind="<b>k</b>")
    save_note("user:bob", "Bob's deploy notes")
    listing = admin_client.get(
        CHANGELIST,
        {
            "status__exact": "accepted",
            "namespace_kind__exact": "user",
            "namespace": NS,
            "q": "deploy",
        },
    )
    assert listing.status_code == 200
    page = listing.content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; deploy notes" in page
    assert "<script>alert(1)</script>" not in page
    assert "Bob&#x27;s deploy notes" not in page
    detail = admin_client.get(change(note)).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in detail
    assert "<script>alert(1)</script>" not in detail
    assert "&lt;b&gt;k&lt;/b&gt;" in detail


def test_supersession_edges_are_read_only(admin_client: Client) -> None:
    old = save_note(NS, "Deploys go out on Mondays.")
    save_note(NS, "Deploys go out on Tuesdays.", supersedes=[old.uid])
    edge = NoteSupersession.objects.get()
    assert admin_client.get("/admin/notes/notesupersession/add/").status_code == 403
    url = f"/admin/notes/notesupersession/{edge.pk}/"
    assert admin_client.post(url + "delete/", {"post": "yes"}).status_code == 403
    assert admin_client.get(url + "change/").status_code == 200
    assert NoteSupersession.objects.filter(pk=edge.pk).exists()


def test_enabling_note_search_in_the_admin_goes_through_the_service(
    admin_client: Client,
) -> None:
    save_note(NS, "The staging database is called heron.")
    response = admin_client.post("/admin/notes/notesearchkind/add/", {"kind": "user"}, follow=True)
    assert any("Indexed 1 existing user notes" in m for m in messages_of(response))
    assert [n.body for n in search_notes("user", "heron")] == [
        "The staging database is called heron."
    ]
    again = admin_client.post("/admin/notes/notesearchkind/add/", {"kind": "user"}, follow=True)
    assert any("on already" in m for m in messages_of(again))
    assert NoteSearchKind.objects.count() == 1
    assert admin_client.post("/admin/notes/notesearchkind/user/delete/").status_code == 403
