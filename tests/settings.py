"""Settings for the test suite.

The environment is fixed before the real settings are read: offline providers,
the ``hash`` embedder, huey in immediate mode and a throw-away data directory,
so a developer's own ``var/`` and environment never leak into the suite.
Subprocesses started by tests (a real huey consumer, ``manage.py``) inherit it.
"""

from __future__ import annotations

import os
import tempfile

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

from spaceduck.settings import *  # noqa: E402,F403

# A file, not the in-memory default: tests with several threads or processes then
# get real SQLite locking (WAL + busy timeout), as in production.
DATABASES["default"]["TEST"]["NAME"] = str(DATA_DIR / "test.sqlite3")  # noqa: F405

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
