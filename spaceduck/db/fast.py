"""An INSERT without the ORM's per-call query compilation.

Django compiles every INSERT afresh (~1 ms for a model with many fields on these
machines); the ingest path inserts three rows per message. ``fast_insert``
builds the statement once per model and prepares values exactly as ``save()``
would (``pre_save`` for auto_now/defaults, ``get_db_prep_save`` for JSON and
dates). It sends no model signals; spaceduck registers none on these models.
"""

from __future__ import annotations

from functools import cache
from typing import TypeVar

from django.db import connection, models

M = TypeVar("M", bound=models.Model)


@cache
def _insert_plan(model: type[models.Model]) -> tuple[str, tuple[models.Field, ...], bool]:
    meta = model._meta
    auto_pk = isinstance(meta.pk, models.AutoField | models.BigAutoField)
    fields = tuple(f for f in meta.concrete_fields if not (auto_pk and f.primary_key))
    quote = connection.ops.quote_name
    columns = ", ".join(quote(str(f.column)) for f in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({placeholders}) "
        f"RETURNING {quote(str(meta.pk.column))}"  # type: ignore[union-attr]
    )
    return sql, fields, auto_pk


def fast_insert(instance: M) -> M:
    """Insert ``instance`` as a new row (like ``save(force_insert=True)``) and return it."""
    sql, fields, auto_pk = _insert_plan(type(instance))
    params = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    with connection.cursor() as cursor:
        pk = cursor.execute(sql, params).fetchone()[0]
    if auto_pk:
        instance.pk = pk
    instance._state.adding = False
    instance._state.db = connection.alias
    return instance
