"""Settings for the test suite.

The environment is fixed before the real settings are read: offline providers,
the ``hash`` embedder, huey in immediate mode and a throw-away data directory,
so a developer's own ``var/`` and environment never leak into the suite.
Subprocesses started by tests (a real huey consumer, ``manage.py``) inherit it.
"""

from __future__ import annotations

import os
import tempfile

# SPACEDUCK_TEST_BACKEND=postgres runs the suite on a private PostgreSQL (with pgvector)
# started for this run (tests/postgres.py); unset, on the SQLite file as in production.
_BACKEND = os.environ.get("SPACEDUCK_TEST_BACKEND", "sqlite")
if _BACKEND not in {"sqlite", "postgres"}:
    raise RuntimeError(f"SPACEDUCK_TEST_BACKEND must be sqlite or postgres, not {_BACKEND!r}")

for _name in list(os.environ):
    if _name.startswith("SPACEDUCK_"):
        del os.environ[_name]
os.environ.update(
    {
        "SPACEDUCK_DATA_DIR": tempfile.mkdtemp(prefix="spaceduck-tests-"),
        "SPACEDUCK_EMBEDDING_PROVIDER": "hash",
        "SPACEDUCK_CHAT_PROVIDER": "heuristic",
        "SPACEDUCK_HUEY_IMMEDIATE": "1",
        "SPACEDUCK_TOKEN_TOUCH_SECONDS": "0",
    }
)

if _BACKEND == "postgres":
    from tests.postgres import server_url

    os.environ["SPACEDUCK_DATABASE_URL"] = server_url()

from spaceduck.settings import *  # noqa: E402,F403

# A file, not the in-memory default: tests with several threads or processes then
# get real SQLite locking (WAL + busy timeout), as in production.
if _BACKEND == "sqlite":
    DATABASES["default"]["TEST"]["NAME"] = str(DATA_DIR / "test.sqlite3")  # noqa: F405

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
