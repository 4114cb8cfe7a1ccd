"""Note ids belong to their namespace (issue 37, item 6): the same client-chosen id in two
namespaces is two notes; the second writer's answer does not tell of the first; reads,
supersession and review by id stay within the caller's namespaces; the store, MCP, the
dashboard, the admin and export/import all keep the two apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from notes.models import Note
from spaceduck.ops.transfer.export import export_to_path
from spaceduck.ops.transfer.importer import import_file
from tests.conftest import Actor, make_actor

pytestmark = pytest.mark.django_db

ID = "shared-id"
ALICE, BOB = "user:alice", "user:bob"
HTMX = {"HX-Request": "true"}


@pytest.fixture
def alice() -> Actor:
    return make_actor([ALICE], ["read", "write", "approve"], name="alice-agent")


@pytest.fixture
def bob() -> Actor:
    return make_actor([BOB], ["read", "write", "approve"], name="bob-agent")


def post(actor: Actor, namespace: str, body: str, id: str = ID, **extra: object):  # type: ignore[no-untyped-def]
    return actor.post("/api/notes", {"namespace": namespace, "body": body, "id": id, **extra})


def listed(actor: Actor, namespace: str, **params: object) -> list[tuple[str, str]]:
    response = actor.get("/api/notes", {"namespace": namespace, **params})
    assert response.status_code == 200, response.content
    return [(note["id"], note["body"]) for note in response.json()["notes"]]


def without_times(note: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in note.items() if key not in ("created_at", "status_at")}


@pytest.fixture
def both(alice: Actor, bob: Actor) -> None:
    """Alice's and Bob's note of the same id, Alice's first."""
    first = post(alice, ALICE, "alice's words")
    assert first.status_code == 201, first.content
    second = post(bob, BOB, "bob's words")
    assert second.status_code == 201, second.content  # not 409: no sign of Alice's


def test_the_same_id_in_two_namespaces_is_two_notes(alice: Actor, bob: Actor, both: None) -> None:
    assert Note.objects.count() == 2
    assert listed(alice, ALICE) == [(ID, "alice's words")]
    assert listed(bob, BOB) == [(ID, "bob's words")]
    assert alice.get(f"/api/notes/{ID}").json()["body"] == "alice's words"
    assert bob.get(f"/api/notes/{ID}").json()["body"] == "bob's words"
    # Bob's is stored under his namespace's key; every answer shows the id he chose.
    assert {note.client_id for note in Note.objects.all()} == {ID}
    assert Note.objects.get(uid=ID).namespace == ALICE
    assert Note.objects.get(namespace=BOB).uid != ID


def test_saving_again_is_still_a_no_op_in_each_namespace(
    alice: Actor, bob: Actor, both: None
) -> None:
    again = post(bob, BOB, "bob, ignored")
    assert again.status_code == 200
    assert again.json()["body"] == "bob's words"
    assert post(alice, ALICE, "alice, ignored").json()["body"] == "alice's words"
    assert Note.objects.count() == 2


def test_the_second_writers_answer_is_the_same_whether_or_not_the_id_is_used(
    alice: Actor, bob: Actor
) -> None:
    alone = post(bob, BOB, "bob's words")
    Note.objects.all().delete()
    post(alice, ALICE, "alice's words")
    shared = post(bob, BOB, "bob's words")
    assert (alone.status_code, shared.status_code) == (201, 201)
    assert without_times(alone.json()) == without_times(shared.json())
    assert "alice" not in shared.content.decode()


def test_another_namespaces_id_reads_exactly_like_a_missing_one(alice: Actor, bob: Actor) -> None:
    def answers() -> list[tuple[int, bytes]]:
        return [
            (r.status_code, r.content)
            for r in (
                bob.get(f"/api/notes/{ID}"),
                bob.post(f"/api/notes/{ID}/status", {"status": "rejected"}),
                bob.get(f"/api/notes/{ID}", {"namespace": ALICE}),
                post(bob, BOB, "replaces it", id="b-2", supersedes=[ID]),
            )
        ]

    before = answers()
    post(alice, ALICE, "alice's words")
    assert answers() == before
    assert [status for status, _ in before] == [404, 404, 404, 422]
    assert Note.objects.get(uid=ID).status == "accepted"  # Bob's status call changed nothing


def test_supersession_by_id_stays_within_the_namespace(
    alice: Actor, bob: Actor, both: None
) -> None:
    newer = post(bob, BOB, "bob's newer words", id="bob-2", supersedes=[ID])
    assert newer.status_code == 201, newer.content
    assert newer.json()["supersedes"] == [ID]
    assert listed(bob, BOB) == [("bob-2", "bob's newer words")]
    assert listed(alice, ALICE) == [(ID, "alice's words")]  # Alice's note is not hidden
    # And the other way round: Alice supersedes her own, not Bob's.
    post(alice, ALICE, "alice's newer words", id="alice-2", supersedes=[ID])
    assert listed(alice, ALICE) == [("alice-2", "alice's newer words")]
    assert listed(bob, BOB, include_superseded="true") == [
        (ID, "bob's words"),
        ("bob-2", "bob's newer words"),
    ]


def test_review_by_id_stays_within_the_namespace(alice: Actor, bob: Actor, both: None) -> None:
    decided = bob.post(f"/api/notes/{ID}/status", {"status": "rejected"})
    assert decided.status_code == 200, decided.content
    assert (decided.json()["id"], decided.json()["status"]) == (ID, "rejected")
    assert Note.objects.get(namespace=BOB).status == "rejected"
    assert Note.objects.get(namespace=ALICE).status == "accepted"


def test_a_token_of_both_namespaces_names_the_one_it_means(both: None) -> None:
    both_ns = make_actor(["user:*"], ["read", "write", "approve"], name="both")
    # Without a namespace the id names its first owner, as it did before.
    assert both_ns.get(f"/api/notes/{ID}").json()["namespace"] == ALICE
    chosen = both_ns.get(f"/api/notes/{ID}", {"namespace": BOB})
    assert (chosen.json()["id"], chosen.json()["body"]) == (ID, "bob's words")
    decided = both_ns.post(f"/api/notes/{ID}/status?namespace={BOB}", {"status": "rejected"}).json()
    assert (decided["namespace"], decided["status"]) == (BOB, "rejected")
    assert Note.objects.get(namespace=ALICE).status == "accepted"


def test_an_id_only_qualified_in_several_namespaces_asks_for_one(bob: Actor, both: None) -> None:
    carol = make_actor(["user:carol"], ["read", "write"], name="carol-agent")
    assert post(carol, "user:carol", "carol's words").status_code == 201
    Note.objects.filter(namespace=ALICE).delete()  # the first owner is gone (e.g. erased)
    assert bob.get(f"/api/notes/{ID}").json()["body"] == "bob's words"  # his only one
    every = make_actor(["*"], ["read"], name="every")
    ambiguous = every.get(f"/api/notes/{ID}")
    assert ambiguous.status_code == 409
    assert "user:bob" in ambiguous.json()["detail"]
    assert "user:carol" in ambiguous.json()["detail"]
    assert every.get(f"/api/notes/{ID}", {"namespace": "user:carol"}).json()["body"] == (
        "carol's words"
    )


def test_the_python_store_keeps_ids_per_namespace(both: None) -> None:
    from spaceduck import store

    carol = store.save_note(namespace="user:carol", body="carol's words", id=ID)
    assert (carol.client_id, carol.namespace) == (ID, "user:carol")
    assert store.get_note(ID).namespace == ALICE
    assert store.get_note(ID, "user:carol").body == "carol's words"
    store.set_note_status(ID, "rejected", by="staff:ann", namespace="user:carol")
    assert Note.objects.get(namespace="user:carol").status == "rejected"
    assert Note.objects.get(namespace=ALICE).status == "accepted"
    newer = store.save_note(namespace="user:carol", body="newer", id="c-2", supersedes=[ID])
    assert Note.objects.get(pk=newer.pk).supersedes_edges.get().target.namespace == "user:carol"


@pytest.mark.django_db(transaction=True)
def test_the_mcp_save_note_tool_keeps_ids_per_namespace() -> None:
    from notes.mcp_tools import save_note
    from notes.services import save_note as service_save
    from spaceduck.core.mcp_base import set_stdio_token
    from spaceduck.core.tokens import token_create

    service_save(namespace=ALICE, body="alice's words", id=ID)
    created = token_create(name="mcp", namespaces=[BOB], permissions=["read", "write"])
    set_stdio_token(created.secret)
    try:
        saved = save_note(body="bob's words", namespace=BOB, id=ID)
        assert (saved["id"], saved["namespace"], saved["created"]) == (ID, BOB, True)
        again = save_note(body="ignored", namespace=BOB, id=ID)
        assert (again["body"], again["created"]) == ("bob's words", False)
    finally:
        set_stdio_token(None)
    assert Note.objects.count() == 2


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "htmx"])
def test_the_dashboards_note_pages(
    staff_client: Client, both: None, headers: dict[str, str]
) -> None:
    first = staff_client.get(f"/notes/{ID}/", headers=headers)
    assert first.status_code == 200
    assert "alice&#x27;s words" in first.content.decode()
    query = f"?namespace={BOB}"
    second = staff_client.get(f"/notes/{ID}/{query}", headers=headers).content.decode()
    assert "bob&#x27;s words" in second
    assert "alice&#x27;s words" not in second
    assert f"<code>{ID}</code>" in second
    listing = staff_client.get("/notes/", {"status": "any"}, headers=headers).content.decode()
    assert f'href="/notes/{ID}/"' in listing  # Alice's URL is as it was
    assert f'href="/notes/{ID}/?namespace=user%3Abob"' in listing
    for page in (first.content.decode(), second, listing):
        assert "\x1f" not in page
    missing = staff_client.get(f"/notes/{ID}/?namespace=user:carol", headers=headers)
    assert missing.status_code == 404


def test_the_dashboards_decision_names_the_namespace(staff_client: Client, both: None) -> None:
    response = staff_client.post(
        f"/notes/{ID}/decision/?namespace={BOB}", {"status": "rejected"}, headers=HTMX
    )
    assert response.status_code == 200
    assert "\x1f" not in response.content.decode()
    assert Note.objects.get(namespace=BOB).status == "rejected"
    assert Note.objects.get(namespace=ALICE).status == "accepted"


def test_the_admin_shows_and_decides_the_clients_id(
    staff_client: Client, django_user_model, both: None
) -> None:  # type: ignore[no-untyped-def]
    django_user_model.objects.filter(username="staff").update(is_superuser=True)
    listing = staff_client.get("/admin/notes/note/").content.decode()
    assert "\x1f" not in listing
    assert listing.count(f">{ID}</a>") == 2
    bobs = Note.objects.get(namespace=BOB)
    assert "\x1f" not in staff_client.get(f"/admin/notes/note/{bobs.pk}/change/").content.decode()
    changed = staff_client.post(
        "/admin/notes/note/",
        {"action": "reject", "_selected_action": [str(bobs.pk)]},
    )
    assert changed.status_code == 302
    assert Note.objects.get(namespace=BOB).status == "rejected"
    assert Note.objects.get(namespace=ALICE).status == "accepted"


def test_export_and_import_keep_both_notes(
    alice: Actor, bob: Actor, both: None, tmp_path: Path
) -> None:
    post(bob, BOB, "bob's newer words", id="bob-2", supersedes=[ID])
    path = tmp_path / "all.jsonl"
    export_to_path(path)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len([r for r in records if r.get("type") == "note"]) == 3
    Note.objects.all().delete()
    result = import_file(path)
    assert result.created["note"] == 3
    assert listed(alice, ALICE) == [(ID, "alice's words")]
    assert listed(bob, BOB) == [("bob-2", "bob's newer words")]
    assert bob.get(f"/api/notes/{ID}").json()["body"] == "bob's words"
    assert post(bob, BOB, "again").status_code == 200  # still Bob's own id
    assert Note.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_racers_of_two_namespaces_on_one_id_get_one_note_each() -> None:
    from notes.services import save_note
    from tests.notes.test_note_races import run_in_threads

    namespaces = [ALICE, BOB] * 4

    def save(racer: int) -> tuple[str, str]:
        note = save_note(namespaces[racer], f"from {racer}", id="race")
        return note.namespace, note.body

    results = run_in_threads(save, len(namespaces))
    assert not [r for r in results if isinstance(r, Exception)], results
    stored = {note.namespace: note.body for note in Note.objects.all()}
    assert len(stored) == Note.objects.count() == 2
    assert set(results) == set(stored.items())  # every racer got its namespace's note
    assert {note.client_id for note in Note.objects.all()} == {"race"}


def test_the_longest_id_fits_in_a_second_namespace(alice: Actor, bob: Actor) -> None:
    longest = "n" * 128  # notes.services.MAX_ID_LENGTH; its qualified key is 146 long
    assert post(alice, ALICE, "alice's", id=longest).status_code == 201
    response = post(bob, BOB, "bob's", id=longest)
    assert response.status_code == 201, response.content
    assert response.json()["id"] == longest
    assert bob.get(f"/api/notes/{longest}").json()["body"] == "bob's"
