"""Start-up checks: refuse to run with vectors the configured embedder cannot use; warn
when a PostgreSQL database sorts text differently from SQLite, and when a file of the data
directory is readable by others."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.db import DatabaseError, connection, transaction

from spaceduck.core.private_files import SQLITE_COMPANIONS, sqlite_files, too_wide

REINDEX_HINT = (
    "Run `python manage.py reindex` to re-embed every memory with the configured embedder "
    "(it shows a progress bar and is safe to interrupt and re-run), or restore the previous "
    "SPACEDUCK_EMBEDDING_* settings."
)


def embedding_fingerprint_problem() -> str | None:
    from memories.store.vector_index import fingerprint_problem
    from spaceduck.core.providers import get_embedder

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


def private_paths() -> list[Path]:
    """The data directory and every local file that holds personal data or the secret key:
    the SQLite database and its companions, huey's SQLite queue and its companions, the
    generated secret key. (On PostgreSQL the database files are the server's; on Redis, the
    queue is.)"""
    paths = [Path(settings.DATA_DIR), Path(settings.DATA_DIR) / "secret_key"]
    database = str(connection.settings_dict["NAME"])
    if connection.vendor == "sqlite" and not (database == ":memory:" or "mode=memory" in database):
        paths += sqlite_files(database)
    queue = settings.HUEY.get("filename")
    if queue and not settings.HUEY_IMMEDIATE:
        paths += [Path(str(queue)), *(Path(f"{queue}{suffix}") for suffix in SQLITE_COMPANIONS)]
    return paths


@register()
def check_private_files(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A warning per private file (or the data directory) that others may read."""
    warnings: list[CheckMessage] = []
    for path in private_paths():
        mode = too_wide(path)
        if mode is None:
            continue
        fixed = "700" if path.is_dir() else "600"
        warnings.append(
            Warning(
                f"{path} has mode {mode:04o}: other users of this machine may read it "
                "(it holds personal data or the secret key).",
                hint=f"chmod {fixed} {shlex.quote(str(path))}",
                id="spaceduck.W004",
            )
        )
    return warnings


# Collations that order text by its bytes, as SQLite does (the code point order of UTF-8).
BYTE_ORDER_COLLATIONS = {"C", "POSIX", "C.UTF-8", "C.utf8", "ucs_basic"}


def collation_problem(collation: str) -> str | None:
    """Why a database collation orders text unlike SQLite, or None."""
    if collation in BYTE_ORDER_COLLATIONS:
        return None
    return (
        f"the database sorts text by the locale {collation!r}, so lists ordered by fact key, "
        "namespace or note id come out in another order than on SQLite (e.g. case ignored)"
    )


@register()
def check_database_collation(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        collation = cursor.execute(
            "SELECT datcollate FROM pg_database WHERE datname = current_database()"
        ).fetchone()[0]
    problem = collation_problem(str(collation))
    if problem is None:
        return []
    return [
        Warning(
            f"{problem}.",
            hint="Create the database with byte order: CREATE DATABASE spaceduck "
            "TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C.UTF-8' (or move it with "
            "manage.py export and import).",
            id="spaceduck.W003",
        )
    ]


NAME_HINT = (
    "No request reaches these rows under this name any more. To keep them: "
    "`manage.py export FILE --namespace 'NAME'` (it takes the name as stored; in a shell "
    "write a hidden character as in $'user:ali\\u00adce'), correct the name in the file, "
    "`manage.py erase 'NAME'`, then `manage.py import FILE`. To drop them: `manage.py erase "
    "'NAME'` alone. A token's grant: revoke the token and create one for the corrected name."
)
TOMBSTONE_HINT = (
    "An erasure record keeps the name it erased, as it was; on the People page it may look "
    "like another namespace. Nothing to repair: once read, silence it with "
    "SILENCED_SYSTEM_CHECKS = ['spaceduck.W007']."
)


@register()
def check_namespace_names(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A warning per table and stored namespace that hides characters or is not NFC."""
    from spaceduck.models import NamespaceErasure
    from spaceduck.ops.namespace_names import stored_name_problems

    warnings: list[CheckMessage] = []
    try:
        with transaction.atomic():  # a savepoint: a failed read leaves the caller's transaction
            problems = list(stored_name_problems())
    except DatabaseError:
        # Tables not created or not migrated yet (a new release before `migrate`): there is
        # nothing stored to warn about, and health names the pending migrations.
        return []
    for found in problems:
        if found.token:
            where = f"granted to token {found.token} ({found.table})"
        else:
            where = f"held by {found.rows} row(s) of {found.table}"
        tombstone = found.table == NamespaceErasure._meta.db_table
        warnings.append(
            Warning(
                f"Namespace {found.name!r}, {where}, {found.problem}.",
                hint=TOMBSTONE_HINT if tombstone else NAME_HINT,
                id="spaceduck.W007" if tombstone else "spaceduck.W006",
            )
        )
    return warnings
