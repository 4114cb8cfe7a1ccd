"""Namespace names stored before they had to be visible and NFC-normalised.

spaceduck.core.namespaces now refuses control, format (zero-width, soft hyphen,
bidirectional) and other invisible characters in a namespace, and normalises it to
NFC. A name stored before may break either rule: ``stored_name_problems`` finds such
names in every table that holds one (the system check spaceduck.W006 lists them),
and ``existing_or_canonical`` lets ``manage.py erase`` and ``manage.py export`` name
one exactly as stored, so an operator can take its data out and remove it although
no request can reach it any more.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, models

from memories.models import Conflict, Extraction, Fact, Memory, MemoryEvent, Thread
from notes.models import Note
from spaceduck.core.namespaces import InvalidNamespace, normalize_namespace
from spaceduck.models import ApiToken, NamespaceErasure

# Every model with a ``namespace`` column (messages live in their thread's namespace).
NAMESPACE_MODELS: tuple[type[models.Model], ...] = (
    Memory,
    MemoryEvent,
    Conflict,
    Extraction,
    Fact,
    Thread,
    Note,
    NamespaceErasure,
)


@dataclass(frozen=True)
class StoredName:
    table: str  # the database table, or "spaceduck_apitoken" for a token's grant
    name: str  # as stored
    rows: int  # rows of the table holding it (for a token: 1)
    problem: str  # why it breaks the rules today
    token: str = ""  # for a grant: which token ("#3 ci-bot")


def name_problem(name: str) -> str | None:
    """Why a stored namespace breaks today's rules, or None when it is canonical."""
    try:
        canonical = normalize_namespace(name)
    except InvalidNamespace as exc:
        return f"would now be refused: {exc}"
    if canonical != name:
        return (
            f"is not NFC-normalised: requests name it {canonical!r}, so they no longer "
            "reach the rows stored under this spelling"
        )
    return None


def stored_name_problems() -> list[StoredName]:
    """Each stored namespace (per table) and token grant that breaks today's rules."""
    tables = set(connection.introspection.table_names())
    found: list[StoredName] = []
    for model in NAMESPACE_MODELS:
        table = model._meta.db_table
        if table not in tables:
            continue  # not migrated yet
        for name in _names_in(table):
            problem = name_problem(name)
            if problem is not None:
                rows = model._default_manager.filter(namespace=name).count()
                found.append(StoredName(table, name, rows, problem))
    if ApiToken._meta.db_table in tables:
        found.extend(_grant_problems())
    return found


# A skip scan (as memories.store.selectors lists namespaces): each step seeks the next
# name on an index that starts with the namespace, so n names cost n seeks, not a read
# of every row. Every management command runs the system checks, so this must be cheap.
_SKIP_SCAN_SQL = """
WITH RECURSIVE ns(name) AS (
    SELECT min(namespace) FROM {table}
    UNION ALL
    SELECT (SELECT min(namespace) FROM {table} WHERE namespace > ns.name)
    FROM ns WHERE ns.name IS NOT NULL
)
SELECT name FROM ns WHERE name IS NOT NULL
"""


def _names_in(table: str) -> list[str]:
    """Every distinct namespace of ``table`` (one of NAMESPACE_MODELS' tables)."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
        indexed = any(
            (c["index"] or c["unique"]) and c["columns"][:1] == ["namespace"]
            for c in constraints.values()
        )
        sql = _SKIP_SCAN_SQL if indexed else "SELECT DISTINCT namespace FROM {table}"
        cursor.execute(sql.format(table=table))
        return sorted(str(row[0]) for row in cursor.fetchall())


def _grant_problems() -> list[StoredName]:
    found: list[StoredName] = []
    for token in ApiToken.objects.filter(revoked_at__isnull=True).order_by("pk"):
        for grant in token.namespaces:
            if grant == "*" or grant.endswith(":*"):
                continue  # a wildcard grant names no namespace
            problem = name_problem(grant)
            if problem is not None:
                label = f"#{token.pk} {token.name}"
                found.append(StoredName(ApiToken._meta.db_table, grant, 1, problem, label))
    return found


def existing_or_canonical(namespace: str) -> str:
    """``namespace`` as stored when some table holds exactly that name and today's rules
    would refuse or respell it; otherwise its canonical form (InvalidNamespace if none)."""
    try:
        canonical = normalize_namespace(namespace)
    except InvalidNamespace:
        if _stored(namespace):
            return namespace
        raise
    if canonical != namespace and _stored(namespace):
        return namespace
    return canonical


def _stored(namespace: str) -> bool:
    return any(
        model._default_manager.filter(namespace=namespace).exists() for model in NAMESPACE_MODELS
    )
