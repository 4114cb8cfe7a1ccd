"""`manage.py serve`: the web server and a huey consumer together; Ctrl-C stops both."""

from __future__ import annotations

import signal
import subprocess
import sys
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser


def _raise_keyboard_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = "Run the web server and the background worker (huey consumer) together."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--no-worker", action="store_true", help="Run the web server only.")

    def handle(self, *args: Any, **options: Any) -> None:
        # Ctrl-C (SIGINT) and a service manager's SIGTERM both mean "stop cleanly";
        # SIGINT is set explicitly because a background shell may have ignored it.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
        worker = None if options["no_worker"] else self._start_worker()
        try:
            call_command("runserver", options["addrport"], use_reloader=False, skip_checks=True)
        except KeyboardInterrupt:
            pass
        finally:
            if worker is not None:
                self._stop_worker(worker)

    def _start_worker(self) -> subprocess.Popen[bytes] | None:
        if settings.HUEY_IMMEDIATE:
            self.stdout.write(
                "SPACEDUCK_HUEY_IMMEDIATE is on: tasks run inline, no worker started."
            )
            return None
        workers = str(settings.HUEY_WORKERS)
        self.stdout.write(f"Starting the huey consumer ({workers} workers).")
        return subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "run_huey",
                "--workers",
                workers,
                "--worker-type",
                "thread",
            ],
            cwd=settings.BASE_DIR,
        )

    def _stop_worker(self, worker: subprocess.Popen[bytes]) -> None:
        if worker.poll() is None:
            worker.send_signal(signal.SIGINT)  # huey finishes running tasks on SIGINT
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        self.stdout.write("Stopped the web server and the worker.")
        self.stdout.flush()
