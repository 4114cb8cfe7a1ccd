"""What a `manage.py` command costs before it does anything: CPU seconds per start.

``python manage.py bench startup [--commands help,check] [--runs 5]``

Runs each command (``python manage.py <command>``) ``--runs`` times in a fresh
interpreter with this process's environment and prints the median and the spread of
its user + system CPU time (the children's rusage), which waiting on a busy machine does
not inflate as it does wall time. ``python -X importtime manage.py <command>`` then says
which imports the time goes to.

Bytecode caching is on, as in a deployment (``PYTHONDONTWRITEBYTECODE`` is dropped from
the children's environment and one unmeasured start writes the cache): without it every
start compiles the project's ~180 modules again, ~0.15 s of CPU no service pays.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from django.conf import settings

from spaceduck.ops.benchmarks.scratch import Writer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--commands", default="help,check", help="comma-separated commands")
    parser.add_argument("--runs", type=int, default=5, help="starts of each command")


def cpu_seconds(command: list[str]) -> float:
    """User + system CPU of one ``python manage.py COMMAND`` run to its end."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), *command],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(options: dict[str, Any], stdout: Writer) -> None:
    for name in options["commands"].split(","):
        cpu_seconds(name.split())  # writes the bytecode cache
        times = [cpu_seconds(name.split()) for _ in range(max(options["runs"], 1))]
        stdout.write(
            f"manage.py {name}: median {statistics.median(times):.2f} s CPU "
            f"(min {min(times):.2f}, max {max(times):.2f}, {len(times)} runs)"
        )
