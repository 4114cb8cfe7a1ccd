"""The NinjaAPI root: authentication, error shapes, health, and the app routers."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError

from spaceduck.access import TokenAuth, request_token
from spaceduck.errors import ServiceError
from spaceduck.health import health_report

api = NinjaAPI(
    title="spaceduck",
    version="1",
    description=(
        "Long-term memory for AI agents. Authenticate with `Authorization: Bearer <token>`."
    ),
    auth=TokenAuth(),
    urls_namespace="api",
)


@api.exception_handler(AuthenticationError)
def on_authentication_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    return api.create_response(
        request,
        {
            "detail": "authentication required: send `Authorization: Bearer <token>` "
            "with a valid, unrevoked API token"
        },
        status=401,
    )


class TokenOut(Schema):
    name: str
    namespaces: list[str]
    permissions: list[str]


@api.get("/tokens/me", response=TokenOut, tags=["auth"])
def whoami(request: HttpRequest) -> Any:
    return request_token(request)


@api.get("/health", auth=None, tags=["health"])
def health(request: HttpRequest) -> HttpResponse:
    body, status = health_report()
    return api.create_response(request, body, status=status)


@api.exception_handler(ServiceError)
def on_service_error(request: HttpRequest, exc: ServiceError) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)


def _register_routers() -> None:
    from memories.api import (
        context_router,
        extractions_router,
        facts_router,
        skills_router,
        threads_router,
    )
    from memories.api import router as memories_router
    from notes.api import router as notes_router

    api.add_router("/memories", memories_router)
    api.add_router("/facts", facts_router)
    api.add_router("/threads", threads_router)
    api.add_router("/notes", notes_router)
    api.add_router("/extractions", extractions_router)
    api.add_router("/skills", skills_router)
    api.add_router("/context", context_router)


_register_routers()
