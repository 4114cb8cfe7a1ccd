"""JSON API for notes: validate, authorise, call services/selectors, shape output."""

from __future__ import annotations

from ninja import Router

router = Router(tags=["notes"])
