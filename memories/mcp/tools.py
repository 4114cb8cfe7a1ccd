"""MCP tools for memories, facts and context (spaceduck.ops.mcp_server serves them).

Each tool does what its REST route in memories.api does, for the MCP session's API
token (spaceduck.core.mcp_base.current_token): the same grant and permission checks, the
same services, answers shaped by the same schemas. The descriptions are written
for the model that calls them.

No ``from __future__ import annotations`` here: the SDK reads these signatures'
types at registration to build each tool's JSON schema.
"""

from typing import Annotated, Any, Literal

from django.conf import settings
from django.utils import timezone
from mcp.server import MCPServer
from mcp.types import ToolAnnotations
from ninja.errors import HttpError
from pydantic import Field, JsonValue

from memories.api.context import ContextOut, context_out
from memories.api.facts import FactIn, FactOut
from memories.api.memories import (
    VALID_FROM,
    VALID_UNTIL,
    MemoryIn,
    MemoryListOut,
    SearchOut,
    WriteDecisionOut,
    decision_out,
    hits_out,
    visible_memory,
)
from memories.api.threads import MessageSavedOut, message_saved_out, visible_thread
from memories.extraction.types import IMPORTANCE, candidate_from_api
from memories.models import MemoryKind, MemoryStatus
from memories.recall.context import active_constraints, build_context
from memories.recall.hybrid import RecallQuery, recall
from memories.store import selectors
from memories.write import services
from memories.write.ingest import memory_write, message_ingest
from spaceduck.core import runtime
from spaceduck.core.access import actor, require_namespace, resolve_namespace
from spaceduck.core.limits import MAX_SQL_INT
from spaceduck.core.mcp_base import NamespaceArg, current_token, dump, resource_errors, tool_errors
from spaceduck.models import ApiToken

ThreadId = Annotated[
    str,
    Field(description="A conversation thread's id, as returned by remember.", max_length=64),
]
# The models' choices, as enums in the schema (a model picks from them).
Kind = Literal[tuple(MemoryKind.values)]  # type: ignore[valid-type]
Status = Literal[tuple(MemoryStatus.values)]  # type: ignore[valid-type]
Importance = Literal[tuple(IMPORTANCE)]  # type: ignore[valid-type]


def _message_thread(token: ApiToken, namespace: str | None, thread_id: str | None) -> str:
    """The thread a remembered message goes to: the one named, else a new one."""
    if thread_id is None:
        canonical = resolve_namespace(token, namespace, "write")
        return services.create_thread(canonical, title="MCP conversation", actor=actor(token)).id
    thread = visible_thread(token, thread_id, "write")
    if namespace is not None and resolve_namespace(token, namespace, "write") != thread.namespace:
        raise HttpError(404, f"thread {thread_id!r} not found")
    return thread.id


@tool_errors
def remember(
    content: Annotated[
        str,
        Field(
            description="mode=message: one conversation turn, verbatim. mode=memory: one "
            "self-contained statement, e.g. 'The user is allergic to peanuts.'",
            min_length=1,
        ),
    ],
    mode: Annotated[
        Literal["message", "memory"],
        Field(
            description="message (default): save a conversation turn; the service extracts "
            "what is worth remembering in the background. memory: store this statement now; "
            "the answer is the write path's decision (stored, duplicate, superseded, or "
            "rejected with a reason)."
        ),
    ] = "message",
    namespace: NamespaceArg = None,
    thread_id: Annotated[
        str | None,
        Field(
            description="mode=message: the conversation this turn belongs to. Omit it to "
            "start a new thread; the answer's thread_id continues it.",
            max_length=64,
        ),
    ] = None,
    role: Annotated[
        Literal["user", "assistant"], Field(description="mode=message: who said it.")
    ] = "user",
    kind: Annotated[
        Kind,
        Field(
            description="mode=memory: fact (default; a durable truth), episode (something "
            "that happened) or procedure (how to do something, a rule or preference)."
        ),
    ] = "fact",
    importance: Annotated[
        Importance,
        Field(description="mode=memory: how much recall should favour it."),
    ] = "standard",
    valid_from: Annotated[str | None, Field(description=f"mode=memory: {VALID_FROM}")] = None,
    valid_until: Annotated[
        str | None,
        Field(description=f"mode=memory: {VALID_UNTIL} E.g. 'in Madrid until Friday'."),
    ] = None,
) -> dict[str, Any]:
    """Remember something: a conversation message (extracted in the background) or a
    memory statement (decided now: stored, a duplicate, superseding an older memory, or
    rejected). Secrets and instructions aimed at the assistant are never stored."""
    token = current_token()
    if mode == "message" and (valid_from or valid_until):
        raise HttpError(422, "valid_from and valid_until are for mode=memory")
    if mode == "message":
        thread = _message_thread(token, namespace, thread_id)
        saved = message_saved_out(message_ingest(thread, role, content))
        return {"mode": "message", **dump(MessageSavedOut, saved)}
    if thread_id is not None:
        raise HttpError(422, "thread_id is for mode=message; a memory belongs to no thread")
    canonical = resolve_namespace(token, namespace, "write")
    validity = {"valid_from": valid_from, "valid_until": valid_until}
    payload = MemoryIn(
        namespace=canonical,
        kind=kind,
        content=content,
        importance=importance,
        **{name: value for name, value in validity.items() if value is not None},
    )
    verdict = memory_write(
        candidate_from_api(payload.dict()), namespace=canonical, actor=actor(token)
    )
    return {"mode": "memory", **dump(WriteDecisionOut, decision_out(verdict))}


@tool_errors
def recall_memories(
    query: Annotated[
        str,
        Field(
            description="What to recall, in plain words (e.g. 'where does the user live').",
            min_length=1,
            pattern=r"\S",
        ),
    ],
    namespace: NamespaceArg = None,
    top_k: Annotated[int, Field(ge=1, le=100, description="How many memories at most.")] = 10,
    kinds: Annotated[
        list[Kind] | None, Field(description="Only these kinds (default: all).")
    ] = None,
    thread_id: Annotated[
        str | None,
        Field(description="Also recall this thread's thread-scoped memories.", max_length=64),
    ] = None,
    explain: Annotated[
        bool, Field(description="Add each hit's score breakdown (why it was recalled).")
    ] = False,
) -> dict[str, Any]:
    """Recall the active memories that best match a query (hybrid: meaning + keywords,
    weighted by importance, confidence and recency), best first."""
    token = current_token()
    canonical = resolve_namespace(token, namespace, "read")
    if not runtime.memory_enabled():
        return {"memories": [], "memory": "disabled"}
    hits = recall(
        RecallQuery(
            namespace=canonical,
            text=query,
            top_k=top_k,
            kinds=list(kinds or []),
            statuses=[MemoryStatus.ACTIVE],
            thread_id=thread_id,
            exclude_task_memories=None,  # an agent's default, as the REST search's
        )
    )
    return dump(SearchOut, {"memories": hits_out(hits, explain=explain), "memory": "enabled"})


@tool_errors
def get_context(
    thread_id: ThreadId,
    query: Annotated[
        str | None, Field(description="What to recall for (default: the last user message).")
    ] = None,
    namespace: Annotated[
        str | None,
        Field(description="The thread's namespace (default: the thread's own).", max_length=300),
    ] = None,
    memory_budget: Annotated[
        int | None, Field(ge=0, le=1_000_000, description="Tokens for memories; default 2000.")
    ] = None,
    history_budget: Annotated[
        int | None, Field(ge=0, le=1_000_000, description="Tokens for history; default 4000.")
    ] = None,
) -> dict[str, Any]:
    """The context for your next turn in a thread: a system block with the relevant
    memories and the namespace's constraints, plus the recent messages that fit."""
    token = current_token()
    thread = visible_thread(token, thread_id)
    if namespace is not None and resolve_namespace(token, namespace, "read") != thread.namespace:
        raise HttpError(404, f"thread {thread_id!r} not found")
    result = build_context(
        namespace=thread.namespace,
        thread_id=thread.id,
        query=query,
        memory_budget=memory_budget,
        history_budget=settings.CONTEXT_HISTORY_BUDGET
        if history_budget is None
        else history_budget,
    )
    return dump(ContextOut, context_out(result, compacted=False))


@tool_errors
def forget(
    memory_id: Annotated[
        int, Field(ge=1, le=MAX_SQL_INT, description="The memory's id (from recall or list).")
    ],
) -> dict[str, Any]:
    """Delete a memory for good (its history records who deleted it)."""
    token = current_token()
    memory = visible_memory(token, memory_id, "write")
    services.memory_delete(memory=memory, actor=actor(token))
    return {"deleted": memory_id}


@tool_errors
def list_memories(
    namespace: NamespaceArg = None,
    kinds: Annotated[
        list[Kind] | None, Field(description="Only these kinds (default: all).")
    ] = None,
    status: Annotated[
        list[Status] | None,
        Field(description="Only these statuses (default: all). candidate: awaiting review."),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=selectors.MEMORY_LIST_MAX)] = 50,
) -> dict[str, Any]:
    """Memories of a namespace, most recently updated first."""
    token = current_token()
    canonical = resolve_namespace(token, namespace, "read")
    memories = selectors.memory_list(
        namespaces=[canonical], kinds=kinds or [], statuses=status or [], limit=limit
    )
    return dump(MemoryListOut, {"memories": list(memories)})


FactKey = Annotated[
    str,
    Field(
        description="The fact's key, e.g. 'preferred_language' (may contain '/').",
        min_length=1,
        max_length=selectors.MAX_FACT_KEY_LENGTH,
    ),
]


@tool_errors
def set_fact(
    key: FactKey,
    value: Annotated[JsonValue, Field(description="Any JSON value.")],
    namespace: NamespaceArg = None,
    ttl_ms: Annotated[
        int | None, Field(ge=0, description="Forget it after this many milliseconds.")
    ] = None,
) -> dict[str, Any]:
    """Set a key-value fact (exact, structured state such as settings or counters);
    replaces the key's previous value."""
    token = current_token()
    canonical = resolve_namespace(token, namespace, "write")
    payload = FactIn(value=value, ttl_ms=ttl_ms)
    fact = services.set_fact(
        canonical, key, payload.value, ttl_ms=payload.ttl_ms, actor=actor(token)
    )
    return dump(FactOut, fact)


@tool_errors
def get_fact(key: FactKey, namespace: NamespaceArg = None) -> dict[str, Any]:
    """Get a key-value fact set earlier with set_fact."""
    token = current_token()
    canonical = resolve_namespace(token, namespace, "read")
    fact = selectors.get_fact(canonical, key)
    if fact is None:  # missing and expired look the same
        raise HttpError(404, f"fact {key!r} not found in namespace {canonical!r}")
    return dump(FactOut, fact)


@resource_errors
def constraints(namespace: str) -> str:
    """The rules every agent must follow in a namespace: its active constraint procedures
    (global scope), most important first, as get_context puts them in its system block."""
    token = current_token()
    canonical = require_namespace(token, namespace, "read")
    rules = active_constraints(
        namespace=canonical,
        thread_id="",
        project_id=None,
        task_id=None,
        exclude_task_memories=None,
        now=timezone.now(),
    )
    lines = [f"- {memory.content} (memory {memory.pk})" for memory in rules]
    return "\n".join([f"# Constraints of {canonical}", *(lines or ["(none)"])])


READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def register(server: MCPServer) -> None:
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    server.add_tool(remember, title="Remember", annotations=writes)
    server.add_tool(recall_memories, name="recall", title="Recall memories", annotations=READ_ONLY)
    server.add_tool(get_context, title="Context for the next turn", annotations=READ_ONLY)
    server.add_tool(
        forget,
        title="Forget a memory",
        annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True),
    )
    server.add_tool(list_memories, title="List memories", annotations=READ_ONLY)
    server.add_tool(
        set_fact,
        title="Set a fact",
        annotations=ToolAnnotations(idempotent_hint=True, destructive_hint=False),
    )
    server.add_tool(get_fact, title="Get a fact", annotations=READ_ONLY)
    server.resource(
        "spaceduck://namespaces/{namespace}/constraints",
        title="Constraints of a namespace",
        mime_type="text/markdown",
    )(constraints)
