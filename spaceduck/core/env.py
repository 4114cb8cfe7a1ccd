"""Typed readers for ``SPACEDUCK_*`` environment variables.

Every helper raises ``ImproperlyConfigured`` naming the variable and what it
accepts, so a typo in the environment fails at start-up with one clear line
instead of surfacing later as a confusing runtime error.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def env_str(name: str, default: str) -> str:
    value = _raw(name)
    return default if value is None else value


def env_optional_str(name: str) -> str | None:
    return _raw(name)


def env_http_url(name: str) -> str:
    """An http(s) URL with a host, or "" when unset: anything else (``ftp://``, a bare
    host, a typo) would only fail later, in the worker, far from its cause."""
    value = (_raw(name) or "").strip()
    if not value:
        return ""
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ImproperlyConfigured(f"{name}={value!r} must be an http:// or https:// URL.")
    try:
        parts.port  # noqa: B018 (a port out of range or not a number raises)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} has no valid port.") from None
    return value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={value!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off."
    )


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer.") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={value!r} must be an integer >= {minimum}.")
    return number


def env_optional_int(name: str, *, minimum: int | None = None) -> int | None:
    if _raw(name) is None:
        return None
    return env_int(name, 0, minimum=minimum)


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number.") from None
    if not math.isfinite(number) or (minimum is not None and number < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise ImproperlyConfigured(f"{name}={value!r} must be a finite number{bound}.")
    return number


def env_choice(name: str, default: str, choices: Sequence[str]) -> str:
    value = _raw(name)
    if value is None:
        return default
    if value not in choices:
        raise ImproperlyConfigured(
            f"{name}={value!r} is not valid; use one of: {', '.join(choices)}."
        )
    return value


def env_list(name: str, default: Sequence[str]) -> list[str]:
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]
