"""``SPACEDUCK_DATABASE_URL``: which database the service runs on.

Unset, the service keeps its SQLite file (``SPACEDUCK_DATABASE_PATH``). A
``postgres://`` / ``postgresql://`` URL selects PostgreSQL (with pgvector) instead,
the same code on a database built for many writers and hosts. A Unix socket is given
as ``?host=/path/to/socket-dir`` (as libpq reads it).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured

POSTGRES_ENGINE = "django.db.backends.postgresql"


def postgres_database(url: str, *, conn_max_age: int) -> dict[str, Any]:
    """Django's DATABASES entry for a PostgreSQL URL; ImproperlyConfigured for anything else."""
    try:
        import dj_database_url  # the postgres extra: pip install 'spaceduck[postgres]'
    except ImportError:
        raise ImproperlyConfigured(
            "SPACEDUCK_DATABASE_URL needs the postgres extra: pip install -e '.[postgres]'"
        ) from None
    try:
        config: dict[str, Any] = dict(dj_database_url.parse(url))
    except ValueError as error:
        raise ImproperlyConfigured(f"SPACEDUCK_DATABASE_URL: {error}") from None
    if config.get("ENGINE") != POSTGRES_ENGINE:
        raise ImproperlyConfigured(
            "SPACEDUCK_DATABASE_URL must be a postgres:// or postgresql:// URL "
            "(unset it to use the SQLite file)."
        )
    if not config.get("NAME"):
        raise ImproperlyConfigured(
            "SPACEDUCK_DATABASE_URL names no database (postgres://.../NAME)."
        )
    options = dict(config.get("OPTIONS") or {})
    if not config.get("HOST") and "host" in options:
        config["HOST"] = options.pop("host")  # a socket directory: libpq's ?host=
    config.update(
        OPTIONS=options,
        CONN_MAX_AGE=conn_max_age,
        CONN_HEALTH_CHECKS=True,
        TEST={"NAME": None},
    )
    return config


def with_database(url: str, name: str) -> str:
    """``url`` (postgres://...) naming database ``name`` instead, its query kept."""
    base, mark, query = url.partition("?")
    scheme, _, rest = base.partition("://")
    server = rest.split("/", 1)[0]
    return f"{scheme}://{server}/{name}{mark}{query}"
