"""Note full-text rows follow notes, but only for namespace kinds with search enabled."""

from __future__ import annotations

import pytest

from notes.models import Note, NoteSearchKind
from tests.notes.search_index import check_integrity, indexed_ids

pytestmark = pytest.mark.django_db


def fts_uids(query: str) -> list[str]:
    ids = indexed_ids(query)
    return sorted(Note.objects.filter(pk__in=ids).values_list("uid", flat=True))


def make_note(uid: str, namespace: str, body: str) -> Note:
    return Note.objects.create(
        uid=uid, namespace=namespace, namespace_kind=namespace.partition(":")[0], body=body
    )


def test_notes_of_a_kind_without_search_are_not_indexed() -> None:
    make_note("n1", "user:alice", "restart the worker")
    assert fts_uids("worker") == []


def test_notes_of_an_enabled_kind_follow_insert_update_and_delete() -> None:
    NoteSearchKind.objects.create(kind="user")
    note = make_note("n1", "user:alice", "restart the worker")
    make_note("n2", "agent:bot", "restart the worker too")
    assert fts_uids("worker") == ["n1"]
    Note.objects.filter(pk=note.pk).update(body="rotate the logs")
    assert fts_uids("worker") == []
    assert fts_uids("logs") == ["n1"]
    note.delete()
    assert fts_uids("logs") == []
    check_integrity()
