"""gunicorn's configuration module for `manage.py serve` (``--config python:...``): the
hooks that cannot be given on the command line.

A stopping web worker holds the listening socket it inherited until its process is gone,
so a restart on the same port waits for every worker's exit. Python's exit collects the
whole heap (Django, the embedder, the vector cache: ~0.4 s of CPU a worker, seconds
when 4 workers and the machine's other jobs share 2 cores); frozen objects are skipped.
"""

from __future__ import annotations

import gc
from typing import Any


def worker_exit(server: Any, worker: Any) -> None:
    """The worker has finished its requests: leave its heap to the OS, uncollected."""
    gc.freeze()
