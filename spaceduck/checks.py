"""Start-up checks: refuse to run with vectors the configured embedder cannot use."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, register
from django.db import connection

REINDEX_HINT = (
    "Run `python manage.py reindex` to re-embed every memory with the configured embedder "
    "(it shows a progress bar and is safe to interrupt and re-run), or restore the previous "
    "SPACEDUCK_EMBEDDING_* settings."
)


def embedding_fingerprint_problem() -> str | None:
    from memories.vector_index import fingerprint_problem
    from spaceduck.providers import get_embedder

    if "spaceduck_vectorindexstate" not in connection.introspection.table_names():
        return None  # not migrated yet: the migration records the fingerprint
    return fingerprint_problem(get_embedder().fingerprint)


@register()
def check_embedding_fingerprint(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    problem = embedding_fingerprint_problem()
    if problem is None:
        return []
    return [Error(f"Embedding mismatch: {problem}.", hint=REINDEX_HINT, id="spaceduck.E001")]


def raise_on_startup_problems() -> None:
    """For servers that skip Django's checks (gunicorn, uvicorn): fail loudly instead."""
    from django.core.exceptions import ImproperlyConfigured

    problem = embedding_fingerprint_problem()
    if problem is not None:
        raise ImproperlyConfigured(f"Embedding mismatch: {problem}. {REINDEX_HINT}")
