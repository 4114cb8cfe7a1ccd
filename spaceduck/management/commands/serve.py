"""`manage.py serve`: the production web server (gunicorn), a supervised worker and,
with ``--mcp HOST:PORT``, a supervised MCP endpoint.

The web server is gunicorn with SPACEDUCK_WEB_WORKERS processes of
SPACEDUCK_WEB_THREADS threads each; the worker is `manage.py worker` (a huey
consumer with a heartbeat and crash recovery); the MCP endpoint is `manage.py mcp
--http HOST:PORT` (streamable HTTP, Bearer API tokens). A supervised process that dies
is started again after a pause that doubles with each quick death (1 s up to 30 s) and
resets once it has run for a minute. SIGINT (Ctrl-C) and SIGTERM stop everything
within STOP_DEADLINE_S: gunicorn finishes its requests and the worker its tasks for
STOP_GRACE_S, then what is left is killed (an extraction cut short is leased, and the
next worker takes it up again, as after a crash), and the port is free.

Each child runs in a process group of its own, so a terminal's Ctrl-C reaches serve
alone and serve decides how each child stops. It used to reach every process at once:
gunicorn's master and workers then took their "quick exit" path, which could hang a
worker until the master killed it 20 s later, its copy of the listening socket still
bound (a restart meanwhile failed with "Address already in use"). A child also gets
SIGTERM when serve dies without stopping it (SIGKILL, out of memory), so no orphaned
gunicorn keeps the port.

The web server's health (/api/health) reports the MCP endpoint: serve tells it where
(SPACEDUCK_MCP_ADDRESS) and health asks it.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from spaceduck.core.blas import one_thread
from spaceduck.management.commands.mcp import host_port

MAX_BACKOFF_S = 30.0
HEALTHY_AFTER_S = 60.0  # a process that ran this long before dying restarts at once
# How long a stop waits for in-flight requests (gunicorn's --graceful-timeout) and running
# tasks, and when it kills whatever is left: a stop is over within 5 s.
STOP_GRACE_S = 3
STOP_DEADLINE_S = 4.0
PR_SET_PDEATHSIG = 1  # prctl(2), Linux
_LIBC = ctypes.CDLL(ctypes.util.find_library("c")) if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when serve dies (Linux; elsewhere nothing)."""
    if _LIBC is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _spawn(command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A child in its own process group (module docstring), that dies with serve."""
    return subprocess.Popen(
        command,
        cwd=settings.BASE_DIR,
        env=env,
        process_group=0,
        preexec_fn=_die_with_parent,  # serve forks from its only thread
    )


def _child_env(**extra: str) -> dict[str, str]:
    """The environment of the web server, the worker and the MCP endpoint: one BLAS thread
    each (spaceduck/core/blas.py says why)."""
    return {**one_thread(dict(os.environ)), **extra}


@dataclass
class Supervised:
    """One child kept running: restarted with a growing pause after quick deaths."""

    name: str
    command: list[str]
    stop_signal: signal.Signals
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    quick_deaths: int = 0
    restart_at: float | None = None
    log: list[str] = field(default_factory=list)

    def start(self) -> None:
        self.process = _spawn(self.command, _child_env())
        self.started, self.restart_at = time.monotonic(), None

    def check(self, say: Any) -> None:
        """Start it again when it died and its pause is over."""
        now = time.monotonic()
        if self.restart_at is not None:
            if now >= self.restart_at:
                self.start()
            return
        if self.process is None or self.process.poll() is None:
            return
        ran = now - self.started
        self.quick_deaths = 0 if ran >= HEALTHY_AFTER_S else self.quick_deaths + 1
        pause = min(MAX_BACKOFF_S, 2.0 ** max(self.quick_deaths - 1, 0)) if self.quick_deaths else 0
        say(
            f"The {self.name} exited with code {self.process.returncode} after {ran:.0f} s; "
            f"starting it again in {pause:.0f} s."
        )
        self.restart_at = now + pause


class Command(BaseCommand):
    help = (
        "Run the service: gunicorn (web), the background worker and, with --mcp, the MCP "
        "endpoint, supervised."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--no-worker", action="store_true", help="Run the web server only.")
        parser.add_argument(
            "--mcp",
            metavar="HOST:PORT",
            help="Also serve MCP over streamable HTTP at http://HOST:PORT/mcp (supervised).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        mcp = options["mcp"]
        if mcp:
            host_port(mcp, option="--mcp")  # a clear error now, not a restart loop later
        self.stopping = threading.Event()
        # Ctrl-C and a service manager's SIGTERM both mean "stop cleanly".
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGTERM, self._stop)
        # Health says "starting" until the worker's first beat is due (core/worker.py).
        os.environ["SPACEDUCK_SERVE_STARTED_AT"] = f"{time.time():.3f}"
        children = self._children(options["no_worker"], mcp)
        web = self._start_web(options["addrport"], mcp)
        try:
            for child in children:
                self.stdout.write(f"{child.name.capitalize()}: {' '.join(child.command[1:])}.")
                self.stdout.flush()
                child.start()
            while not self.stopping.is_set() and web.poll() is None:
                for child in children:
                    child.check(self.stderr.write)
                self.stopping.wait(0.5)
        finally:
            self._stop_all(web, children)
            gc.freeze()  # as its children do (core/gunicorn_hooks.py): no heap walk at exit
        if web.returncode not in (0, None) and not self.stopping.is_set():
            raise CommandError(f"the web server exited with code {web.returncode}")

    def _stop(self, signum: int, frame: object) -> None:
        self.stopping.set()

    def _children(self, no_worker: bool, mcp: str | None) -> list[Supervised]:
        manage = [sys.executable, "manage.py"]
        children = []
        if settings.HUEY_IMMEDIATE:
            self.stdout.write("SPACEDUCK_HUEY_IMMEDIATE is on: tasks run inline, no worker.")
        elif not no_worker:
            children.append(Supervised("worker", [*manage, "worker"], signal.SIGINT))
        if mcp:
            children.append(
                Supervised("MCP endpoint", [*manage, "mcp", "--http", mcp], signal.SIGTERM)
            )
        return children

    def _start_web(self, addrport: str, mcp: str | None) -> subprocess.Popen[bytes]:
        workers, threads = settings.WEB_WORKERS, settings.WEB_THREADS
        self.stdout.write(f"Web server: gunicorn on http://{addrport} ({workers}x{threads}).")
        self.stdout.flush()
        command = [
            *(sys.executable, "-m", "gunicorn", "spaceduck.wsgi:application"),
            *("--bind", addrport, "--workers", str(workers), "--threads", str(threads)),
            *("--timeout", str(settings.WEB_TIMEOUT), "--graceful-timeout", str(STOP_GRACE_S)),
            *("--config", "python:spaceduck.core.gunicorn_hooks"),
            *("--worker-class", "gthread", "--access-logfile", "-", "--log-level", "warning"),
            # Request lines and referers without query values, namespace ids or e-mails.
            *("--logger-class", "spaceduck.core.logs.AccessLog"),
        ]
        env = _child_env(SPACEDUCK_MCP_ADDRESS=mcp) if mcp else _child_env()
        return _spawn(command, env)

    def _stop_all(self, web: subprocess.Popen[bytes], children: list[Supervised]) -> None:
        # gunicorn drains on SIGTERM; huey finishes running tasks on SIGINT; uvicorn on SIGTERM.
        running = [(web, signal.SIGTERM)] + [
            (child.process, child.stop_signal) for child in children if child.process is not None
        ]
        for process, sig in running:
            if process.poll() is None:
                process.send_signal(sig)
        deadline = time.monotonic() + STOP_DEADLINE_S
        for process, _ in running:
            try:
                process.wait(timeout=max(deadline - time.monotonic(), 0.0))
            except subprocess.TimeoutExpired:
                _kill_group(process)
        names = ["the web server", *(f"the {child.name}" for child in children)]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        self.stdout.write(f"Stopped {listed}.")
        self.stdout.flush()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill a child that outlived the deadline, and its own children (gunicorn's workers,
    which hold the listening socket): its process group bears its pid."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
