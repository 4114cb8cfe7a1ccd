"""Django's SQLite backend on ``sqlean.py``, with sqlite-vec on every connection.

The stock Python here is built without ``enable_load_extension``, so the
standard library's ``sqlite3`` cannot load sqlite-vec. ``sqlean.py`` is a
drop-in DB-API module with its own SQLite that can. Django's backend binds the
``sqlite3`` module at import time in a few places (the connection factory, the
cursor class, the type adapters), so those are re-declared here against
``sqlean``; everything else is inherited unchanged.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping
from functools import lru_cache
from itertools import tee
from typing import Any

import sqlean.dbapi2 as Database
from django.db.backends.sqlite3 import base as sqlite3_base
from django.db.backends.sqlite3._functions import register as register_functions
from django.utils.asyncio import async_unsafe
from django.utils.dateparse import parse_date, parse_datetime, parse_time

from spaceduck.core.db.backend import writelock
from spaceduck.core.fts import namespaced_terms
from spaceduck.core.private_files import create_private_file

Database.register_converter("bool", b"1".__eq__)
Database.register_converter("date", sqlite3_base.decoder(parse_date))
Database.register_converter("time", sqlite3_base.decoder(parse_time))
Database.register_converter("datetime", sqlite3_base.decoder(parse_datetime))
Database.register_converter("timestamp", sqlite3_base.decoder(parse_datetime))
Database.register_adapter(decimal.Decimal, str)
Database.register_adapter(datetime.date, sqlite3_base.adapt_date)
Database.register_adapter(datetime.datetime, sqlite3_base.adapt_datetime)


class SQLiteCursorWrapper(Database.Cursor):  # type: ignore[misc,name-defined]
    """Django's format/pyformat -> qmark/named conversion, on a sqlean cursor."""

    def execute(self, query: str, params: Any = None) -> Any:
        if params is None:
            return super().execute(query)
        param_names = list(params) if isinstance(params, Mapping) else None
        return super().execute(self.convert_query(query, param_names=param_names), params)

    def executemany(self, query: str, param_list: Any) -> Any:
        peekable, param_list = tee(iter(param_list))
        params = next(peekable, None)
        param_names = list(params) if params and isinstance(params, Mapping) else None
        return super().executemany(self.convert_query(query, param_names=param_names), param_list)

    def convert_query(self, query: str, *, param_names: list[str] | None = None) -> str:
        if param_names is None:
            return _qmark(query)
        return query % {name: f":{name}" for name in param_names}


@lru_cache(maxsize=2048)
def _qmark(query: str) -> str:
    """``query`` with format placeholders as qmarks; cached, because the same few
    statements run over and over (a saved message runs ~25) and the regex costs
    more than the lookup."""
    return sqlite3_base.FORMAT_QMARK_REGEX.sub("?", query).replace("%%", "%")


def load_sqlite_vec(conn: Any) -> None:
    # Imported here: the package imports numpy (~0.2 s), which a command that opens no
    # connection (`manage.py help`) need not load.
    import sqlite_vec

    conn.enable_load_extension(True)
    try:
        sqlite_vec.load(conn)
    finally:
        conn.enable_load_extension(False)


class DatabaseWrapper(sqlite3_base.DatabaseWrapper):
    Database = Database
    _holds_write_lock = False
    _write_lock_fd: int | None = None

    def _start_transaction_under_autocommit(self) -> None:
        timeout = float(self.settings_dict["OPTIONS"].get("timeout", 5.0))
        database = None if self.is_in_memory_db() else str(self.settings_dict["NAME"])
        try:
            self._write_lock_fd = writelock.acquire(database, timeout)
        except TimeoutError as exc:
            raise Database.OperationalError(f"database is locked ({exc})") from None
        self._holds_write_lock = True
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._release_write_lock()
            raise

    def _release_write_lock(self) -> None:
        if self._holds_write_lock:
            self._holds_write_lock = False
            writelock.release(self._write_lock_fd)

    def _commit(self) -> None:
        try:
            super()._commit()
        finally:
            self._release_write_lock()

    def _rollback(self) -> None:
        try:
            super()._rollback()
        finally:
            self._release_write_lock()

    def _close(self) -> None:
        try:
            super()._close()
        finally:
            self._release_write_lock()

    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        params["detect_types"] = Database.PARSE_DECLTYPES | Database.PARSE_COLNAMES
        return params

    @async_unsafe
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        # SQLite would create the file 0644 under the usual umask, and its -wal and -shm
        # with the same bits: created 0600 first, they are all 0600 (one failing open()
        # per new connection once the file exists).
        database = str(conn_params["database"])
        if not (self.is_in_memory_db() or database.startswith("file:")):
            create_private_file(database)
        conn = Database.connect(**conn_params)
        register_functions(conn)
        # Used by the memories keyword index's triggers (memories migration 0008).
        conn.create_function("spaceduck_terms", 2, namespaced_terms, deterministic=True)
        load_sqlite_vec(conn)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA legacy_alter_table = OFF")
        # init_commands is set by Django's get_connection_params (from OPTIONS).
        for init_command in self.init_commands:  # type: ignore[attr-defined]
            if init_command := init_command.strip():
                conn.execute(init_command)
        return conn

    def create_cursor(self, name: str | None = None) -> Any:
        return self.connection.cursor(factory=SQLiteCursorWrapper)
