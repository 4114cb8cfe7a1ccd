"""Memory settings that staff change from the dashboard, in effect without a restart.

Environment variables (``spaceduck.settings``) give each setting's default; a value saved
from Settings > Memory (a ``RuntimeSetting`` row) overrides it. Every process, the web
workers and the huey worker alike, reads the rows through ``current()``, which keeps them
for ``SETTINGS_REFRESH_SECONDS`` (2 s by default): a change is in effect everywhere within
that time, at the cost of one small query per process per period. Each change is recorded
(``SettingChange``: who, when, old -> new) in the same transaction as the value.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction

from spaceduck.core.errors import InvalidInput
from spaceduck.models import RuntimeSetting, SettingChange


def _boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError("must be true or false")


def _count(most: int) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
            raise ValueError(f"must be a whole number from 0 to {most}")
        return value

    return parse


def _text(most: int) -> Callable[[object], str]:
    def parse(value: object) -> str:
        if not isinstance(value, str) or len(value) > most:
            raise ValueError(f"must be text of at most {most} characters")
        return value.strip()

    return parse


def _dimensions(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 8192:
        raise ValueError("must be a whole number from 1 to 8192, or empty")
    return value


def _provider(value: object) -> str:
    if value not in settings.EMBEDDING_PROVIDERS:
        raise ValueError(f"must be one of {', '.join(settings.EMBEDDING_PROVIDERS)}")
    return str(value)


@dataclass(frozen=True)
class Spec:
    key: str
    label: str
    help: str
    env: str  # the environment variable that gives the default
    setting: str  # its parsed value in django.conf.settings ("A.b": key b of dict A)
    parse: Callable[[object], Any]
    # False: changed by a job rather than the form (the embedder: memories.upkeep.reembed switches
    # it once every memory has its new vector).
    on_form: bool = True

    def default(self) -> Any:
        name, _, item = self.setting.partition(".")
        value = getattr(settings, name)
        return value[item] if item else value


SPECS: tuple[Spec, ...] = (
    Spec(
        "memory_enabled",
        "Memory",
        "Off: nothing is extracted or written, and neither context nor recall gives agents "
        "any memory.",
        "SPACEDUCK_MEMORY_ENABLED",
        "MEMORY_ENABLED",
        _boolean,
    ),
    Spec(
        "recall_semantic",
        "Semantic recall",
        "Off: recall uses the keyword list only (still filtered and ranked).",
        "SPACEDUCK_RECALL_SEMANTIC",
        "RECALL_SEMANTIC",
        _boolean,
    ),
    Spec(
        "extraction_retries",
        "Extraction retries",
        "How often a failed extraction is tried again before it is marked failed.",
        "SPACEDUCK_EXTRACTION_RETRIES",
        "EXTRACTION_RETRIES",
        _count(20),
    ),
    Spec(
        "task_max_memory_writes",
        "Default task write budget",
        "How many memories one agent task may write when it does not set its own budget.",
        "SPACEDUCK_TASK_MAX_MEMORY_WRITES",
        "TASK_MAX_MEMORY_WRITES",
        _count(10_000),
    ),
    Spec(
        "embedding_provider",
        "Embedding provider",
        "local (MiniLM, offline), hash (tests and benchmarks) or openai (any compatible server).",
        "SPACEDUCK_EMBEDDING_PROVIDER",
        "SPACEDUCK_EMBEDDINGS.provider",
        _provider,
        on_form=False,
    ),
    Spec(
        "embedding_model",
        "Embedding model",
        "The model name the provider runs (empty: the provider's own).",
        "SPACEDUCK_EMBEDDING_MODEL",
        "SPACEDUCK_EMBEDDINGS.model",
        _text(200),
        on_form=False,
    ),
    Spec(
        "embedding_dimensions",
        "Embedding dimensions",
        "The vector length; it must fit the model.",
        "SPACEDUCK_EMBEDDING_DIMENSIONS",
        "SPACEDUCK_EMBEDDINGS.dimensions",
        _dimensions,
        on_form=False,
    ),
)
SPEC_BY_KEY = {spec.key: spec for spec in SPECS}


@dataclass(frozen=True)
class Value:
    spec: Spec
    value: Any
    source: str  # "dashboard" | "environment" | "default"
    row: RuntimeSetting | None


class _Rows:
    """The saved rows, re-read at most once per refresh period (per process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[str, RuntimeSetting] = {}
        self._read_at = float("-inf")

    def get(self) -> dict[str, RuntimeSetting]:
        refresh = float(getattr(settings, "SETTINGS_REFRESH_SECONDS", 2.0))
        if time.monotonic() - self._read_at >= refresh:
            with self._lock:
                self._rows = _read_rows()
                self._read_at = time.monotonic()
        return self._rows

    def forget(self) -> None:
        self._read_at = float("-inf")


def _read_rows() -> dict[str, RuntimeSetting]:
    try:
        return {row.key: row for row in RuntimeSetting.objects.all()}
    except DatabaseError:
        # Before `migrate` has made the table (start-up checks, the first migrate itself)
        # every setting is its environment default.
        return {}


_ROWS = _Rows()


def forget_cached() -> None:
    """Read the rows again on the next call (after a change, and between tests)."""
    _ROWS.forget()


def current(key: str) -> Value:
    spec = SPEC_BY_KEY[key]
    row = _ROWS.get().get(key)
    if row is not None:
        try:
            return Value(spec, spec.parse(row.value), "dashboard", row)
        except ValueError:
            pass  # a row edited by hand into nonsense: the default still works
    source = "environment" if os.environ.get(spec.env, "").strip() else "default"
    return Value(spec, spec.default(), source, None)


def memory_enabled() -> bool:
    return bool(current("memory_enabled").value)


# One wording for the one refusal: the API, MCP, the dashboard and the admin.
MEMORY_OFF = (
    "memory is off on this server (Settings > Memory, or SPACEDUCK_MEMORY_ENABLED): "
    "nothing was written; forgetting still works"
)


def require_memory_on() -> None:
    """Refuse a memory write (create, edit, approve, extract, resolve) while memory is off."""
    from spaceduck.core.errors import MemoryOff

    if not memory_enabled():
        raise MemoryOff(MEMORY_OFF)


def recall_semantic() -> bool:
    return bool(current("recall_semantic").value)


def extraction_retries() -> int:
    return int(current("extraction_retries").value)


def task_max_memory_writes() -> int:
    return int(current("task_max_memory_writes").value)


def embedding_choice() -> dict[str, Any]:
    """The embedder in effect: provider, model and dimensions (the rest of its configuration,
    URLs and keys, stays in the environment)."""
    return {
        "provider": current("embedding_provider").value,
        "model": current("embedding_model").value or None,
        "dimensions": current("embedding_dimensions").value,
    }


def all_values() -> list[Value]:
    return [current(spec.key) for spec in SPECS]


def change_history(limit: int) -> list[tuple[SettingChange, str]]:
    """The newest ``limit`` recorded changes, each with its setting's label."""
    labels = {spec.key: spec.label for spec in SPECS}
    return [(c, labels.get(c.key, c.key)) for c in SettingChange.objects.all()[:limit]]


def settings_update(
    *,
    values: Mapping[str, object],
    reset: tuple[str, ...] = (),
    actor: str,
    switching_embedder: bool = False,
) -> list[SettingChange]:
    """Save ``values`` (key -> new value) and drop the saved value of each key in ``reset``
    (back to the environment's default); record every actual change. InvalidInput names the
    first bad key or value, and then nothing is saved.

    The embedder's settings change only with ``switching_embedder`` (memories.upkeep.reembed, once
    every memory has a vector from the new one): set alone, they would make recall embed
    queries with a model the stored vectors do not come from."""
    unknown = sorted((set(values) | set(reset)) - SPEC_BY_KEY.keys())
    if unknown:
        raise InvalidInput(f"unknown setting {unknown[0]!r}; known: {', '.join(SPEC_BY_KEY)}")
    fixed = sorted(k for k in (*values, *reset) if not SPEC_BY_KEY[k].on_form)
    if fixed and not switching_embedder:
        raise InvalidInput(
            f"{SPEC_BY_KEY[fixed[0]].label} changes by re-embedding every memory "
            "(Settings > Memory > Embeddings), not on its own"
        )
    parsed: dict[str, Any] = {}
    for key, raw in values.items():
        try:
            parsed[key] = SPEC_BY_KEY[key].parse(raw)
        except ValueError as exc:
            raise InvalidInput(f"{SPEC_BY_KEY[key].label}: {exc}") from None
    changes: list[SettingChange] = []
    with transaction.atomic():
        rows = {row.key: row for row in RuntimeSetting.objects.select_for_update()}
        for key, value in parsed.items():
            if key in rows and rows[key].value == value:
                continue
            old = current(key).value
            RuntimeSetting.objects.update_or_create(
                key=key, defaults={"value": value, "updated_by": actor}
            )
            changes.append(SettingChange(key=key, old=old, new=value, changed_by=actor))
        for key in reset:
            if key in rows and key not in parsed:
                rows[key].delete()
                default = SPEC_BY_KEY[key].default()
                changes.append(
                    SettingChange(
                        key=key, old=rows[key].value, new=default, changed_by=actor, reset=True
                    )
                )
        SettingChange.objects.bulk_create(changes)
    forget_cached()
    return changes
