"""Importing a library without the optional clients it would load for nothing.

huey's storage module imports every client it supports as soon as it is installed:
redis and psycopg (~0.4 s of CPU together), in every process and every `manage.py`
command, although a deployment uses one queue: SQLite's, or Redis when
SPACEDUCK_REDIS_URL is set. huey then leaves the storage classes that need a missing
client unusable, which is right for the ones the service does not use.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable


def import_without(module: str, unused: Iterable[str]) -> None:
    """Import ``module`` as if the packages ``unused`` were not installed (those not
    imported yet). They stay importable afterwards for whoever needs them."""
    if module in sys.modules:
        return
    hidden = [name for name in unused if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # "import name" raises ImportError
    try:
        importlib.import_module(module)
    finally:
        for name in hidden:
            del sys.modules[name]
