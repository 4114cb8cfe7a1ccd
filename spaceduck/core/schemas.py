"""The base of every API response schema."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class OutSchema(BaseModel):
    """A response schema read straight from attributes or dict keys by pydantic.

    ninja's ``Schema`` wraps every value in a Python ``DjangoGetter`` before
    validating it: ~95 us per memory serialised against ~17 us here, which is a
    millisecond per search and more per context build under `bench load`. The
    responses need none of what the getter adds (``resolve_*`` methods, related
    managers): services hand over model instances and plain dicts.
    """

    model_config = ConfigDict(from_attributes=True)
