"""What every MCP tool shares: who is calling, and errors as tool errors.

The MCP front end (spaceduck.ops.mcp_server builds the server; each app's
``mcp_tools`` module holds its tools) does what the JSON API does for a request,
for the API token of the MCP session: the same grants and permissions
(spaceduck.core.access), the same services, the same messages. Tools are plain
functions; the SDK runs each call in a worker thread, where Django's ORM may be
used as in a request.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from django.db import close_old_connections
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from ninja.errors import HttpError
from pydantic import BaseModel, Field, ValidationError

from spaceduck.core.errors import NotAuthenticated, ServiceError
from spaceduck.core.limits import printable
from spaceduck.core.namespaces import MAX_ENCODED_LENGTH
from spaceduck.core.tokens import token_authenticate
from spaceduck.models import ApiToken

_F = TypeVar("_F", bound=Callable[..., Any])

UNKNOWN_TOKEN = (
    "this API token is unknown, revoked or expired; ask the service's operator for a new "
    "one (the dashboard's Tokens page, or python manage.py token create ...)"
)


# The token a stdio server acts for: one client per process, given at start.
_stdio_secret: str | None = None


def set_stdio_token(secret: str | None) -> None:
    global _stdio_secret  # the process's one identity, set once at start
    _stdio_secret = secret


def current_token() -> ApiToken:
    """The calling session's API token, checked again on every call.

    Over HTTP it is the request's Bearer token (the SDK's auth middleware has
    verified it for this request); over stdio the one the server was started with.
    Checked on each call, so a token revoked or expired stops a session already open.
    """
    access = get_access_token()
    secret = access.token if access is not None else _stdio_secret
    token = None if secret is None else token_authenticate(secret=secret)
    if token is None:
        raise NotAuthenticated(UNKNOWN_TOKEN)
    return token


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        parts.append(f"{where}: {error['msg']}" if where else str(error["msg"]))
    return "invalid input: " + "; ".join(parts)


def _mapped(fn: _F, error: Callable[[str, int], Exception]) -> _F:
    """``fn`` with the services' errors turned into ``error(message, status)`` (the REST
    API's message and status code), and Django's connection handling around each call
    as around a request. Anything else is a crash, which the SDK logs and answers with
    a generic error (no internals reach the client)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        close_old_connections()
        try:
            return fn(*args, **kwargs)
        except (ServiceError, HttpError) as exc:
            raise error(printable(str(exc)), exc.status_code) from None
        except ValidationError as exc:
            raise error(printable(_validation_message(exc)), 422) from None
        finally:
            close_old_connections()

    return wrapper  # type: ignore[return-value]


def tool_errors(fn: _F) -> _F:
    """``fn`` as a tool body: errors become tool errors, which the model reads and can
    correct its call by."""
    return _mapped(fn, lambda message, status: ToolError(message))


def resource_errors(fn: _F) -> _F:
    """``fn`` as a resource: a read returns contents or fails with a protocol error,
    ``ResourceNotFoundError`` for what the REST API answers 404."""
    return _mapped(
        fn,
        lambda message, status: (ResourceNotFoundError if status == 404 else ResourceError)(
            message
        ),
    )


def dump(schema: type[BaseModel], body: Any) -> dict[str, Any]:
    """``body`` as the REST route answers it: through its output schema, JSON types."""
    return schema.model_validate(body).model_dump(mode="json")


NamespaceArg = Annotated[
    str | None,
    Field(
        description="The namespace, e.g. 'user:alice' (kind:id; kinds: user, agent, workflow, "
        "global). Omit it when your token is granted exactly one namespace.",
        max_length=MAX_ENCODED_LENGTH,
    ),
]
