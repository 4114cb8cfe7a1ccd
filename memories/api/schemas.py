"""What the API's resource modules share: the errors each kind of route answers with,
the input types (the constraints the services and the gate check, as the schema says
them) and the helpers every router reads (the task and skill of a call)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from django.http import HttpRequest
from ninja import Field, Path
from pydantic import StrictFloat, StrictInt, StrictStr

from memories.extraction.types import CONFIDENCE, IMPORTANCE
from memories.models import (
    Memory,
    MemoryKind,
    MemoryScope,
    ProcedureSubtype,
)
from spaceduck.core.errors import error_responses
from spaceduck.core.limits import (
    MAX_CONTEXT_CHARS,
    MAX_SQL_INT,
    api_int,
    api_tags,
    api_text,
    memory_text_limits,
)

# The errors each kind of route can answer with (spaceduck.core.errors.ErrorOut).
READ_ERRORS = error_responses(401, 403, 404, 422)
WRITE_ERRORS = error_responses(400, 401, 403, 404, 413, 422)
DELETE_ERRORS = error_responses(401, 403, 404, 422)


def column_length(model: type[Any], name: str) -> int:
    """A CharField's max_length: the schema's maxLength is the column's size."""
    return int(model._meta.get_field(name).max_length)


# --- Input types: the constraints the services and the gate check, as the schema says them.

# A row id in the path (memories, extractions): a positive 64-bit integer.
RowId = Annotated[int, Path(..., ge=1, le=MAX_SQL_INT)]
# The lengths of a memory's fields: spaceduck.core.limits, which the forms and the services
# read too, refused in its words (``api_text``; the schema is built once, at import, from
# the settings of that moment).
_LIMITS = memory_text_limits()


def _memory_text(name: str, *, min_length: int = 0) -> Any:
    limit, source = _LIMITS[name]
    return api_text(limit, field=name, source=source, min_length=min_length)


ContentText = _memory_text("content", min_length=1)
TitleText = _memory_text("title")
SummaryText = _memory_text("summary")
Tags = api_tags()
ContextText = Annotated[StrictStr, Field(max_length=MAX_CONTEXT_CHARS)]
ScopeId = _memory_text("scope_id")
# A project's id where it is asked for as such (the context's project_id): the same limit.
ProjectId = api_text(_LIMITS["scope_id"][0], field="project_id", source=_LIMITS["scope_id"][1])
SourceId = Annotated[StrictStr, Field(max_length=column_length(Memory, "source_task_id"))]
# A number in [0, 1] (an integer too; a numeric string is not a number here).
Unit = Annotated[StrictFloat, Field(ge=0, le=1)] | Annotated[StrictInt, Field(ge=0, le=1)]
ImportanceIn = Unit | Literal[tuple(IMPORTANCE)]  # type: ignore[valid-type]
ConfidenceIn = Unit | Literal[tuple(CONFIDENCE)]  # type: ignore[valid-type]
KindIn = Literal[tuple(MemoryKind.values)]  # type: ignore[valid-type]
ScopeIn = Literal[tuple(MemoryScope.values)]  # type: ignore[valid-type]
SubtypeIn = Literal[("", *ProcedureSubtype.values)]  # type: ignore[valid-type]
# A task run's write budget; far beyond any real one, well inside 64 bits.
MAX_MEMORY_WRITES = 1_000_000
WriteBudget = api_int(ge=0, le=MAX_MEMORY_WRITES)


def task_and_skill(
    request: HttpRequest, task_id: str | None, skill_id: str | None
) -> tuple[str, str]:
    """Body fields win over the X-Spaceduck-Task / X-Spaceduck-Skill headers."""
    task = task_id if task_id is not None else request.headers.get("X-Spaceduck-Task", "")
    skill = skill_id if skill_id is not None else request.headers.get("X-Spaceduck-Skill", "")
    return task.strip(), skill.strip()


MemorySwitch = Annotated[
    Literal["enabled", "disabled"],
    Field(description="Settings > Memory: when disabled, agents are given no memories."),
]

# Task isolation (memories.recall.hybrid.visible_task_ids), as search and context document it.
EXCLUDE_TASK_MEMORIES = (
    "Task isolation. true: only memories written outside any task. false: without a task, "
    "also those written by scheduled tasks. Default (null): left out without a task; a "
    "task is given its own and the untasked ones, never another task's."
)
SOURCE_TASK_ID = (
    "The task asking (or the X-Spaceduck-Task header): it is given its own memories and "
    "those written outside any task. Empty: no task (an interactive caller)."
)
