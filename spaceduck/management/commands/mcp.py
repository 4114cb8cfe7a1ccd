"""`manage.py mcp`: the MCP server over stdio (default) or streamable HTTP (`--http`)."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from spaceduck.core.tokens import token_authenticate

TOKEN_VARIABLE = "SPACEDUCK_MCP_TOKEN"


def host_port(value: str, *, option: str = "--http") -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise CommandError(f"{option} wants HOST:PORT, e.g. 127.0.0.1:8765; got {value!r}")
    return host.strip("[]"), int(port)


class Command(BaseCommand):
    help = (
        "Serve spaceduck's memory tools over MCP: stdio for a local client that starts "
        "this command (token in SPACEDUCK_MCP_TOKEN or --token), or streamable HTTP with "
        "--http HOST:PORT (each request sends Authorization: Bearer <token>)."
    )
    # Nothing may reach stdout before the protocol does: it is the stdio wire.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--http",
            metavar="HOST:PORT",
            help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.",
        )
        parser.add_argument(
            "--token",
            help=f"stdio: the API token to act for (default: ${TOKEN_VARIABLE}).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["http"]:
            if options["token"]:
                raise CommandError("--token is for stdio; over HTTP each request sends its own")
            self._serve_http(*host_port(options["http"]))
        else:
            self._serve_stdio(options["token"] or os.environ.get(TOKEN_VARIABLE, ""))

    def _serve_stdio(self, secret: str) -> None:
        # The MCP SDK is imported here, not at the top: `serve` imports host_port from this
        # module and need not carry the SDK (~0.5 s of CPU, and its heap at exit).
        from spaceduck.core.mcp_base import UNKNOWN_TOKEN, set_stdio_token
        from spaceduck.ops.mcp_server import build_server

        if not secret.strip():
            raise CommandError(
                f"an API token is needed: set {TOKEN_VARIABLE} or pass --token "
                "(create one with: python manage.py token create ...)"
            )
        if token_authenticate(secret=secret.strip()) is None:
            raise CommandError(UNKNOWN_TOKEN)
        set_stdio_token(secret.strip())
        build_server().run()  # stdio; returns when the client closes the pipe

    def _serve_http(self, host: str, port: int) -> None:
        import uvicorn

        from spaceduck.ops.mcp_server import http_app

        self.stderr.write(f"MCP over streamable HTTP at http://{host}:{port}/mcp")
        uvicorn.run(http_app(host, port), host=host, port=port, log_level="warning")
