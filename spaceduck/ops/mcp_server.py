"""The MCP server: spaceduck's memory, context and notes as Model Context Protocol tools.

Built on the official SDK (``mcp``); ``python manage.py mcp`` serves it over stdio
(a local client starts it as a subprocess, with the API token in
SPACEDUCK_MCP_TOKEN or ``--token``) or over streamable HTTP (``--http
HOST:PORT``; each request carries ``Authorization: Bearer <token>``, checked by
the SDK's auth middleware with the same API tokens as the REST API). The tools
live beside each app's REST routes (memories/mcp/tools.py, notes/mcp_tools.py)
and call the same services.
"""

from __future__ import annotations

from importlib.metadata import version

import anyio.to_thread
from django.conf import settings
from django.db import close_old_connections
from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette

from memories.mcp import tools as memory_tools
from notes import mcp_tools as note_tools
from spaceduck.core.tokens import token_authenticate
from spaceduck.models import ApiToken

INSTRUCTIONS = """\
spaceduck is your long-term memory. Use it so that you remember the user across \
conversations:
- After each user turn, call remember with the message (mode=message) and keep the \
returned thread_id for the next turns of this conversation; the service decides in the \
background what is worth remembering.
- Before answering, call recall with what you need to know (or get_context for a whole \
system block with the relevant memories, the constraints to follow and recent history).
- Use remember with mode=memory for a statement you are sure of, set_fact/get_fact for \
exact key-value state, save_note for knowledge people should review, forget when the \
user asks you to.
Errors say what was wrong; correct the call rather than retrying it unchanged."""


class ApiTokenVerifier(TokenVerifier):
    """An HTTP request's Bearer token is good when it is an active spaceduck API token (known,
    not revoked, not expired); the SDK answers 401 otherwise."""

    async def verify_token(self, token: str) -> AccessToken | None:
        found = await anyio.to_thread.run_sync(_authenticate, token)
        if found is None:
            return None
        return AccessToken(token=token, client_id=found.name, scopes=list(found.permissions))


def _authenticate(secret: str) -> ApiToken | None:
    close_old_connections()
    try:
        return token_authenticate(secret=secret)
    finally:
        close_old_connections()


def build_server(*, base_url: str | None = None) -> MCPServer:
    """The server with every tool. ``base_url`` (HTTP only) turns on Bearer auth."""
    auth = None
    if base_url is not None:
        # The SDK's auth is OAuth-shaped: it wants an issuer. spaceduck issues its own
        # tokens (manage.py token create, the admin), so the issuer is this service.
        auth = AuthSettings(
            issuer_url=AnyHttpUrl(base_url),
            resource_server_url=None,
            validate_token_resource=False,
        )
    server = MCPServer(
        "spaceduck",
        title="spaceduck memory",
        instructions=INSTRUCTIONS,
        version=version("spaceduck"),
        token_verifier=ApiTokenVerifier() if auth is not None else None,
        auth=auth,
        log_level="WARNING",
    )
    memory_tools.register(server)
    note_tools.register(server)
    return server


def transport_security() -> TransportSecuritySettings:
    """DNS-rebinding protection from SPACEDUCK_ALLOWED_HOSTS, as for the web server."""
    hosts = list(settings.ALLOWED_HOSTS)
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    allowed = [form for host in hosts for form in (host, f"{host}:*")]
    origins = [f"{scheme}://{host}" for scheme in ("http", "https") for host in allowed]
    return TransportSecuritySettings(allowed_hosts=allowed, allowed_origins=origins)


def http_app(host: str, port: int) -> Starlette:
    """The streamable HTTP app, its endpoint at /mcp."""
    server = build_server(base_url=f"http://{host}:{port}")
    return server.streamable_http_app(transport_security=transport_security(), host=host)
