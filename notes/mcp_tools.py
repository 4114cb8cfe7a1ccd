"""MCP tools for notes (spaceduck.ops.mcp_server serves them).

As notes.api, for the MCP session's API token: the approval gate applies, so a
note from a token without ``approve`` that supersedes other notes is saved as
pending, for a person to accept or reject in the dashboard.

No ``from __future__ import annotations``: the SDK reads these signatures' types.
"""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from notes import selectors, services
from notes.api import NoteOut, NoteSearchOut, granted_namespaces, notes_out
from spaceduck.core.access import actor, require_permission, resolve_namespace
from spaceduck.core.mcp_base import NamespaceArg, current_token, dump, tool_errors
from spaceduck.core.namespaces import NAMESPACE_KINDS

NoteId = Annotated[str, Field(min_length=1, max_length=services.MAX_ID_LENGTH)]


@tool_errors
def save_note(
    body: Annotated[str, Field(description="The note's text (markdown).", min_length=1)],
    namespace: NamespaceArg = None,
    kind: Annotated[
        str | None,
        Field(
            description="What sort of note, e.g. 'decision', 'runbook'.",
            max_length=services.MAX_KIND_LENGTH,
        ),
    ] = None,
    tags: Annotated[list[str] | None, Field(max_length=services.MAX_TAGS)] = None,
    supersedes: Annotated[
        list[NoteId] | None,
        Field(
            description="Ids of notes this one replaces. Unless your token may approve, "
            "the note then waits as pending until a person accepts it.",
            max_length=100,
        ),
    ] = None,
    id: Annotated[
        NoteId | None, Field(description="Your id for the note; saving it again is a no-op.")
    ] = None,
) -> dict[str, Any]:
    """Save a note: durable, human-reviewable knowledge (decisions, runbooks, findings).
    The answer's status says whether it is accepted or pending review."""
    token = current_token()
    canonical = resolve_namespace(token, namespace, "write")
    status = services.gated_status(
        requested=None, supersedes=bool(supersedes), can_approve=token.has_permission("approve")
    )
    saved = services.save_note_outcome(
        namespace=canonical,
        body=body,
        kind=kind,
        tags=tags,
        author=actor(token),
        status=status,
        supersedes=supersedes or (),
        id=id,
    )
    return {**dump(NoteOut, notes_out([saved.note])[0]), "created": saved.created}


@tool_errors
def search_notes(
    query: Annotated[str, Field(description="Words to look for.", min_length=1)],
    namespace: NamespaceArg = None,
    kind: Annotated[
        str | None,
        Field(
            description="Search every namespace of this kind your token may read "
            f"({', '.join(NAMESPACE_KINDS)}) instead of one namespace.",
        ),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=selectors.MAX_SEARCH_LIMIT)] = 20,
    include_pending: Annotated[
        bool, Field(description="Also notes awaiting review (default: accepted only).")
    ] = False,
) -> dict[str, Any]:
    """Search notes by keywords, best match first (accepted notes unless asked)."""
    token = current_token()
    namespaces: list[str] | None = None
    canonical: str | None = None
    if namespace is None and kind is not None:  # the kind, within the token's grants
        kind = services.check_namespace_kind(kind)
        require_permission(token, "read")
        namespaces = granted_namespaces(token, kind)
    else:
        canonical = resolve_namespace(token, namespace, "read")
        kind = canonical.partition(":")[0]
    statuses = ["accepted", "pending"] if include_pending else ["accepted"]
    hits = selectors.search_note_hits(
        kind, query, limit, canonical, statuses, False, namespaces=namespaces
    )
    found = notes_out([hit.note for hit in hits])
    body = {"notes": [{**out, "score": hit.score} for out, hit in zip(found, hits, strict=True)]}
    return dump(NoteSearchOut, body)


def register(server: MCPServer) -> None:
    server.add_tool(
        save_note,
        title="Save a note",
        annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False),
    )
    server.add_tool(
        search_notes,
        title="Search notes",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
