"""`manage.py serve`: the production web server (gunicorn) and a supervised worker.

The web server is gunicorn with SPACEDUCK_WEB_WORKERS processes of
SPACEDUCK_WEB_THREADS threads each; the worker is `manage.py worker` (a huey
consumer with a heartbeat and crash recovery). A worker that dies is started
again after a pause that doubles with each quick death (1 s up to 30 s) and
resets once it has run for a minute. SIGINT (Ctrl-C) and SIGTERM stop both
cleanly: gunicorn finishes its requests, the worker its tasks.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from spaceduck.blas import one_thread

MAX_BACKOFF_S = 30.0
HEALTHY_AFTER_S = 60.0  # a worker that ran this long before dying restarts at once
STOP_TIMEOUT_S = 30.0


def _child_env() -> dict[str, str]:
    """The environment of the web server and the worker: one BLAS thread each
    (spaceduck/blas.py says why)."""
    return dict(one_thread(dict(os.environ)))


class Command(BaseCommand):
    help = "Run the service: gunicorn (web) and the background worker, supervised."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--no-worker", action="store_true", help="Run the web server only.")

    def handle(self, *args: Any, **options: Any) -> None:
        self.stopping = threading.Event()
        # Ctrl-C and a service manager's SIGTERM both mean "stop cleanly".
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGTERM, self._stop)
        web = self._start_web(options["addrport"])
        supervise = not options["no_worker"] and not self._immediate()
        worker: subprocess.Popen[bytes] | None = None
        try:
            worker = self._supervise(web) if supervise else self._wait(web)
        finally:
            self._stop_all(web, worker)
        if web.returncode not in (0, None) and not self.stopping.is_set():
            raise CommandError(f"the web server exited with code {web.returncode}")

    def _stop(self, signum: int, frame: object) -> None:
        self.stopping.set()

    def _immediate(self) -> bool:
        if settings.HUEY_IMMEDIATE:
            self.stdout.write("SPACEDUCK_HUEY_IMMEDIATE is on: tasks run inline, no worker.")
        return bool(settings.HUEY_IMMEDIATE)

    def _start_web(self, addrport: str) -> subprocess.Popen[bytes]:
        workers, threads = settings.WEB_WORKERS, settings.WEB_THREADS
        self.stdout.write(f"Web server: gunicorn on http://{addrport} ({workers}x{threads}).")
        self.stdout.flush()
        command = [
            *(sys.executable, "-m", "gunicorn", "spaceduck.wsgi:application"),
            *("--bind", addrport, "--workers", str(workers), "--threads", str(threads)),
            *("--timeout", str(settings.WEB_TIMEOUT), "--graceful-timeout", "20"),
            *("--worker-class", "gthread", "--access-logfile", "-", "--log-level", "warning"),
        ]
        return subprocess.Popen(command, cwd=settings.BASE_DIR, env=_child_env())

    def _start_worker(self) -> subprocess.Popen[bytes]:
        self.stdout.write(f"Background worker: {settings.HUEY_WORKERS} threads.")
        self.stdout.flush()
        return subprocess.Popen(
            [sys.executable, "manage.py", "worker"], cwd=settings.BASE_DIR, env=_child_env()
        )

    def _wait(self, web: subprocess.Popen[bytes]) -> None:
        while not self.stopping.is_set() and web.poll() is None:
            self.stopping.wait(0.5)

    def _supervise(self, web: subprocess.Popen[bytes]) -> subprocess.Popen[bytes] | None:
        """Keep one worker running until asked to stop (or the web server dies)."""
        worker, started, quick_deaths = self._start_worker(), time.monotonic(), 0
        while not self.stopping.is_set() and web.poll() is None:
            if worker.poll() is None:
                self.stopping.wait(0.5)
                continue
            ran = time.monotonic() - started
            quick_deaths = 0 if ran >= HEALTHY_AFTER_S else quick_deaths + 1
            pause = min(MAX_BACKOFF_S, 2.0 ** max(quick_deaths - 1, 0)) if quick_deaths else 0.0
            self.stderr.write(
                f"The worker exited with code {worker.returncode} after {ran:.0f} s; "
                f"starting it again in {pause:.0f} s."
            )
            if self.stopping.wait(pause):
                break
            worker, started = self._start_worker(), time.monotonic()
        return worker

    def _stop_all(
        self, web: subprocess.Popen[bytes], worker: subprocess.Popen[bytes] | None
    ) -> None:
        # gunicorn drains on SIGTERM; huey finishes running tasks on SIGINT.
        for process, sig in ((web, signal.SIGTERM), (worker, signal.SIGINT)):
            if process is not None and process.poll() is None:
                process.send_signal(sig)
        for process in (web, worker):
            if process is None:
                continue
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.stdout.write("Stopped the web server and the worker.")
        self.stdout.flush()
