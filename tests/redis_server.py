"""A private Redis server for the process tests on PostgreSQL (huey's queue across hosts):
Debian's ``redis-server`` (``make test`` installs it), started once per test process in a
temporary directory, without persistence, stopped at exit. Each deployment a test starts
gets a database number of its own."""

from __future__ import annotations

import atexit
import functools
import itertools
import shutil
import socket
import subprocess
import tempfile
import time

DATABASES = 1024
_NEXT = itertools.count(1)


@functools.cache
def _port() -> int:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError(
            "the process tests on PostgreSQL run huey on Redis: install redis-server "
            "(apt-get install redis-server; make test does)"
        )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    directory = tempfile.mkdtemp(prefix="spaceduck-redis-")
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--databases",
            str(DATABASES),
            "--dir",
            directory,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    atexit.register(lambda: (process.terminate(), shutil.rmtree(directory, ignore_errors=True)))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return port
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"redis-server did not start on port {port}")


def fresh_url() -> str:
    """The URL of an empty Redis database no other deployment of this run uses."""
    number = next(_NEXT)
    if number >= DATABASES:
        raise RuntimeError("more deployments than Redis databases; raise DATABASES")
    return f"redis://127.0.0.1:{_port()}/{number}"
