"""Write operations on notes, used by the JSON API, the dashboard and the CLI.

Notes are append-only: after insert only the status gate changes
(``set_note_status``). Knowledge replaces knowledge through supersession edges,
written once, with the note that carries them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from notes.models import (
    MAX_NOTE_ID_LENGTH,
    Note,
    NoteSearchKind,
    NoteStatus,
    NoteSupersession,
    new_uid,
)
from spaceduck.core import credentials, webhooks
from spaceduck.core.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from spaceduck.core.ids import KEY_MARK, client_keys, namespaced_key
from spaceduck.core.limits import check_json_value, check_length, check_size, utf8_size
from spaceduck.core.namespaces import NAMESPACE_KINDS, InvalidNamespace, normalize_namespace

STATUSES: tuple[str, ...] = tuple(NoteStatus.values)
MAX_ID_LENGTH = MAX_NOTE_ID_LENGTH
MAX_KIND_LENGTH = 100
MAX_AUTHOR_LENGTH = 255
MAX_TAG_LENGTH = 100
MAX_TAGS = 100
MAX_SUPERSEDES = 100
SAVE_ATTEMPTS = 3  # see save_note_outcome

# Existing notes of a kind enter the index when search is enabled for it; the
# triggers of migration 0002 index every later note of that kind.
_BACKFILL_SQL = (
    "INSERT INTO notes_fts(rowid, body) SELECT id, body FROM notes_note WHERE namespace_kind = %s"
)
_PG_BACKFILL_SQL = (
    "INSERT INTO notes_fts(note_id, body) SELECT id, to_tsvector('simple', spaceduck_fold(body)) "
    "FROM notes_note WHERE namespace_kind = %s"
)


def backfill_sql() -> str:
    """Index the existing notes of one kind (parameter: the kind), on this database."""
    return _PG_BACKFILL_SQL if connection.vendor == "postgresql" else _BACKFILL_SQL


@dataclass(frozen=True)
class NoteSearchEnabled:
    kind: str
    newly_enabled: bool  # False when search was already on: the call changed nothing
    backfilled: int  # notes indexed by this call


# --- validation -------------------------------------------------------------


def check_text(value: object, *, field: str, max_length: int | None = None) -> str:
    """``value`` as a string SQLite can store and bind faithfully, or InvalidInput."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidInput(f"{field} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates, e.g. from a JSON "\ud800" escape
        raise InvalidInput(f"{field} is not valid Unicode text (lone surrogate)") from None
    if max_length is not None:
        check_length(value, field=field, limit=max_length)
    return value


def check_body(value: object) -> str:
    """A note's body: text, not empty, at most SPACEDUCK_MAX_NOTE_BODY_BYTES (UTF-8);
    the API, the admin's form and save_note all check it here."""
    text = check_text(value, field="body")
    if not text.strip():
        raise InvalidInput("body must not be empty")
    check_size(
        utf8_size(text),
        limit=settings.MAX_NOTE_BODY_BYTES,
        field="note body",
        setting="SPACEDUCK_MAX_NOTE_BODY_BYTES",
    )
    return text


def check_status(value: object) -> str:
    if value not in STATUSES:
        raise InvalidInput(f"status {value!r} is not one of {', '.join(STATUSES)}")
    return str(value)


def check_namespace(value: object) -> str:
    try:
        return normalize_namespace(check_text(value, field="namespace"))
    except InvalidNamespace as exc:
        raise InvalidInput(f"invalid namespace: {exc}") from None


def check_namespace_kind(value: object) -> str:
    if value not in NAMESPACE_KINDS:
        raise InvalidInput(f"kind {value!r} is not a namespace kind: {', '.join(NAMESPACE_KINDS)}")
    return str(value)


def check_note_id(value: object, *, field: str = "id") -> str:
    text = check_text(value, field=field, max_length=MAX_ID_LENGTH)
    if not text:
        raise InvalidInput(f"{field} must not be empty")
    # The id is a URL path segment (/api/notes/{id}): no slash, no spaces, no controls.
    if "/" in text or any(ch.isspace() or ord(ch) < 32 for ch in text):
        raise InvalidInput(f"{field} {text!r} must not contain '/', spaces or control characters")
    return text


def _check_string_list(value: object, *, field: str, max_items: int, max_length: int) -> list[str]:
    # A bare string is iterable too: supersedes="abc" must not become ["a", "b", "c"].
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInput(f"{field} must be a list of strings")
    items = [check_text(item, field=f"{field} item", max_length=max_length) for item in value]
    if len(items) > max_items:
        raise InvalidInput(f"{field} has more than {max_items} items")
    return items


def _check_tags(value: object) -> list[str]:
    tags = _check_string_list(value, field="tags", max_items=MAX_TAGS, max_length=MAX_TAG_LENGTH)
    if any(not tag.strip() for tag in tags):
        raise InvalidInput("tags must not be empty strings")
    return tags


def _check_supersedes(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInput("supersedes must be a list of note ids")
    ids = [check_note_id(item, field="supersedes item") for item in value]
    unique = list(dict.fromkeys(ids))  # duplicates collapse, order kept
    if len(unique) > MAX_SUPERSEDES:
        raise InvalidInput(f"supersedes has more than {MAX_SUPERSEDES} notes")
    return unique


def _check_provenance(value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInput("provenance must be an object (a dict) or null")
    try:
        # Strict JSON: no NaN/Infinity (SQLite's JSON functions reject them), no
        # lone surrogates, only string keys, only JSON types.
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"provenance must be JSON-serialisable: {exc}") from None
    if any(not isinstance(key, str) for key in value):
        raise InvalidInput("provenance keys must be strings")
    return check_json_value(value, field="provenance")


# --- notes --------------------------------------------------------------------


@dataclass(frozen=True)
class SavedNote:
    note: Note
    created: bool  # False when the id existed: the stored note came back unchanged


# Statuses that decide a note: setting them, or leaving them, is an approval.
DECIDED: frozenset[str] = frozenset({NoteStatus.ACCEPTED, NoteStatus.REJECTED})


def gated_status(*, requested: str | None, supersedes: bool, can_approve: bool) -> str:
    """The approval gate for a new note: knowledge replaces knowledge only with approval.

    Without ``approve``, a superseding note defaults to pending, and asking for
    accepted or rejected is refused.
    """
    if supersedes and not can_approve:
        if requested is None:
            return NoteStatus.PENDING
        if requested in DECIDED:
            raise PermissionDenied(
                f"a note that supersedes others can be saved as {requested!r} only with "
                "the 'approve' permission; save it as pending for review"
            )
    return NoteStatus.ACCEPTED if requested is None else requested


def status_change_needs_approval(current: str, new: str) -> bool:
    """Accepting or rejecting is approval; so is reopening a decided note, which
    would otherwise let a write-only caller hide accepted knowledge."""
    return new in DECIDED or current in DECIDED


def save_note(
    namespace: str,
    body: str,
    kind: str | None = None,
    tags: Iterable[str] | None = None,
    author: str | None = None,
    status: str = "accepted",
    supersedes: Iterable[str] = (),
    provenance: dict[str, Any] | None = None,
    id: str | None = None,
) -> Note:
    """Insert a note and its supersession edges; saving an existing id returns it unchanged."""
    return save_note_outcome(
        namespace=namespace,
        body=body,
        kind=kind,
        tags=tags,
        author=author,
        status=status,
        supersedes=supersedes,
        provenance=provenance,
        id=id,
    ).note


def save_note_outcome(
    *,
    namespace: str,
    body: str,
    kind: str | None = None,
    tags: Iterable[str] | None = None,
    author: str | None = None,
    status: str = "accepted",
    supersedes: Iterable[str] = (),
    provenance: dict[str, Any] | None = None,
    id: str | None = None,
) -> SavedNote:
    """save_note, also telling whether this call created the note (the API answers 201 or 200)."""
    fields = _note_fields(
        namespace=namespace,
        body=body,
        kind=kind,
        tags=tags,
        author=author,
        status=status,
        provenance=provenance,
    )
    # A note is knowledge its writer asks to keep: a credential is refused, never marked.
    credentials.screened("note", fields)
    uid = new_uid() if id is None else check_note_id(id)
    target_uids = _check_supersedes(supersedes)
    if uid in target_uids:
        raise InvalidInput(f"note {uid!r} cannot supersede itself")
    # IMMEDIATE transactions take the write lock at BEGIN, so "look up, else insert" is
    # one step for every process sharing the SQLite file. Elsewhere a writer may lose the
    # race on the unique key: the namespace's note of that id (and only its edges) then
    # stands, found by the next attempt. An attempt can lose on the bare id (another
    # namespace took it: the next one takes the qualified key) and then on the qualified
    # key (a racer of the same namespace took it): the third finds that racer's note.
    for attempt in range(SAVE_ATTEMPTS):
        try:
            with transaction.atomic():
                return _save_once(uid, fields, target_uids)
        except IntegrityError:
            if attempt == SAVE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _save_once(uid: str, fields: dict[str, Any], target_uids: list[str]) -> SavedNote:
    # The id is looked up in the note's namespace only: another namespace's note of
    # the same id is neither returned nor told of (this one takes a qualified key).
    # One read of both keys, so "is it ours, else is the bare id taken" is one snapshot:
    # a racer of the same namespace that commits in between fails on the unique key and
    # the retry finds its note, instead of a second note taking the qualified key.
    canonical = fields["namespace"]
    rows = list(Note.objects.filter(uid__in=client_keys(canonical, uid)))
    own = [note for note in rows if note.namespace == canonical]
    if own:
        return SavedNote(own[0], created=False)
    targets = _supersession_targets(target_uids, namespace=canonical)
    key = namespaced_key(canonical, uid) if rows else uid
    note = Note.objects.create(uid=key, **fields)
    NoteSupersession.objects.bulk_create(
        NoteSupersession(note=note, target=target, created_at=note.created_at) for target in targets
    )
    if note.status == NoteStatus.PENDING:
        _tell_pending(note)
    return SavedNote(note, created=True)


def _tell_pending(note: Note) -> None:
    """A reviewer is told a note waits (spaceduck.core.webhooks), once the save commits:
    its id, namespace and where to decide, not what it says."""
    if not webhooks.enabled():
        return
    data = {
        "note_id": note.client_id,
        "namespace": note.namespace,
        "kind": note.kind,
        "author": note.author,
        "url": f"{reverse('notes:browse')}{quote(note.client_id, safe='')}/{note.page_query}",
    }
    webhooks.notify(webhooks.NOTE_PENDING, data)


def note_write_check(
    *,
    namespace: str,
    body: str,
    kind: str | None = None,
    tags: Iterable[str] | None = None,
    author: str | None = None,
    status: str = "accepted",
    supersedes: Iterable[str] = (),
) -> None:
    """The checks of save_note_outcome for a new note, without writing: InvalidInput
    when the save would refuse it. Forms call it to show a refusal beside the input."""
    fields = _note_fields(
        namespace=namespace,
        body=body,
        kind=kind,
        tags=tags,
        author=author,
        status=status,
        provenance=None,
    )
    credentials.screened("note", fields)
    _supersession_targets(_check_supersedes(supersedes), namespace=fields["namespace"])


def _note_fields(
    *,
    namespace: object,
    body: object,
    kind: object,
    tags: object,
    author: object,
    status: object,
    provenance: object,
) -> dict[str, Any]:
    """The validated columns of a new note."""
    canonical = check_namespace(namespace)
    text = check_body(body)
    return {
        "namespace": canonical,
        "namespace_kind": canonical.partition(":")[0],
        "kind": check_text("" if kind is None else kind, field="kind", max_length=MAX_KIND_LENGTH),
        "body": text,
        "tags": _check_tags([] if tags is None else tags),
        "author": check_text(
            "" if author is None else author, field="author", max_length=MAX_AUTHOR_LENGTH
        ),
        "status": check_status(status),
        "provenance": _check_provenance(provenance),
    }


def notes_with_id(id: str, namespaces: Iterable[str] | None = None) -> list[Note]:
    """The notes whose client's id is ``id``, in ``namespaces`` (None: in any namespace),
    the one stored under the bare id first (the id's first owner), then oldest first.
    With namespaces, one indexed read of their keys; without, the qualified keys are found
    by their suffix (only ids used in several namespaces have them)."""
    uid = check_note_id(id)
    if namespaces is not None:
        scope = list(namespaces)
        keys = {key for namespace in scope for key in client_keys(namespace, uid)}
        rows = Note.objects.filter(uid__in=keys, namespace__in=scope)
    else:
        suffix = f"{KEY_MARK}{uid}"
        rows = Note.objects.filter(Q(uid=uid) | Q(uid__startswith=KEY_MARK, uid__endswith=suffix))
    # SQLite's LIKE ignores ASCII case: keep exact matches only.
    found = [note for note in rows.order_by("created_at", "id") if note.client_id == uid]
    return sorted(found, key=lambda note: note.qualified)


def note_by_id(id: str, namespace: str | None = None) -> Note:
    """The note with the client's id ``id``: the one of ``namespace`` if given; else the
    one stored under the bare id, or the only one. NotFound when there is none; Conflict,
    naming the namespaces to choose from, when several namespaces qualify the id."""
    scope = None if namespace is None else [check_namespace(namespace)]
    return pick_note(id, notes_with_id(id, scope))


def pick_note(id: str, candidates: list[Note]) -> Note:
    """The note an id without a namespace names among ``candidates`` (notes_with_id's
    order, already limited to what the caller may read)."""
    if not candidates:
        raise NotFound(f"note {id!r} not found")
    if len(candidates) == 1 or not candidates[0].qualified:
        return candidates[0]
    namespaces = ", ".join(repr(note.namespace) for note in candidates)
    raise Conflict(f"note id {id!r} is used in namespaces {namespaces}; name the namespace")


def _supersession_targets(uids: list[str], *, namespace: str) -> list[Note]:
    """The notes named by ``uids``, all of which must live in ``namespace``."""
    if not uids:
        return []
    keys = [key for uid in uids for key in client_keys(namespace, uid)]
    rows = Note.objects.filter(uid__in=keys, namespace=namespace)
    found = {n.client_id: n for n in rows}
    missing = [uid for uid in uids if uid not in found]
    if missing:
        # One message for "missing" and "in another namespace": a note may only
        # hide its own namespace's knowledge, and the error must not reveal
        # which ids exist elsewhere.
        raise InvalidInput(
            f"supersedes: no note {', '.join(map(repr, missing))} in namespace {namespace!r} "
            "(a note can only supersede existing notes of its own namespace)"
        )
    return [found[uid] for uid in uids]


def set_note_status(id: str, status: str, by: str, *, namespace: str | None = None) -> Note:
    """The only mutation of a note: its status, recording who changed it and when. The
    note is named by its client's id (and namespace, see note_by_id)."""
    check_note_id(id)
    new_status, by = _status_change(status, by)
    return set_status_of(note_by_id(id, namespace), new_status, by)


def set_status_of(note: Note, status: str, by: str) -> Note:
    """set_note_status for a note the caller has already found (and may change)."""
    new_status, by = _status_change(status, by)
    with transaction.atomic():
        updated = Note.objects.filter(pk=note.pk).update(
            status=new_status, status_by=by, status_at=timezone.now()
        )
        if not updated:
            raise NotFound(f"note {note.client_id!r} not found")
        return Note.objects.get(pk=note.pk)


def _status_change(status: str, by: str) -> tuple[str, str]:
    new_status = check_status(status)
    by = check_text(by, field="by", max_length=MAX_AUTHOR_LENGTH)
    if not by.strip():
        raise InvalidInput("by must name who changes the status")
    return new_status, by


# --- search -------------------------------------------------------------------


def enable_note_search(kind: str) -> NoteSearchEnabled:
    """Index the notes of a namespace kind from now on; idempotent, backfills once."""
    kind = check_namespace_kind(kind)
    try:
        with transaction.atomic():
            _, created = NoteSearchKind.objects.get_or_create(kind=kind)
            if not created:
                return NoteSearchEnabled(kind=kind, newly_enabled=False, backfilled=0)
            # Same transaction as the row that switches the triggers on: every
            # note is indexed exactly once, by the backfill or by a trigger.
            with connection.cursor() as cursor:
                cursor.execute(backfill_sql(), [kind])
                backfilled = max(cursor.rowcount, 0)
    except IntegrityError:  # a concurrent caller enabled it first
        return NoteSearchEnabled(kind=kind, newly_enabled=False, backfilled=0)
    return NoteSearchEnabled(kind=kind, newly_enabled=True, backfilled=backfilled)
