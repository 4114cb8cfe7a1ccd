"""Files only the service can read (issue 37, item 5): whatever the umask, a new data directory
is 0700 and the database, its -wal/-shm, the queue file, its companions and the secret key are
0600; `manage.py check` names each existing file that is wider (spaceduck.W004).

The service writes no log files (its logs go to the console), so there is none to check here.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from spaceduck.core.private_files import (
    create_private_file,
    open_private_log,
    write_private_text,
)
from spaceduck.ops.checks import check_private_files
from tests.processes import MANAGE, service_env

# Run in a fresh deployment under the test's umask: migrate, one write to the database and
# one to the queue, then the mode of every file in the data directory while both are open
# (SQLite removes -wal and -shm when the last connection closes).
WRITE_AND_LIST = """
import json, os, stat
from django.conf import settings
from django.core.management import call_command
call_command("migrate", "--no-input", verbosity=0)
from memories.write.services import create_thread
create_thread("user:alice", title="a write, so the database has a -wal")
from huey.contrib.djhuey import HUEY
if not settings.REDIS_URL:
    HUEY.storage.enqueue(b"a task", 0)
print(json.dumps({
    path.name: stat.S_IMODE(path.lstat().st_mode)
    for path in [settings.DATA_DIR, *settings.DATA_DIR.iterdir()]
    if path.name != "static"
}))
"""


def _run(env: dict[str, str], umask: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, MANAGE, *args],
        env=env,
        umask=umask,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _fresh_deployment(tmp_path: Path, umask: int) -> tuple[dict[str, str], dict[str, int]]:
    env = service_env(tmp_path / "data")  # the data directory does not exist yet
    result = _run(env, umask, "shell", "-c", WRITE_AND_LIST)
    assert result.returncode == 0, result.stderr
    return env, json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask022", "umask000"])
def test_a_new_deployment_is_readable_by_its_owner_only(tmp_path: Path, umask: int) -> None:
    _env, modes = _fresh_deployment(tmp_path, umask)
    assert modes.pop("data") == 0o700
    assert modes.pop("secret_key") == 0o600
    if connection.vendor == "sqlite":
        # The database and the queue, each with the WAL and shared memory of the open write.
        for name in (
            "spaceduck.sqlite3",
            "spaceduck.sqlite3-wal",
            "spaceduck.sqlite3-shm",
            "spaceduck.huey.sqlite3",
            "spaceduck.huey.sqlite3-wal",
            "spaceduck.huey.sqlite3-shm",
        ):
            assert modes.get(name) == 0o600, (name, oct(modes.get(name, 0)))
    # Nothing else either (the write lock, anything added later): no file is wider.
    assert {name: oct(mode) for name, mode in modes.items() if mode != 0o600} == {}


@pytest.mark.slow
@pytest.mark.sqlite_only
def test_check_names_a_wider_database_and_the_chmod_that_fixes_it(tmp_path: Path) -> None:
    env, _modes = _fresh_deployment(tmp_path, 0o022)
    quiet = _run(env, 0o022, "check")
    assert quiet.returncode == 0, quiet.stderr
    assert "spaceduck.W004" not in quiet.stdout + quiet.stderr

    data = Path(env["SPACEDUCK_DATA_DIR"])
    (data / "spaceduck.sqlite3").chmod(0o644)
    (data / "spaceduck.huey.sqlite3").chmod(0o640)
    data.chmod(0o755)
    warned = _run(env, 0o022, "check")
    assert warned.returncode == 0, warned.stderr  # a warning, not an error
    out = warned.stdout + warned.stderr
    assert f"{data / 'spaceduck.sqlite3'} has mode 0644" in out
    assert f"HINT: chmod 600 {data / 'spaceduck.sqlite3'}" in out
    assert f"{data / 'spaceduck.huey.sqlite3'} has mode 0640" in out
    assert f"{data} has mode 0755" in out
    assert f"HINT: chmod 700 {data}\n" in out
    assert "secret_key" not in out  # still 0600: not named


@pytest.mark.django_db
def test_check_warns_in_process_and_is_silent_for_private_files() -> None:
    data = Path(settings.DATA_DIR)
    wider = [data]
    if connection.vendor == "sqlite":
        connection.ensure_connection()
        wider.append(Path(connection.settings_dict["NAME"]))
    assert [w for w in check_private_files() if "W004" in w.id] == []
    before = {path: stat.S_IMODE(path.stat().st_mode) for path in wider}
    try:
        for path in wider:
            path.chmod(0o755 if path.is_dir() else 0o644)
        messages = {w.msg.split(" has mode")[0]: w.hint for w in check_private_files()}
    finally:
        for path, mode in before.items():
            path.chmod(mode)
    assert messages == {
        str(path): f"chmod {'700' if path.is_dir() else '600'} {path}" for path in wider
    }


@pytest.mark.parametrize("umask", [0o022, 0o000, 0o277], ids=["umask022", "umask000", "umask277"])
def test_private_files_are_0600_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        assert create_private_file(tmp_path / "db") is True
        assert write_private_text(tmp_path / "key", "secret") is True
        for line in (b"one\n", b"two\n"):  # the benchmarks' server logs (serve.log, mcp.log)
            with open_private_log(tmp_path / "serve.log") as log:
                log.write(line)
    finally:
        os.umask(old)
    for name in ("db", "key", "serve.log"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    assert (tmp_path / "serve.log").read_bytes() == b"one\ntwo\n"
    assert (tmp_path / "key").read_text() == "secret"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no leftovers


def test_existing_files_are_left_as_they_are(tmp_path: Path) -> None:
    """Creating never changes a file that exists: its content stays, and its mode is the
    operator's to change (the check tells them how)."""
    existing = tmp_path / "key"
    existing.write_text("kept")
    existing.chmod(0o640)
    assert write_private_text(existing, "new") is False
    assert create_private_file(existing) is False
    assert existing.read_text() == "kept"
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640
    # And no directory to create it in: nothing happens here, the opener reports it.
    assert create_private_file(tmp_path / "missing" / "db") is False
