"""Per-row values of the long list pages (thread messages, the extraction log), computed in
Python once per row: a ``{% url %}`` and two ``|date`` filters per row were most of those
pages' server time (``manage.py bench pages --profile``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.urls import reverse
from django.utils import timezone


def extraction_href() -> Callable[[int], str]:
    """``pk -> /extractions/<pk>/``, reversing the URL once, not once per row."""
    probe = reverse("memories:extraction", args=[1])
    prefix = probe[: -len("1/")]
    return lambda pk: f"{prefix}{pk}/"


def stamp(at: datetime) -> tuple[str, str]:
    """(``YYYY-MM-DD HH:MM:SS``, ISO 8601) in the current time zone, as ``|date`` gives them."""
    local = timezone.localtime(at)
    return local.strftime("%Y-%m-%d %H:%M:%S"), local.isoformat()


def preview(content: object, limit: int = 140) -> str:
    """The start of a message: at most ``limit`` characters, the last an ellipsis if cut."""
    text = str(content)
    return text if len(text) <= limit else text[: limit - 1] + "…"
