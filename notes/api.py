"""JSON API for notes: validate, authorise, call services/selectors, shape output.

The approval gate lives here because it is about who calls: a token without
``approve`` may save notes, but it cannot make knowledge replace knowledge on
its own (a superseding note from it is saved as ``pending``), nor accept,
reject, or reopen a decided note. Deciding is what ``approve`` is for: a token
with only ``approve`` may decide a note's status (and gets the note back).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from django.conf import settings
from django.http import HttpRequest
from ninja import Field, Path, Query, Router, Schema, Status
from ninja.errors import HttpError

from notes import selectors, services
from notes.models import Note
from spaceduck.core.access import (
    Caller,
    actor,
    claimed_author,
    request_token,
    require_namespace,
    require_permission,
)
from spaceduck.core.errors import NotFound, error_responses
from spaceduck.core.limits import ApiNamespace, choices_pattern, documented
from spaceduck.core.namespaces import NAMESPACE_KINDS, WHITESPACE
from spaceduck.core.schemas import OutSchema
from spaceduck.models import ApiToken

router = Router(tags=["notes"])

READ_ERRORS = error_responses(401, 403, 404, 422)
WRITE_ERRORS = error_responses(400, 401, 403, 404, 409, 413, 422)

# Note ids belong to their namespace: a token granted several namespaces that use the
# same id names the one it means (without it, the id's first owner, or 409 naming them).
NamespaceOfId = Annotated[
    ApiNamespace | None,
    Query(
        description="The note's namespace, when several of your namespaces use this id "
        "(default: the only one, or the id's first owner)."
    ),
]

# --- Input types: what notes.services checks, as the schema says it (the services'
# messages answer; these only document).
_NO_NUL = "^[^\\x00]*$"
_NOT_BLANK = f"^[^\\x00]*[^\\x00{WHITESPACE}][^\\x00]*$"
NoteId = Annotated[
    str,
    documented(
        {
            "minLength": 1,
            "maxLength": services.MAX_ID_LENGTH,
            "pattern": f"^[^/\\x00-\\x1f{WHITESPACE}]+$",
            "description": "No '/', spaces or control characters.",
        }
    ),
]
NoteBody = Annotated[
    str,
    documented(
        {
            "maxLength": settings.MAX_NOTE_BODY_BYTES,
            "pattern": _NOT_BLANK,
            "description": "Not blank; at most SPACEDUCK_MAX_NOTE_BODY_BYTES bytes of UTF-8.",
        }
    ),
]
NoteTag = Annotated[str, documented({"maxLength": services.MAX_TAG_LENGTH, "pattern": _NOT_BLANK})]
NoteStatusIn = Annotated[str, documented({"enum": list(services.STATUSES)})]
NamespaceKind = Annotated[str, documented({"enum": list(NAMESPACE_KINDS)})]
StatusFilter = Annotated[
    str,
    documented(
        {
            "pattern": choices_pattern([*services.STATUSES, selectors.ANY_STATUS], blanks=False),
            "description": "Comma-separated statuses, or 'any'. Default: accepted.",
        }
    ),
]


class NoteIn(Schema):
    namespace: ApiNamespace
    body: NoteBody
    kind: (
        Annotated[str, documented({"maxLength": services.MAX_KIND_LENGTH, "pattern": _NO_NUL})]
        | None
    ) = None
    tags: Annotated[list[NoteTag], Field(max_length=services.MAX_TAGS)] | None = None
    author: (
        Annotated[str, documented({"maxLength": services.MAX_AUTHOR_LENGTH, "pattern": _NO_NUL})]
        | None
    ) = Field(
        None,
        description="Defaults to the token, as `token:<name>`; if given, that or a name "
        "under it, `token:<name>/<agent>` (any other author is refused with 403).",
    )
    status: NoteStatusIn | None = Field(
        None,
        description="accepted (default), pending or rejected. Without the `approve` "
        "permission a note with `supersedes` defaults to pending and cannot be "
        "saved as accepted or rejected.",
    )
    supersedes: list[NoteId] | None = Field(
        None, description="Ids of notes of the same namespace (at most 100)."
    )
    provenance: dict[str, Any] | None = None
    id: NoteId | None = Field(None, description="Your id for the note; saving it again is a no-op.")


class NoteOut(OutSchema):
    id: str
    namespace: str
    kind: str
    body: str
    tags: list[str]
    author: str
    status: str
    status_by: str
    status_at: datetime | None
    provenance: dict[str, Any] | None
    created_at: datetime
    supersedes: list[str]


class NoteListOut(OutSchema):
    notes: list[NoteOut]


class NoteHitOut(NoteOut):
    score: float = Field(description="Higher is a better match (negated BM25).")


class NoteSearchOut(OutSchema):
    notes: list[NoteHitOut]


class StatusIn(Schema):
    status: NoteStatusIn


class SearchEnabledOut(OutSchema):
    kind: str
    enabled: bool
    newly_enabled: bool
    backfilled: int


def _note_out(note: Note, supersedes: list[str]) -> dict[str, Any]:
    return {
        "id": note.client_id,  # the id the client chose, not the stored key
        "namespace": note.namespace,
        "kind": note.kind,
        "body": note.body,
        "tags": note.tags,
        "author": note.author,
        "status": note.status,
        "status_by": note.status_by,
        "status_at": note.status_at,
        "provenance": note.provenance,
        "created_at": note.created_at,
        "supersedes": supersedes,
    }


def notes_out(notes: list[Note]) -> list[dict[str, Any]]:
    edges = selectors.note_supersedes(notes)
    return [_note_out(note, edges[note.pk]) for note in notes]


def visible_note(
    request: Caller,
    note_id: str,
    permission: str | None = "read",
    namespace: str | None = None,
) -> Note:
    """The note if the token is granted its namespace; otherwise 404, exactly like a
    missing note, so ids in other namespaces cannot be probed (another namespace's note
    of the same id is never looked at). Then 403 without ``permission`` (None: the
    caller checks it). ``namespace`` picks among the token's namespaces using the id."""
    token = request_token(request)
    scope = None if namespace is None else [services.check_namespace(namespace)]
    if scope is None and not any(grant.endswith("*") for grant in token.namespaces):
        scope = list(token.namespaces)
    candidates = [
        note
        for note in services.notes_with_id(note_id, scope)
        if token.grants_namespace(note.namespace)
    ]
    try:
        note = services.pick_note(note_id, candidates)
    except NotFound:
        raise HttpError(404, f"note {note_id!r} not found") from None
    if permission is not None:
        require_permission(request, permission)
    return note


# --- search (declared before /{note_id} so "search" is not read as an id) ------


def granted_namespaces(token: ApiToken, kind: str) -> list[str] | None:
    """The token's namespaces of ``kind`` (None: every namespace of it)."""
    if "*" in token.namespaces or f"{kind}:*" in token.namespaces:
        return None
    return [grant for grant in token.namespaces if grant.partition(":")[0] == kind]


@router.post(
    "/search/{kind}/enable", response={200: SearchEnabledOut, **error_responses(401, 403, 422)}
)
def enable_search(request: HttpRequest, kind: Annotated[NamespaceKind, Path(...)]) -> Any:
    # Enabling indexes every namespace of the kind and adds work to every later
    # write in it, so it takes a grant on the whole kind, not on one namespace.
    kind = services.check_namespace_kind(kind)
    token = request_token(request)
    if granted_namespaces(token, kind) is not None:
        raise HttpError(
            403,
            f"enabling note search affects every {kind} namespace; "
            f"it needs a '{kind}:*' grant and the 'write' permission",
        )
    require_permission(request, "write")
    result = services.enable_note_search(kind)
    return {
        "kind": result.kind,
        "enabled": True,
        "newly_enabled": result.newly_enabled,
        "backfilled": result.backfilled,
    }


@router.get("/search", response={200: NoteSearchOut, **READ_ERRORS})
def search(
    request: HttpRequest,
    kind: NamespaceKind,
    q: str,
    limit: int = Query(20, ge=1, le=selectors.MAX_SEARCH_LIMIT),
    namespace: ApiNamespace | None = None,
    status: StatusFilter | None = None,
    include_superseded: bool = False,
) -> Any:
    namespaces: list[str] | None = None
    if namespace is not None:
        namespace = require_namespace(request, namespace, "read")
    else:
        require_permission(request, "read")
        # Without a namespace the search spans the kind, limited to the token's grants.
        namespaces = granted_namespaces(request_token(request), kind)
    hits = selectors.search_note_hits(
        kind,
        q,
        limit,
        namespace,
        selectors.split_status_param(status),
        include_superseded,
        namespaces=namespaces,
    )
    notes = notes_out([hit.note for hit in hits])
    return {"notes": [{**out, "score": hit.score} for out, hit in zip(notes, hits, strict=True)]}


# --- notes --------------------------------------------------------------------


@router.post("", response={200: NoteOut, 201: NoteOut, **WRITE_ERRORS})
def create_note(request: HttpRequest, payload: NoteIn) -> Any:
    namespace = require_namespace(request, payload.namespace, "write")
    status = services.gated_status(
        requested=payload.status,
        supersedes=bool(payload.supersedes),
        can_approve=request_token(request).has_permission("approve"),
    )
    saved = services.save_note_outcome(
        namespace=namespace,
        body=payload.body,
        kind=payload.kind,
        tags=payload.tags,
        author=claimed_author(request, payload.author),
        status=status,
        supersedes=payload.supersedes or (),
        provenance=payload.provenance,
        id=payload.id,
    )
    return Status(201 if saved.created else 200, notes_out([saved.note])[0])


@router.get("", response={200: NoteListOut, **READ_ERRORS})
def list_notes(
    request: HttpRequest,
    namespace: ApiNamespace,
    status: StatusFilter | None = None,
    include_superseded: bool = False,
    kind: str | None = None,
) -> Any:
    canonical = require_namespace(request, namespace, "read")
    notes = selectors.list_notes(
        canonical,
        status=selectors.split_status_param(status),
        include_superseded=include_superseded,
        kind=kind,
    )
    return {"notes": notes_out(list(notes))}


# 409: several of the token's namespaces use the id, and none is its first owner.
@router.get("/{note_id}", response={200: NoteOut, **error_responses(401, 403, 404, 409, 422)})
def get_note(
    request: HttpRequest,
    note_id: Annotated[NoteId, Path(...)],
    namespace: NamespaceOfId = None,
) -> Any:
    return notes_out([visible_note(request, note_id, namespace=namespace)])[0]


@router.post("/{note_id}/status", response={200: NoteOut, **WRITE_ERRORS})
def set_status(
    request: HttpRequest,
    note_id: Annotated[NoteId, Path(...)],
    payload: StatusIn,
    namespace: NamespaceOfId = None,
) -> Any:
    """Deciding (accepting, rejecting, or reopening a decided note) needs only the
    `approve` permission; other changes need `write`."""
    new_status = services.check_status(payload.status)
    note = visible_note(request, note_id, None, namespace=namespace)
    needs_approval = services.status_change_needs_approval(note.status, new_status)
    require_permission(request, "approve" if needs_approval else "write")
    updated = services.set_status_of(note, new_status, by=actor(request))
    return notes_out([updated])[0]
