"""The NinjaAPI root: authentication, error shapes, health, and the app routers.

Every answer under ``/api/`` is JSON, errors included: ``{"detail": message}``
(spaceduck.core.errors.ErrorOut). The errors are mapped here, once:

- the request body is parsed strictly (``JsonParser``): not JSON or not UTF-8 is
  400, a lone surrogate anywhere in it (``"\\ud800"``) or nesting deeper than
  ``limits.MAX_JSON_DEPTH`` is 422, a body over SPACEDUCK_MAX_REQUEST_BYTES is 413;
- invalid parameters are 422 with one entry per field in ``errors``;
- ``ServiceError``s carry their own status (spaceduck.core.errors);
- unknown routes are 404, a known route with another method 405 (``SpaceduckAPI``);
- anything unexpected is logged and answered 500 ``internal error``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import datetime
from functools import wraps
from typing import Any

import pydantic_core
from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.urls import URLPattern, URLResolver, re_path
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI, Swagger
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as RequestInvalid
from ninja.parser import Parser
from ninja.renderers import JSONRenderer
from ninja.responses import NinjaJSONEncoder

from spaceduck.core.access import TokenAuth, actor, request_token, require_namespace
from spaceduck.core.errors import ERROR_DESCRIPTIONS, ServiceError, error_responses
from spaceduck.core.limits import ApiNamespace, check_json_value, printable
from spaceduck.core.logs import redact_path
from spaceduck.core.schemas import OutSchema
from spaceduck.ops.erasure import erase_namespace
from spaceduck.ops.health import health_report

logger = logging.getLogger("spaceduck.ops.api")


class MalformedBody(ServiceError):
    status_code = 400


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


class JsonParser(Parser):
    """Request bodies: RFC 8259 JSON in UTF-8, every string valid Unicode text.

    The one check on text at the edge, for every route and field: a lone
    surrogate would otherwise reach SQLite (which cannot encode it) or come back
    in a response. ninja wraps a parser's exception in a 400 HttpError, and
    ``on_http_error`` answers with the wrapped error's own status.
    """

    def parse_body(self, request: HttpRequest) -> Any:
        try:
            data = json.loads(request.body, parse_constant=_no_constants)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
            raise MalformedBody(f"the request body is not valid JSON: {exc}") from None
        return check_json_value(data, field="body")


class JsonRenderer(JSONRenderer):
    """JSON by pydantic-core's encoder (Rust), ~8x faster than ``json.dumps`` with
    ninja's encoder: a context build answers with hundreds of messages, and at
    ~17 us per message the standard encoder was a tenth of its cost (`bench load`).
    Datetimes are ISO 8601 with microseconds, UTC as ``Z``. Anything the fast
    encoder refuses (a lone surrogate in text stored before the API rejected
    them) goes through the standard one, which escapes it."""

    def render(self, request: HttpRequest, data: Any, *, response_status: int) -> Any:
        try:
            return pydantic_core.to_json(data, fallback=self._fallback)
        except (ValueError, TypeError):
            return super().render(request, data, response_status=response_status)

    @staticmethod
    def _fallback(value: Any) -> Any:
        return NinjaJSONEncoder().default(value)


class SpaceduckAPI(NinjaAPI):
    """NinjaAPI whose every URL answers JSON: unknown routes, 405s and crashes included."""

    def _get_urls(self) -> list[URLPattern | URLResolver]:
        patterns = super()._get_urls()
        for pattern in patterns:
            if isinstance(pattern, URLPattern):
                pattern.callback = _json_errors(pattern.callback)
        # Last: whatever no route matched (Django's own 404 page is HTML).
        return [*patterns, re_path(r"", _json_errors(_unknown_route), name="unknown-route")]

    def get_openapi_operation_id(self, operation: Any) -> str:
        """Ninja's id (module + function), with the module the route had before the API
        was split into one module per resource: memories.api (conflicts:
        memories.api_conflicts), so clients generated from the schema keep working."""
        module = str(operation.view_func.__module__)
        if module.startswith("memories.api."):
            module = "memories.api_conflicts" if module.endswith(".conflicts") else "memories.api"
        return f"{module}_{operation.view_func.__name__}".replace(".", "_")

    def get_openapi_schema(self, **kwargs: Any) -> Any:
        schema = super().get_openapi_schema(**kwargs)
        for item in schema["paths"].values():
            for operation in item.values():
                for code, response in operation.get("responses", {}).items():
                    if int(code) in ERROR_DESCRIPTIONS:
                        response["description"] = ERROR_DESCRIPTIONS[int(code)]
        _state_text_rule(schema)
        return schema


# What limits.check_text refuses in every request body string (and object key), as the
# schema says it: U+0000, which PostgreSQL cannot store.
NO_NUL_PATTERN = "^[^\\u0000]*$"
JSON_VALUE = "JsonValue"
_JSON_VALUE_REF = f"#/components/schemas/{JSON_VALUE}"
# Any JSON value whose strings and keys hold no U+0000 (message content, fact values,
# provenance): what "any JSON" means in a request body.
_JSON_VALUE_SCHEMA = {
    "anyOf": [
        {"type": "null"},
        {"type": "boolean"},
        {"type": "number"},
        {"type": "string", "pattern": NO_NUL_PATTERN},
        {"type": "array", "items": {"$ref": _JSON_VALUE_REF}},
        {
            "type": "object",
            "propertyNames": {"pattern": NO_NUL_PATTERN},
            "additionalProperties": {"$ref": _JSON_VALUE_REF},
        },
    ],
}
_OWN_RULES = {"$ref", "type", "anyOf", "oneOf", "allOf", "enum", "const"}


def _state_text_rule(schema: dict[str, Any]) -> None:
    """State NO_NUL_PATTERN on every free-text string and key of the request bodies
    (strings with a pattern, format or enum of their own already exclude U+0000)."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    seen: set[int] = set()
    pending: list[Any] = [
        media.get("schema")
        for item in schema["paths"].values()
        for operation in item.values()
        for media in operation.get("requestBody", {}).get("content", {}).values()
    ]
    while pending:
        node = pending.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        ref = node.get("$ref", "")
        if ref.startswith("#/components/schemas/"):
            pending.append(components.get(ref.rsplit("/", 1)[1]))
        _restrict(node)
        for key in ("properties", "$defs"):
            pending.extend((node.get(key) or {}).values())
        for key in ("items", "additionalProperties"):
            pending.append(node.get(key))
        for key in ("anyOf", "oneOf", "allOf"):
            pending.extend(node.get(key) or [])
    components[JSON_VALUE] = _JSON_VALUE_SCHEMA


def _restrict(node: dict[str, Any]) -> None:
    kind = node.get("type")
    if kind == "string" and not {"pattern", "format", "enum"} & node.keys():
        node["pattern"] = NO_NUL_PATTERN
    elif kind == "object" and node.get("additionalProperties") is not False:
        node["propertyNames"] = {"pattern": NO_NUL_PATTERN}
        if node.get("additionalProperties") in (None, True, {}):
            node["additionalProperties"] = {"$ref": _JSON_VALUE_REF}
    elif kind == "array" and node.get("items") in (None, {}):
        node["items"] = {"$ref": _JSON_VALUE_REF}
    elif not _OWN_RULES & node.keys():  # any JSON value
        node["allOf"] = [{"$ref": _JSON_VALUE_REF}]


class LocalSwagger(Swagger):
    """Swagger UI from django-ninja's own template and files, served here: ninja picks its
    CDN template unless "ninja" is in INSTALLED_APPS, which it is not (settings.py says
    why); its template and static directories are configured instead."""

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        self.settings["url"] = self.get_openapi_url(api, kwargs)
        context = {
            "swagger_settings": json.dumps(self.settings, indent=1),
            "api": api,
            "add_csrf": False,  # Bearer tokens, no session: no CSRF token to add
        }
        return render(request, self.template, context)


api = SpaceduckAPI(
    title="spaceduck",
    version="1",
    description=(
        "Long-term memory for AI agents. Authenticate with `Authorization: Bearer <token>`. "
        'Every error is JSON: `{"detail": "what was wrong and what is accepted"}`.'
    ),
    auth=TokenAuth(),
    # Local assets; no online validator badge either.
    docs=LocalSwagger(settings={"validatorUrl": None}),
    urls_namespace="api",
    parser=JsonParser(),
    renderer=JsonRenderer(),
)


def error_response(request: HttpRequest, status: int, detail: str, **extra: Any) -> HttpResponse:
    # printable(): a message may quote the caller's input; never echo a lone surrogate.
    return api.create_response(request, {"detail": printable(detail), **extra}, status=status)


def _json_errors(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """``view``, answering JSON where Django or ninja would answer HTML or plain text."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        try:
            response = view(request, *args, **kwargs)
        except Http404:
            return _unknown_route(request)
        except Exception as exc:  # an error handler itself failed
            return on_unexpected_error(request, exc)
        if response.status_code == 405 and "json" not in response.get("Content-Type", ""):
            allowed = response.get("Allow", "")
            answer = error_response(
                request, 405, f"method {request.method} is not allowed here; allowed: {allowed}"
            )
            answer["Allow"] = allowed
            return answer
        return response

    return wrapper


@csrf_exempt  # as every API view: the API authenticates with tokens, never with cookies
def _unknown_route(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    return error_response(
        request, 404, f"no API route {request.method} {request.path}; the routes are in /api/docs"
    )


@api.exception_handler(AuthenticationError)
def on_authentication_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    return error_response(
        request,
        401,
        "authentication required: send `Authorization: Bearer <token>` "
        "with a valid API token (not revoked, not expired)",
    )


@api.exception_handler(ServiceError)
def on_service_error(request: HttpRequest, exc: ServiceError) -> HttpResponse:
    return error_response(request, exc.status_code, str(exc))


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja turns any exception of the body parser into a generic 400 HttpError.
    if isinstance(exc.__cause__, ServiceError):
        return on_service_error(request, exc.__cause__)
    return error_response(request, exc.status_code, str(exc))


def _field_error(error: dict[str, Any]) -> dict[str, Any]:
    loc = list(error["loc"])
    if loc[:1] == ["body"] and len(loc) > 1:
        del loc[1]  # the view's parameter name (``payload``) means nothing to callers
    # pydantic names the member of a union it tried ("function-after[...]"): noise here.
    for index, part in enumerate(loc):
        if isinstance(part, str) and ("[" in part or "(" in part):
            del loc[index:]
            break
    message = str(error["msg"])
    if error["type"] == "missing":
        message = f"{loc[-1]} is required"
    return {"loc": loc, "msg": printable(message), "type": str(error["type"])}


@api.exception_handler(RequestInvalid)
def on_invalid_request(request: HttpRequest, exc: RequestInvalid) -> HttpResponse:
    errors = [_field_error(error) for error in exc.errors]
    parts = [".".join(map(str, error["loc"])) + ": " + error["msg"] for error in errors]
    return error_response(request, 422, "invalid request: " + "; ".join(parts), errors=errors)


@api.exception_handler(RequestDataTooBig)
def on_body_too_big(request: HttpRequest, exc: Exception) -> HttpResponse:
    return error_response(
        request,
        413,
        f"the request body is over the limit of {settings.MAX_REQUEST_BYTES:,} bytes "
        "(SPACEDUCK_MAX_REQUEST_BYTES); nothing was saved",
    )


@api.exception_handler(SuspiciousOperation)
def on_suspicious_request(request: HttpRequest, exc: Exception) -> HttpResponse:
    # Django's own request limits, e.g. too many query parameters.
    return error_response(request, 400, f"malformed request: {exc}")


@api.exception_handler(Exception)
def on_unexpected_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    path = redact_path(request.path)  # no namespace ids or e-mails in logs
    logger.error("unexpected error on %s %s", request.method, path, exc_info=exc)
    return error_response(request, 500, "internal error; the server log has the details")


class TokenOut(OutSchema):
    name: str
    namespaces: list[str]
    permissions: list[str]


@api.get("/tokens/me", response={200: TokenOut, **error_responses(401)}, tags=["auth"])
def whoami(request: HttpRequest) -> Any:
    return request_token(request)


class ErasureOut(OutSchema):
    namespace: str
    erased_by: str
    erased_at: datetime
    counts: dict[str, int]


@api.delete(
    "/namespaces/{path:namespace}",
    response={200: ErasureOut, **error_responses(401, 403, 404, 422)},
    tags=["namespaces"],
)
def namespace_erase(request: HttpRequest, namespace: ApiNamespace) -> Any:
    """Erase everything the namespace holds (memories with their vectors and keyword rows,
    history, conflicts, extractions, facts, threads, messages, notes); needs the ``admin``
    permission. The answer is the tombstone kept: who, when, how many of each kind."""
    canonical = require_namespace(request, namespace, "admin")
    return erase_namespace(canonical, by=actor(request))


@api.get("/health", auth=None, tags=["health"])
def health(request: HttpRequest) -> HttpResponse:
    body, status = health_report()
    return api.create_response(request, body, status=status)


def _register_routers() -> None:
    from memories.api import conflicts, context, extractions, facts, memories, skills, threads
    from notes.api import router as notes_router

    api.add_router("/memories", memories.router)
    api.add_router("/facts", facts.router)
    api.add_router("/threads", threads.router)
    api.add_router("/notes", notes_router)
    api.add_router("/extractions", extractions.router)
    api.add_router("/skills", skills.router)
    api.add_router("/context", context.router)
    api.add_router("/conflicts", conflicts.router)


_register_routers()
