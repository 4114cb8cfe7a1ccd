"""Facts: key/value per namespace (a key may contain "/").

Every route declares the errors it can answer with (``error_responses``) and the real
constraints of its input, so the OpenAPI schema says what the services check."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Field, Path, Router, Schema, Status
from ninja.errors import HttpError
from pydantic import ConfigDict

from memories.api.schemas import DELETE_ERRORS, READ_ERRORS, WRITE_ERRORS
from memories.store import selectors
from memories.write import services
from spaceduck.core.access import (
    actor,
    require_namespace,
)
from spaceduck.core.limits import (
    ApiNamespace,
    ApiNamespaceSegment,
    api_int,
    api_text,
)
from spaceduck.core.schemas import OutSchema

router = Router(tags=["facts"])


# Keys are matched with Django's ``path`` converter, so a key may contain "/"
# (``/api/facts/user:alice/prefs/theme`` is key ``prefs/theme``). Other
# reserved characters (``?``, ``#``, ``%``) must be percent-encoded.
# Routes with a single response status (201, 204) return the body alone and
# ninja answers with that status (returning a tuple is deprecated).


class FactIn(Schema):
    # No default: a body without "value" is a 422, while "value": null stores
    # JSON null, which is a valid fact value.
    value: Any = Field(
        description="Any JSON value, at most SPACEDUCK_MAX_FACT_VALUE_BYTES as compact JSON."
    )
    ttl_ms: api_int(ge=0, le=services.MAX_TTL_MS) | None = None
    provenance: dict[str, Any] | None = None

    model_config = ConfigDict(extra="forbid")


class FactOut(OutSchema):
    namespace: str
    key: str
    value: Any
    ttl_ms: int | None
    expires_at: datetime | None
    provenance: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime


class FactListOut(OutSchema):
    facts: list[FactOut]


KEY_PATTERN = r"^[^\x00-\x1f\x7f]+$"
_KeyText = api_text(selectors.MAX_FACT_KEY_LENGTH, field="fact key", pattern=KEY_PATTERN)
FactKey = Annotated[
    _KeyText,  # type: ignore[valid-type]
    Path(..., pattern=KEY_PATTERN, description="May contain '/'; percent-encode '?', '#' and '%'."),
]


@router.get("", response={200: FactListOut, **READ_ERRORS})
def list_facts(request: HttpRequest, namespace: ApiNamespace) -> Any:
    canonical = require_namespace(request, namespace, "read")
    return {"facts": selectors.list_facts(canonical)}


@router.get("/{namespace}/{path:key}", response={200: FactOut, **READ_ERRORS})
def get_fact(request: HttpRequest, namespace: ApiNamespaceSegment, key: FactKey) -> Any:
    canonical = require_namespace(request, namespace, "read")
    fact = selectors.get_fact(canonical, key)
    if fact is None:  # missing and expired look the same
        raise HttpError(404, f"fact {key!r} not found in namespace {canonical!r}")
    return fact


@router.put("/{namespace}/{path:key}", response={200: FactOut, **WRITE_ERRORS})
def put_fact(
    request: HttpRequest, namespace: ApiNamespaceSegment, key: FactKey, payload: FactIn
) -> Any:
    canonical = require_namespace(request, namespace, "write")
    return services.set_fact(
        canonical,
        key,
        payload.value,
        ttl_ms=payload.ttl_ms,
        provenance=payload.provenance,
        actor=actor(request),
    )


@router.delete("/{namespace}/{path:key}", response={204: None, **DELETE_ERRORS})
def delete_fact(request: HttpRequest, namespace: ApiNamespaceSegment, key: FactKey) -> Any:
    canonical = require_namespace(request, namespace, "write")
    services.delete_fact(canonical, key, actor=actor(request))  # idempotent: a missing key is fine
    return Status(204, None)
