"""Append-only notes: they change only by supersession and by their status gate."""

from __future__ import annotations

import uuid
from typing import ClassVar
from urllib.parse import urlencode

from django.db import models
from django.utils import timezone

from spaceduck.core.ids import client_id_of, is_qualified, key_length

# A client's note id is at most this long; its stored key (``uid``) may be namespace-
# qualified (spaceduck.core.ids), so the column is wider.
MAX_NOTE_ID_LENGTH = 128


class NoteStatus(models.TextChoices):
    ACCEPTED = "accepted"
    PENDING = "pending"
    REJECTED = "rejected"


def new_uid() -> str:
    return uuid.uuid4().hex


class Note(models.Model):
    # The integer id is the FTS5 rowid; ``uid`` is the stored key of the public id callers
    # choose or get (``client_id``): the id itself unless another namespace holds it, then
    # a key qualified by the namespace (spaceduck.core.ids), so ids belong to namespaces.
    uid = models.CharField(max_length=key_length(MAX_NOTE_ID_LENGTH), unique=True, default=new_uid)
    namespace = models.CharField(max_length=255, db_index=True)
    # Denormalised namespace kind: note search is enabled per kind, and the FTS
    # triggers read it to decide whether a note is indexed.
    namespace_kind = models.CharField(max_length=16, editable=False)
    kind = models.CharField(max_length=100, blank=True)
    body = models.TextField()
    tags = models.JSONField(default=list, blank=True)
    author = models.CharField(max_length=255, blank=True)
    status = models.CharField(
        max_length=16, choices=NoteStatus.choices, default=NoteStatus.ACCEPTED
    )
    status_by = models.CharField(max_length=255, blank=True)
    status_at = models.DateTimeField(null=True, blank=True)
    provenance = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering: ClassVar = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.client_id}: {self.body[:60]}"

    @property
    def client_id(self) -> str:
        """The note's id as its client knows it (the API's ``id``)."""
        return client_id_of(self.uid)

    @property
    def qualified(self) -> bool:
        """Whether another namespace held this id first: a by-id URL then names the namespace."""
        return is_qualified(self.uid)

    @property
    def page_query(self) -> str:
        """What a by-id URL of this note adds to name it: its namespace when the id is
        qualified (an unqualified id's URL stays as it was)."""
        return f"?{urlencode({'namespace': self.namespace})}" if self.qualified else ""


class NoteSupersession(models.Model):
    """``note`` supersedes ``target`` (effective only while ``note`` is accepted)."""

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="supersedes_edges")
    target = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="superseded_by_edges")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["note", "target"], name="note_supersession_unique"),
            models.CheckConstraint(
                condition=~models.Q(note=models.F("target")), name="note_no_self_supersession"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.note_id} supersedes {self.target_id}"


class NoteSearchKind(models.Model):
    """A namespace kind whose notes are full-text indexed (opt-in, see enable_note_search)."""

    kind = models.CharField(max_length=16, primary_key=True)
    enabled_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.kind
