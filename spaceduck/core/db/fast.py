"""INSERT, UPDATE and SELECT without the ORM's per-call query compilation.

Django compiles every INSERT afresh (~1 ms for a model with many fields on these
machines); the ingest path inserts three rows per message. ``fast_insert``
builds the statement once per model and prepares values exactly as ``save()``
would (``pre_save`` for auto_now/defaults, ``get_db_prep_save`` for JSON and
dates). It sends no model signals; spaceduck registers none on these models.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections, models
from django.db.models.base import ModelState
from django.db.models.expressions import Col

M = TypeVar("M", bound=models.Model)
Converter = Callable[[Any, Any, Any], Any]


# psycopg prepares a statement once a connection has run it this many times (server-side
# binding cursors only: Django's own cursors bind client-side and never prepare).
PREPARE_THRESHOLD = 2


def hot_cursor() -> Any:
    """A cursor for the write path's hand-written statements.

    On PostgreSQL its parameters are bound server-side, so psycopg prepares each statement
    once per connection and later calls skip parsing and planning (~45 us of ~105 for an
    indexed SELECT here). Django's cursors bind client-side, which cannot be prepared, and
    keep doing so for the ORM's queries (not all of them can be bound server-side, Django
    ticket #20516). ``SPACEDUCK_DATABASE_PREPARE=false`` (a pooler that cannot hold
    prepared statements) gives Django's cursor. Elsewhere: Django's cursor.
    """
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql" or not settings.DATABASE_PREPARE:
        return db.cursor()
    import psycopg  # the postgres extra, there whenever the database is PostgreSQL

    # What db.cursor() does (a usable connection, Django's wrapper: its error translation,
    # execute_wrapper hooks, query logging), without first making the ClientCursor it
    # would bind with and closing it again: ~14 cursors a message.
    db.close_if_health_check_failed()
    db.ensure_connection()
    raw = db.connection
    if raw.prepare_threshold is None:  # Django's default: never (kept for its cursors)
        raw.prepare_threshold = PREPARE_THRESHOLD
    with db.wrap_database_errors:
        # Binds server-side, unlike Django's ClientCursor.
        return db._prepare_cursor(psycopg.Cursor(raw))


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
    sql, params = insert_statement(instance)
    with hot_cursor() as cursor:
        pk = cursor.execute(sql, params).fetchone()[0]
    return inserted(instance, pk)


Statement = tuple[str, Sequence[Any]]


def insert_statement(
    instance: models.Model, *, computed: tuple[str, Statement] | None = None, returning: str = ""
) -> Statement:
    """The INSERT of ``fast_insert`` (values prepared as ``save()`` prepares them), returning
    the new key, to send with others (``fast_writes``); then ``inserted(instance, pk)``.

    ``computed``: (attname, SQL expression with its parameters): that field's value is
    computed by the statement. ``returning``: what the statement returns instead of the key.
    """
    sql, fields, _auto_pk = _insert_plan(type(instance))
    placeholders: list[str] = []
    params: list[Any] = []
    for f in fields:
        if computed is not None and f.attname == computed[0]:
            placeholders.append(computed[1][0])
            params.extend(computed[1][1])
        else:
            placeholders.append("%s")
            params.append(f.get_db_prep_save(f.pre_save(instance, True), connection))
    if computed is None and not returning:
        return sql, params
    head = sql.split(" VALUES ", 1)[0]
    tail = returning or connection.ops.quote_name(str(instance._meta.pk.column))  # type: ignore[union-attr]
    return f"{head} VALUES ({', '.join(placeholders)}) RETURNING {tail}", params


def inserted(instance: M, pk: Any) -> M:
    """``instance`` as saved, once its ``insert_statement`` ran and returned ``pk``."""
    if _insert_plan(type(instance))[2]:
        instance.pk = pk
    instance._state.adding = False
    instance._state.db = connection.alias
    return instance


def fast_writes(*statements: Statement) -> Any:
    """Run these writes in order and return the last one's first row (None without one).

    On PostgreSQL they are one statement, one round trip: the others as data-modifying CTEs
    of the last, named w0, w1, ... in order (the last may return from them). They then run
    on one snapshot and none sees another's rows (constraints, foreign keys among them, are
    checked at the statement's end), so only writes that do not read what the others write
    go together. Elsewhere they run one by one.
    """
    with hot_cursor() as cursor:
        if connection.vendor == "postgresql" and len(statements) > 1:
            *before, (last, params) = statements
            ctes = ", ".join(f"w{i} AS ({sql})" for i, (sql, _) in enumerate(before))
            values = [value for _, given in before for value in given]
            cursor.execute(f"WITH {ctes} {last}", [*values, *params])
        else:
            for sql, params in statements:
                cursor.execute(sql, params)
        return cursor.fetchone() if cursor.description else None


@cache
def _update_plan(
    model: type[models.Model], names: tuple[str, ...]
) -> tuple[str, tuple[models.Field, ...]]:
    meta = model._meta
    fields = tuple(f for name in names if isinstance(f := meta.get_field(name), models.Field))
    if len(fields) != len(names) or meta.pk is None:
        raise ValueError(f"fast_update writes concrete fields of a keyed table, got {names!r}")
    quote = connection.ops.quote_name
    assignments = ", ".join(f"{quote(str(f.column))} = %s" for f in fields)
    where = f"{quote(str(meta.pk.column))} = %s"
    return f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {where}", fields


def fast_update(instance: models.Model, names: tuple[str, ...]) -> None:
    """Write these fields of a saved row, like ``save(update_fields=names)``.

    The values are prepared as ``save()`` prepares them (``pre_save`` with
    add=False, ``get_db_prep_save``), and a row that is gone is the same
    DatabaseError as ``save()`` raises, so callers roll back as they would.
    """
    sql, fields = _update_plan(type(instance), names)
    params = [f.get_db_prep_save(f.pre_save(instance, False), connection) for f in fields]
    with hot_cursor() as cursor:
        cursor.execute(sql, [*params, instance.pk])
        if cursor.rowcount == 0:
            raise DatabaseError("Save with update_fields did not affect any rows.")


@dataclass(frozen=True)
class ReadPlan:
    """How to read a model's rows with a hand-written SELECT and build instances from them.

    ``columns`` lists every concrete column in field order, values as stored
    (datetimes are ISO text); ``instance`` turns a row selected with them into a
    model instance exactly as an ORM read would (the same converters: aware
    datetimes, JSON, booleans), without compiling a query. ``value`` converts
    one column of such a row.
    """

    columns: str
    names: tuple[str, ...]
    converters: tuple[tuple[int, Col, tuple[Converter, ...]], ...]
    quoted: tuple[str, ...] = ()  # the column names, quoted, for ``of(alias)``

    def of(self, alias: str) -> str:
        """``columns`` of the table named ``alias`` in a statement that joins others
        (PostgreSQL's form: without SQLite's unary +)."""
        return ", ".join(f"{alias}.{name}" for name in self.quoted)

    def index(self, name: str) -> int:
        return self.names.index(name)

    def value(self, row: Sequence[Any], i: int) -> Any:
        value = row[i]
        for j, col, fns in self.converters:
            if j == i:
                for convert in fns:
                    value = convert(value, col, connection)
        return value

    def instance(self, model: type[M], row: Sequence[Any]) -> M:
        values = list(row)
        for i, col, fns in self.converters:
            for convert in fns:
                values[i] = convert(values[i], col, connection)
        # What from_db() builds, without Model.__init__'s descriptor calls per
        # field (~10 us a row): every concrete field's value lives in __dict__
        # under its attname. A context build makes hundreds of these.
        instance = model.__new__(model)
        instance.__dict__.update(zip(self.names, values, strict=True))
        instance._state = ModelState()
        instance._state.adding = False
        instance._state.db = DEFAULT_DB_ALIAS
        return instance


# Plans per connection (the converters are the connection's own methods) and model.
_READ_PLANS: WeakKeyDictionary[Any, dict[type[models.Model], ReadPlan]] = WeakKeyDictionary()


def read_plan(model: type[models.Model]) -> ReadPlan:
    wrapper = connections[DEFAULT_DB_ALIAS]
    plans = _READ_PLANS.setdefault(wrapper, {})
    plan = plans.get(model)
    if plan is None:
        plan = plans[model] = _read_plan(model, wrapper)
    return plan


def _aware_datetime(value: Any, expression: Any, connection: Any) -> Any:
    """What SQLite's datetime converter returns (an aware UTC datetime), faster.

    Django parses with a regex and attaches the zone through ``make_aware``
    (~8 us a value); ``fromisoformat`` reads the stored text in C. A context
    build converts two per message for hundreds of messages.
    """
    if value is None or isinstance(value, datetime):
        return value if value is None or value.tzinfo else value.replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _converters(col: Col, wrapper: Any) -> tuple[Converter, ...]:
    if isinstance(col.field, models.DateTimeField) and settings.USE_TZ:
        return (_aware_datetime, *col.field.get_db_converters(wrapper))
    return (*wrapper.ops.get_db_converters(col), *col.field.get_db_converters(wrapper))


def _plain(wrapper: Any) -> str:
    """SQLite's unary + that drops a column's declared type (see _read_plan); PostgreSQL
    returns typed values already and has no + for text, so nothing there."""
    return "+" if wrapper.vendor == "sqlite" else ""


def _read_plan(model: type[models.Model], wrapper: Any) -> ReadPlan:
    meta = model._meta
    fields = tuple(meta.concrete_fields)
    cols = [f.get_col(meta.db_table) for f in fields]
    converters = ((i, col, _converters(col, wrapper)) for i, col in enumerate(cols))
    return ReadPlan(
        # The unary + drops each column's declared type, so the driver returns
        # values as stored instead of running its per-type converters (a Python
        # date parser per datetime of every fetched row, ~3 us each): the rows of
        # all candidates are fetched, and only the winners become instances.
        columns=", ".join(_plain(wrapper) + wrapper.ops.quote_name(str(f.column)) for f in fields),
        names=tuple(f.attname for f in fields),
        quoted=tuple(wrapper.ops.quote_name(str(f.column)) for f in fields),
        converters=tuple((i, col, fns) for i, col, fns in converters if fns),
    )
