"""Authorisation helpers shared by every front end that acts for an API token.

A caller is the API request (its token is ``request.auth``) or the token itself
(the MCP server, spaceduck.ops.mcp_server, which has no Django request): the same
grants, the same 404 for a namespace outside them, the same 403 messages.
"""

from __future__ import annotations

from django.http import HttpRequest
from ninja.security import HttpBearer

from spaceduck.core.errors import InvalidInput, NotFound, PermissionDenied
from spaceduck.core.namespaces import InvalidNamespace, normalize_namespace
from spaceduck.core.tokens import token_authenticate
from spaceduck.models import ApiToken

Caller = HttpRequest | ApiToken


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        api_token = token_authenticate(secret=token)
        if api_token is not None:
            request.api_token = api_token  # type: ignore[attr-defined]
        return api_token


def request_token(caller: Caller) -> ApiToken:
    if isinstance(caller, ApiToken):
        return caller
    return caller.auth  # type: ignore[attr-defined,no-any-return]


def actor(caller: Caller) -> str:
    """Who a change is recorded as (history, a note's author and status_by)."""
    return f"token:{request_token(caller).name}"


def claimed_author(caller: Caller, requested: str | None) -> str:
    """A note's author as a token may give it: its identity (``token:<name>``, as ``actor``
    records it) or a name under it (``token:<name>/<agent>``), which lets one token say which
    of its agents wrote. Anything else is refused (403), not replaced: ``staff:<user>`` is
    reserved for people (the dashboard and the admin set it from the logged-in user), and a
    token that names another token, or anyone, would make a reviewer trust the wrong source;
    answering with the reason tells the client its note was not stored under that name."""
    identity = actor(caller)
    if requested is None:
        return identity
    if requested == identity:
        return requested
    under = requested.removeprefix(f"{identity}/")
    if under != requested and under.strip() and not _names_another_token(caller, requested):
        return requested
    raise PermissionDenied(
        f"author {requested!r} is not this token: a token's notes are written by {identity!r} "
        f"or a name under it ({identity}/<agent>); 'staff:' names people (set by the dashboard "
        "and the admin) and a token cannot write as another token; omit author to use "
        f"{identity!r}"
    )


def _names_another_token(caller: Caller, author: str) -> bool:
    # Token names may hold "/": "token:ci/deploy" under token "ci" is token "ci/deploy".
    name = author.removeprefix("token:")
    return ApiToken.objects.filter(name=name).exclude(pk=request_token(caller).pk).exists()


def require_namespace(request: Caller, namespace: str, permission: str = "read") -> str:
    """The canonical namespace if the token may use it with ``permission``.

    A namespace outside the token's grants is a 404, exactly like a missing one,
    so a token cannot probe which namespaces exist.
    """
    try:
        canonical = normalize_namespace(namespace)
    except InvalidNamespace as exc:
        raise InvalidInput(f"invalid namespace: {exc}") from None
    token = request_token(request)
    if not token.grants_namespace(canonical):
        raise NotFound(f"namespace {canonical!r} not found")
    require_permission(request, permission)
    return canonical


def resolve_namespace(request: Caller, namespace: str | None, permission: str) -> str:
    """The namespace a request means: the one given, else the token's only grant.

    Omitting ``namespace`` is allowed when the token is granted exactly one
    namespace; a token with several grants, or a wildcard (``user:*``, ``*``),
    which stands for many, must name one (422). Then as ``require_namespace``.
    """
    if namespace is None:
        grants = list(request_token(request).namespaces)
        if len(grants) != 1 or grants[0].endswith("*"):
            granted = ", ".join(grants) or "none"
            raise InvalidInput(
                "namespace is required unless the token is granted exactly one namespace "
                f"(this token's grants: {granted}); pass namespace=kind:id"
            )
        namespace = grants[0]
    return require_namespace(request, namespace, permission)


def require_permission(request: Caller, permission: str) -> None:
    """403 naming the missing permission and the ones the token has."""
    token = request_token(request)
    if not token.has_permission(permission):
        held = ", ".join(token.permissions) or "none"
        raise PermissionDenied(f"this token lacks the {permission!r} permission (it has: {held})")


def granted_write_budget(caller: Caller, requested: int | None) -> int | None:
    """A task's write budget as asked in a request: a lower one than Settings > Memory's is
    the agent's own choice; a higher one needs the ``approve`` permission, since the budget
    is what stops a runaway task, and an agent must not lift its own limit."""
    from spaceduck.core import runtime

    configured = runtime.task_max_memory_writes()
    if requested is None or requested <= configured:
        return requested
    token = request_token(caller)
    if not token.has_permission("approve"):
        raise PermissionDenied(
            f"max_memory_writes {requested} is above the configured task write budget "
            f"({configured}): raising it needs the 'approve' permission (this token has: "
            f"{', '.join(token.permissions) or 'none'}); omit it or ask for at most {configured}"
        )
    return requested
