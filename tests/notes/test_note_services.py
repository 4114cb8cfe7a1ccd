"""The notes Python API: append-only saves, supersession, the status gate, the read contract."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from notes.models import Note, NoteSupersession
from notes.selectors import get_note, list_notes
from notes.services import save_note, set_note_status
from spaceduck.core.errors import InvalidInput, NotFound

pytestmark = pytest.mark.django_db

NS = "user:alice"


def uids(notes: object) -> list[str]:
    return [note.uid for note in notes]  # type: ignore[attr-defined]


def edges() -> set[tuple[str, str]]:
    return set(NoteSupersession.objects.values_list("note__uid", "target__uid"))


# --- saving -------------------------------------------------------------------


def test_save_note_stores_every_field_and_the_namespace_kind() -> None:
    note = save_note(
        NS,
        "Deploys happen on Tuesdays.",
        kind="decision",
        tags=["ops", "deploy"],
        author="agent:planner",
        provenance={"thread": "t-1", "message": 4},
        id="deploy-day",
    )
    stored = Note.objects.get(uid="deploy-day")
    assert stored.pk == note.pk
    assert stored.namespace == NS
    assert stored.namespace_kind == "user"
    assert stored.kind == "decision"
    assert stored.body == "Deploys happen on Tuesdays."
    assert stored.tags == ["ops", "deploy"]
    assert stored.author == "agent:planner"
    assert stored.status == "accepted"
    assert stored.provenance == {"thread": "t-1", "message": 4}
    assert stored.status_by == ""
    assert stored.status_at is None


def test_save_note_defaults_and_generates_an_id() -> None:
    note = save_note("agent:bot", "plain")
    assert len(note.uid) == 32
    assert (note.kind, note.tags, note.author, note.status, note.provenance) == (
        "",
        [],
        "",
        "accepted",
        None,
    )
    assert note.namespace_kind == "agent"
    assert save_note("agent:bot", "plain").uid != note.uid


def test_save_note_canonicalises_the_namespace() -> None:
    note = save_note("workflow:a%3Ab", "x")
    assert note.namespace == "workflow:a%3Ab"
    assert note.namespace_kind == "workflow"


@pytest.mark.parametrize("status", ["pending", "rejected", "accepted"])
def test_save_note_accepts_each_status(status: str) -> None:
    assert save_note(NS, "x", status=status).status == status


@pytest.mark.parametrize("status", ["approved", "ACCEPTED", "", None, 1, "any"])
def test_an_unknown_status_is_a_clear_error(status: object) -> None:
    with pytest.raises(InvalidInput, match="accepted, pending, rejected"):
        save_note(NS, "x", status=status)  # type: ignore[arg-type]
    assert Note.objects.count() == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"namespace": "user:a:b"}, "namespace"),
        ({"namespace": "planet:x"}, "namespace"),
        ({"namespace": 7}, "namespace"),
        ({"body": ""}, "body"),
        ({"body": "   \n"}, "body"),
        ({"body": None}, "body"),
        ({"body": "nul\x00inside"}, "NUL"),
        ({"body": "lone \ud800 surrogate"}, "surrogate"),
        ({"kind": 3}, "kind"),
        ({"kind": 0}, "kind"),
        ({"kind": "k" * 101}, "kind"),
        ({"tags": "ops"}, "tags"),
        ({"tags": ["ok", 5]}, "tags"),
        ({"tags": [""]}, "tags"),
        ({"tags": {"a": 1}}, "tags"),
        ({"author": ["x"]}, "author"),
        ({"provenance": ["not", "a", "dict"]}, "provenance"),
        ({"provenance": {"score": math.nan}}, "provenance"),
        ({"provenance": {"when": timezone.now()}}, "provenance"),
        ({"provenance": {1: "int key"}}, "provenance"),
        ({"id": ""}, "id"),
        ({"id": "x" * 129}, "id"),
        ({"id": "a/b"}, "id"),
        ({"id": "has space"}, "id"),
        ({"id": 12}, "id"),
        ({"supersedes": "abc"}, "supersedes"),
        ({"supersedes": [1]}, "supersedes"),
    ],
)
def test_invalid_input_is_refused_with_a_message_naming_the_field(
    kwargs: dict[str, object], message: str
) -> None:
    args: dict[str, object] = {"namespace": NS, "body": "text", **kwargs}
    with pytest.raises(InvalidInput, match=message):
        save_note(**args)  # type: ignore[arg-type]
    assert Note.objects.count() == 0


def test_saving_an_existing_id_returns_the_stored_note_unchanged() -> None:
    old = save_note(NS, "old", id="target")
    first = save_note(NS, "original", kind="k", tags=["a"], author="me", id="n1")
    again = save_note(
        NS,
        "rewritten",
        kind="other",
        tags=["b"],
        author="someone else",
        status="rejected",
        supersedes=[old.uid],
        provenance={"new": True},
        id="n1",
    )
    assert again.pk == first.pk
    stored = Note.objects.get(uid="n1")
    assert (stored.body, stored.kind, stored.tags, stored.author, stored.status) == (
        "original",
        "k",
        ["a"],
        "me",
        "accepted",
    )
    assert stored.provenance is None
    assert Note.objects.count() == 2
    assert edges() == set()  # the replay added no supersession edge
    assert uids(list_notes(NS)) == ["target", "n1"]


def test_an_id_used_in_another_namespace_is_neither_a_conflict_nor_a_leak() -> None:
    # Issue 37: a note id belongs to its namespace; the second writer gets its own note.
    save_note("user:bob", "bob's secret", id="shared-id")
    alice = save_note(NS, "alice's note", id="shared-id")
    assert (alice.client_id, alice.namespace, alice.body) == ("shared-id", NS, "alice's note")
    assert Note.objects.get(uid="shared-id").namespace == "user:bob"


# --- supersession ---------------------------------------------------------------


def test_supersedes_ids_must_exist() -> None:
    save_note(NS, "a", id="a")
    with pytest.raises(InvalidInput, match="'ghost'"):
        save_note(NS, "b", supersedes=["a", "ghost"], id="b")
    assert not Note.objects.filter(uid="b").exists()
    assert edges() == set()


def test_cross_namespace_supersession_is_refused() -> None:
    save_note("user:bob", "bob's knowledge", id="bob-1")
    with pytest.raises(InvalidInput, match="own namespace"):
        save_note(NS, "alice hides bob", supersedes=["bob-1"], id="evil")
    assert not Note.objects.filter(uid="evil").exists()
    assert uids(list_notes("user:bob")) == ["bob-1"]


def test_the_cross_namespace_error_does_not_reveal_the_other_namespace() -> None:
    save_note("user:bob", "bob's knowledge", id="bob-1")
    with pytest.raises(InvalidInput) as refused:
        save_note(NS, "x", supersedes=["bob-1"])
    assert "user:bob" not in str(refused.value)


def test_a_note_cannot_supersede_itself() -> None:
    with pytest.raises(InvalidInput, match="itself"):
        save_note(NS, "me", supersedes=["me"], id="me")
    assert Note.objects.count() == 0


def test_duplicate_supersedes_collapse() -> None:
    save_note(NS, "a", id="a")
    save_note(NS, "b", id="b")
    save_note(NS, "c", supersedes=["a", "b", "a", "b"], id="c")
    assert edges() == {("c", "a"), ("c", "b")}
    assert NoteSupersession.objects.count() == 2


def test_an_accepted_superseder_of_three_notes_hides_all_three() -> None:
    for uid in ("a", "b", "c"):
        save_note(NS, uid, id=uid)
    save_note(NS, "keep", id="keep")
    save_note(NS, "replaces a, b and c", supersedes=["a", "b", "c"], id="new")
    assert uids(list_notes(NS)) == ["keep", "new"]
    assert uids(list_notes(NS, include_superseded=True)) == ["a", "b", "c", "keep", "new"]


def test_a_pending_superseder_hides_nothing() -> None:
    save_note(NS, "a", id="a")
    save_note(NS, "b", id="b")
    save_note(NS, "proposal", supersedes=["a", "b"], status="pending", id="p")
    assert uids(list_notes(NS)) == ["a", "b"]
    assert uids(list_notes(NS, status="pending")) == ["p"]


def test_a_pending_superseder_that_is_rejected_still_hides_nothing() -> None:
    save_note(NS, "a", id="a")
    save_note(NS, "proposal", supersedes=["a"], status="pending", id="p")
    set_note_status("p", "rejected", by="reviewer")
    assert uids(list_notes(NS)) == ["a"]
    assert uids(list_notes(NS, status="rejected")) == ["p"]


def test_a_pending_superseder_that_is_accepted_hides_its_targets() -> None:
    save_note(NS, "a", id="a")
    save_note(NS, "b", id="b")
    save_note(NS, "proposal", supersedes=["a"], status="pending", id="p")
    assert uids(list_notes(NS)) == ["a", "b"]
    set_note_status("p", "accepted", by="reviewer")
    assert uids(list_notes(NS)) == ["b", "p"]


def test_a_rejected_superseder_hides_nothing() -> None:
    save_note(NS, "a", id="a")
    save_note(NS, "no", supersedes=["a"], status="rejected", id="r")
    assert uids(list_notes(NS)) == ["a"]


def test_supersession_is_one_hop_along_a_chain() -> None:
    save_note(NS, "A", id="A")
    save_note(NS, "B", supersedes=["A"], id="B")
    save_note(NS, "C", supersedes=["B"], id="C")
    assert uids(list_notes(NS)) == ["C"]
    set_note_status("C", "rejected", by="reviewer")
    # C no longer hides B; A stays hidden by the accepted B.
    assert uids(list_notes(NS)) == ["B"]
    set_note_status("B", "rejected", by="reviewer")
    assert uids(list_notes(NS)) == ["A"]


def test_a_superseded_note_may_be_superseded_again() -> None:
    save_note(NS, "A", id="A")
    save_note(NS, "B", supersedes=["A"], id="B")
    save_note(NS, "B2", supersedes=["A"], id="B2")
    set_note_status("B", "rejected", by="reviewer")
    assert uids(list_notes(NS)) == ["B2"]  # A is still hidden by the accepted B2


# --- status ---------------------------------------------------------------------


def test_set_note_status_records_who_and_when() -> None:
    save_note(NS, "a", status="pending", id="a")
    before = timezone.now()
    note = set_note_status("a", "accepted", by="token:reviewer")
    assert note.status == "accepted"
    assert note.status_by == "token:reviewer"
    assert note.status_at is not None
    assert before <= note.status_at <= timezone.now() + timedelta(seconds=1)
    assert Note.objects.get(uid="a").status_by == "token:reviewer"


def test_set_note_status_changes_nothing_else() -> None:
    save_note(NS, "body", kind="k", tags=["t"], author="me", provenance={"p": 1}, id="a")
    set_note_status("a", "rejected", by="reviewer")
    stored = Note.objects.get(uid="a")
    assert (stored.body, stored.kind, stored.tags, stored.author, stored.provenance) == (
        "body",
        "k",
        ["t"],
        "me",
        {"p": 1},
    )


def test_set_note_status_on_a_missing_id_is_not_found() -> None:
    with pytest.raises(NotFound, match="'ghost'"):
        set_note_status("ghost", "accepted", by="reviewer")


@pytest.mark.parametrize("status", ["approved", "", "any", None])
def test_set_note_status_refuses_an_unknown_status(status: object) -> None:
    save_note(NS, "a", id="a")
    with pytest.raises(InvalidInput, match="accepted, pending, rejected"):
        set_note_status("a", status, by="reviewer")  # type: ignore[arg-type]
    assert Note.objects.get(uid="a").status == "accepted"


def test_set_note_status_needs_to_know_who() -> None:
    save_note(NS, "a", id="a")
    with pytest.raises(InvalidInput, match="by"):
        set_note_status("a", "rejected", by="  ")


# --- reading --------------------------------------------------------------------


def test_get_note_returns_the_note_or_raises_not_found() -> None:
    save_note(NS, "a", id="a")
    assert get_note("a").body == "a"
    with pytest.raises(NotFound):
        get_note("ghost")


def test_list_notes_filters_by_status_one_a_list_or_any() -> None:
    save_note(NS, "a", id="a")
    save_note(NS, "p", status="pending", id="p")
    save_note(NS, "r", status="rejected", id="r")
    assert uids(list_notes(NS)) == ["a"]
    assert uids(list_notes(NS, status="pending")) == ["p"]
    assert uids(list_notes(NS, status=["pending", "rejected"])) == ["p", "r"]
    assert uids(list_notes(NS, status="any")) == ["a", "p", "r"]


@pytest.mark.parametrize("status", ["approved", ["accepted", "nope"], [], 5])
def test_list_notes_refuses_an_unknown_status_filter(status: object) -> None:
    with pytest.raises(InvalidInput, match="status"):
        list_notes(NS, status=status)  # type: ignore[arg-type]


def test_a_pending_note_superseded_by_an_accepted_one_is_hidden_unless_asked() -> None:
    save_note(NS, "p", status="pending", id="p")
    save_note(NS, "a", supersedes=["p"], id="a")
    assert uids(list_notes(NS, status="pending")) == []
    assert uids(list_notes(NS, status="pending", include_superseded=True)) == ["p"]


def test_list_notes_filters_by_kind_and_namespace() -> None:
    save_note(NS, "a", kind="decision", id="a")
    save_note(NS, "b", kind="howto", id="b")
    save_note("user:bob", "c", kind="decision", id="c")
    assert uids(list_notes(NS, kind="decision")) == ["a"]
    assert uids(list_notes("user:bob")) == ["c"]
    assert uids(list_notes(kind="decision")) == ["a", "c"]  # every namespace


def test_list_notes_orders_by_created_at_then_id() -> None:
    first = save_note(NS, "first", id="z-first")
    second = save_note(NS, "second", id="a-second")
    same_time = timezone.now() - timedelta(days=1)
    Note.objects.filter(pk__in=[first.pk, second.pk]).update(created_at=same_time)
    third = save_note(NS, "third", id="m-third")
    Note.objects.filter(pk=third.pk).update(created_at=same_time - timedelta(seconds=1))
    assert uids(list_notes(NS)) == ["m-third", "z-first", "a-second"]


def test_list_notes_refuses_an_invalid_namespace() -> None:
    with pytest.raises(InvalidInput, match="namespace"):
        list_notes("user:a:b")
