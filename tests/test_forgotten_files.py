"""Forget means forgotten, on the files (issue 37 item 1).

A distinctive name and e-mail address are written through every kind of row a namespace
holds (memories with every text field, their history, a conflict, an extraction and its
candidates, a thread title, messages and their provenance, facts, notes, an admin log
entry), committed, and found in the raw bytes of the data directory's files. The namespace
is then erased by each path (``manage.py erase``, ``DELETE /api/namespaces/{ns}``, the
People page), and the same bytes are searched again: no file holds either string, in any
case, as UTF-8 or UTF-16. SQLite only: on PostgreSQL the files are the server's.

The control test turns the two protections off (``secure_delete`` and the keyword index's
purge) and finds the name still in the file: the scan can fail.
"""

from __future__ import annotations

import io
import random
import string
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from memories.models import Conflict, Fact, Memory
from memories.store import vector_index
from memories.write.ingest import message_ingest
from memories.write.services import create_thread, delete_expired_facts, memory_create, set_fact
from notes.services import enable_note_search, save_note
from spaceduck.core.db import scrub
from tests.conftest import Actor, make_actor
from tests.memories.test_tombstones import PATHS as MEMORY_PATHS
from tests.memories.test_tombstones import write_memory
from tests.raw_files import data_files, files_holding

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite_only]

NS = "user:subject"  # the name stays on the erasure's tombstone: nothing personal in it
NAME = "Xqzvtplk"
MAIL = "brummerhofe@vantablack.example"
# The keyword index keeps terms prefix-compressed: a term may be stored without the
# letters it shares with the term before it, so its tail is searched for too.
NEEDLES = (NAME, MAIL, "zvtplk", "brummerhof", "vantablack")


def seed() -> None:
    """Every kind of row, each holding the name or the address."""
    thread = create_thread(NS, title=f"Planning with {NAME}")
    message_ingest(
        thread.id,
        "user",
        f"My name is {NAME} and my e-mail is {MAIL}. I live in Lisbon.",
        provenance={"tool_args": f"--contact {MAIL}"},
    )
    old = memory_create(
        namespace=NS,
        kind="fact",
        content=f"{NAME} likes zeppelin music.",
        title=f"{NAME}'s music",
        summary=f"music of {NAME}",
        tags=[NAME.lower()],
        context=f"said while writing to {MAIL}",
        actor="test",
    )
    new = memory_create(
        namespace=NS,
        kind="fact",
        content=f"{NAME} can be reached at {MAIL}.",
        actor="test",
        status="candidate",
    )
    Conflict.objects.create(namespace=NS, old=old, new=new, reason="test")
    set_fact(NS, "contact/email", {"address": MAIL, "name": NAME})
    enable_note_search("user")
    save_note(NS, f"{NAME} prefers e-mail ({MAIL}).", id="note-subject")
    user, _ = get_user_model().objects.get_or_create(username="log-writer")
    LogEntry.objects.create(
        content_type=ContentType.objects.get_for_model(Memory),
        object_id=str(old.pk),
        object_repr=str(old)[:200],
        action_flag=CHANGE,
        change_message=f"edited {NAME}",
        user_id=user.pk,
    )


def erase_by_command() -> None:
    call_command("erase", NS, "--yes", stdout=io.StringIO())


def erase_by_api() -> None:
    admin = make_actor(["*"], ["admin"], name="root")
    assert admin.delete(f"/api/namespaces/{NS}").status_code == 200


def erase_by_page() -> None:
    staff = get_user_model().objects.create_user("staff", password="pw-1234567", is_staff=True)
    client = Client()
    client.force_login(staff)
    response = client.post("/people/erase/", {"namespace": NS, "confirm": NS})
    assert response.status_code in (200, 302), response.content[:300]


ERASERS: dict[str, Callable[[], None]] = {
    "command": erase_by_command,
    "api": erase_by_api,
    "page": erase_by_page,
}


def test_connections_overwrite_deleted_content() -> None:
    with connection.cursor() as cursor:
        assert cursor.execute("PRAGMA secure_delete").fetchone()[0] == 1
        assert cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.parametrize("path", list(ERASERS))
def test_an_erased_namespace_is_in_no_file(path: str) -> None:
    seed()
    scrub.checkpoint()
    before = files_holding(*NEEDLES)
    assert before, "the seeded rows should be in the database file"
    vectors = stored_vectors()
    assert vectors
    assert all(vectors_in_files(vectors).values())
    ERASERS[path]()
    assert files_holding(*NEEDLES) == {}
    assert not any(vectors_in_files(vectors).values())  # nor the memories' vectors


def stored_vectors() -> dict[int, bytes]:
    ids = list(Memory.objects.filter(namespace=NS).values_list("id", flat=True))
    return vector_index.stored_blobs(ids)


def vectors_in_files(vectors: dict[int, bytes]) -> dict[int, bool]:
    """memory id -> whether any 32-byte piece of its stored vector holding two non-zero
    floats is in a file (the test embedder's vectors are mostly zeros, and a vector may
    be split over two pages)."""
    data = b"".join(path.read_bytes() for path in data_files())
    return {
        memory_id: any(piece in data for piece in _pieces(blob))
        for memory_id, blob in vectors.items()
    }


def _pieces(blob: bytes) -> list[bytes]:
    pieces = [blob[at : at + 32] for at in range(0, len(blob) - 31, 32)]
    return [p for p in pieces if sum(p[i : i + 4] != bytes(4) for i in range(0, 32, 4)) >= 2]


def test_the_scan_finds_what_an_unprotected_delete_leaves(monkeypatch: Any) -> None:
    """Control: with secure_delete off and no purge of the keyword index, the erased rows'
    bytes stay in the file after the same erase and checkpoint."""
    seed()
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA secure_delete=OFF")
    monkeypatch.setattr(scrub, "_PURGES", [])
    try:
        erase_by_command()
        assert files_holding(*NEEDLES)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA secure_delete=ON")


# --- Deletes, path by path ---------------------------------------------------------------


def unique_word() -> str:
    """A word no other test wrote (earlier tests' rows may linger in unmerged segments
    until the next purge), letters only so that the keyword index keeps it whole."""
    return "Qv" + "".join(random.choice(string.ascii_lowercase) for _ in range(10))


@pytest.mark.parametrize("path", list(MEMORY_PATHS))
def test_a_deleted_memory_is_in_no_file(
    path: str, owner: Actor, admin_client: Client, staff_client: Client
) -> None:
    word = unique_word()
    memory_id = write_memory(owner, f"Zyxwvut-{word}", skill_id="astronomy")
    vectors = vector_index.stored_blobs([memory_id])
    scrub.checkpoint()
    assert files_holding(word)
    MEMORY_PATHS[path](owner, memory_id, admin_client, staff_client)
    assert files_holding(word) == {}
    assert not any(vectors_in_files(vectors).values())


def test_a_deleted_message_thread_and_their_memories_are_in_no_file(owner: Actor) -> None:
    word = unique_word()
    thread = owner.post("/api/threads", {"namespace": "user:alice", "title": f"Trip {word}"})
    thread_id = thread.json()["id"]
    said = owner.post(
        f"/api/threads/{thread_id}/messages",
        {"role": "user", "content": f"I live in {word}ville.", "provenance": {"tool": word}},
    )
    assert said.status_code == 201, said.json()
    learnt = list(Memory.objects.filter(content__icontains=word).values_list("id", flat=True))
    assert learnt, "the extraction learnt where the user lives"
    scrub.checkpoint()
    assert files_holding(word)
    deleted = owner.post(f"/api/threads/{thread_id}/messages/delete", {"ids": [said.json()["id"]]})
    assert deleted.json() == {"deleted": 1}
    for memory_id in learnt:  # a memory is deleted on its own
        assert owner.delete(f"/api/memories/{memory_id}").status_code == 204
    assert owner.delete(f"/api/threads/{thread_id}").status_code == 204
    assert files_holding(word) == {}


@pytest.mark.parametrize("how", ["api", "ttl"])
def test_a_deleted_or_expired_fact_is_in_no_file(how: str, owner: Actor) -> None:
    word = unique_word()
    set_fact("user:alice", "travel/plan", {"city": word}, ttl_ms=60_000, provenance={"by": word})
    scrub.checkpoint()
    assert files_holding(word)
    if how == "api":
        assert owner.delete("/api/facts/user:alice/travel/plan").status_code == 204
    else:
        Fact.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
        assert delete_expired_facts() == 1
    assert files_holding(word) == {}
