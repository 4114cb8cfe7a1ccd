"""Named points where a crash-recovery test makes this process die on purpose.

``SPACEDUCK_FAILPOINTS="extraction.in_dedup=kill@3"`` sends SIGKILL to the process the
third time it reaches ``failpoint("extraction.in_dedup")`` (``kill`` alone: the first
time; several points are separated by ``;``). Without the variable (production), a
failpoint is one dictionary lookup. The idea is FoundationDB's and TiKV's fail points:
tests kill the worker at exact places, not at a random moment.
"""

from __future__ import annotations

import os
import signal
import threading
from collections import Counter


def _parse(spec: str) -> dict[str, int]:
    plan: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in spec.split(";"))):
        name, _, action = item.partition("=")
        verb, _, count = action.partition("@")
        if verb != "kill":
            raise ValueError(f"SPACEDUCK_FAILPOINTS: unknown action {action!r} (use kill[@N])")
        plan[name.strip()] = int(count or 1)
    return plan


_PLAN = _parse(os.environ.get("SPACEDUCK_FAILPOINTS", ""))
_hits: Counter[str] = Counter()
_lock = threading.Lock()


def failpoint(name: str) -> None:
    """Die here (SIGKILL, no clean-up, like a crash or the OOM killer) when the plan says so."""
    target = _PLAN.get(name)
    if target is None:
        return
    with _lock:
        _hits[name] += 1
        reached = _hits[name] >= target
    if reached:
        os.kill(os.getpid(), signal.SIGKILL)
