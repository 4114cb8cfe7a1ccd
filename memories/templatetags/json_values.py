"""``{{ value|as_text }}``: a message's content or a JSON value as a person reads it: text as
it is, anything else as indented JSON (never Python's repr of a dict)."""

from __future__ import annotations

import json
from typing import Any

from django import template
from django.core.serializers.json import DjangoJSONEncoder

register = template.Library()


@register.filter
def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, cls=DjangoJSONEncoder)
