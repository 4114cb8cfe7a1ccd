"""Domain errors raised by services; each front end maps them once.

The JSON API turns them into 4xx responses with ``{"detail": message}``
(spaceduck.ops.api), the CLI into one-line ``CommandError``s. Messages are written
for the caller: they say what was wrong and what is accepted.

``ErrorOut`` is that JSON shape, and ``error_responses`` declares it in the
OpenAPI schema for the status codes a route can answer with.
"""

from __future__ import annotations

from typing import Any

from ninja import Field, Schema


class ServiceError(ValueError):
    status_code = 400


class InvalidInput(ServiceError):
    status_code = 422


class MemoryOff(InvalidInput):
    """Memory is switched off (Settings > Memory): an agent's memory write is refused, 409.
    An InvalidInput, so every form that shows a refusal beside its input shows this one."""

    status_code = 409


class NotAuthenticated(ServiceError):
    """No valid token: the REST API answers this itself (401); the MCP tools raise it."""

    status_code = 401


class NotFound(ServiceError):
    status_code = 404


class PermissionDenied(ServiceError):
    status_code = 403


class Conflict(ServiceError):
    status_code = 409


class TooLarge(ServiceError):
    """A value over one of the size limits (spaceduck.core.limits); nothing was written."""

    status_code = 413


class FieldError(Schema):
    loc: list[str | int] = Field(description='Where, e.g. ["body", "content"], ["query", "limit"].')
    msg: str
    type: str


class ErrorOut(Schema):
    detail: str = Field(description="What was wrong, and what is accepted.")
    errors: list[FieldError] | None = Field(
        None, description="Request validation only (422): one entry per invalid field."
    )


# The reason phrases the OpenAPI schema shows for each status code.
ERROR_DESCRIPTIONS: dict[int, str] = {
    400: "Malformed request: the body is not valid JSON (or not UTF-8).",
    401: "No token, or an unknown or revoked one.",
    403: "The token lacks a permission (the message names it).",
    404: "Not found, or outside the token's namespaces (the same answer).",
    409: "Conflict with stored data.",
    413: "Over a size limit (the message names it); nothing was written.",
    422: "Invalid input (the message says which field and what is accepted).",
    502: "An upstream provider (the chat LLM) failed; nothing was changed.",
}


def error_responses(*codes: int) -> dict[int, Any]:
    """``{code: ErrorOut}`` for a route's ``response=``, so the schema declares its errors."""
    unknown = sorted(set(codes) - set(ERROR_DESCRIPTIONS))
    if unknown:
        raise ValueError(f"no description for status codes {unknown}")
    return dict.fromkeys(codes, ErrorOut)
