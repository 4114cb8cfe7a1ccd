"""A second core for one short query, without BLAS threads.

Serving processes keep numpy at one BLAS thread (spaceduck/blas.py): OpenBLAS's
own threads spin while they wait, and on a machine whose other core is busy one
query took 336 ms instead of 12. Here the caller hands half of a step to one
helper thread, which sleeps (no spinning) until there is work, and does its own
half meanwhile; numpy releases the GIL inside the products, so both halves run
at once. If the helper has not started the offered half by the time the caller
has finished its own, the caller takes it back and does it too. Either that or a
helper slower than doing its half here (its core is busy elsewhere, and it was
descheduled mid-half) means the second core does not pay at the moment: every
step then runs on the caller alone for BACK_OFF seconds before the helper is
tried again. On a loaded machine that costs one slow step per BACK_OFF, not one
per step (measured: +10-25% a query when every step waited for the helper).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

# Seconds of one-thread steps after the helper did not pay (see above).
BACK_OFF = 0.5


class _Task(Generic[T]):
    def __init__(self, call: Callable[[], T]) -> None:
        self.call = call
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = self.call()
        except BaseException as exc:  # handed to the caller, which raises it
            self.error = exc
        finally:
            self.done.set()

    def result(self) -> T:
        self.done.wait()
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]  # set when error is None


class HelperThread:
    """One daemon thread that takes the second of two calls when it is free."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._pending: _Task[Any] | None = None
        self._pid = 0  # the process the thread runs in: a forked child starts its own
        self._alone_until = 0.0  # time.monotonic() until which the caller works alone

    def both(self, first: Callable[[], T], second: Callable[[], T]) -> tuple[T, T]:
        """(first(), second()): second on the helper thread if it gets to it in time."""
        task = _Task(second)
        if time.monotonic() < self._alone_until or not self._offer(task):
            return first(), second()
        started = time.perf_counter()
        value = first()
        own = time.perf_counter() - started
        if self._take_back(task):
            self._did_not_pay()
            return value, second()
        waiting = time.perf_counter()
        result = task.result()
        if time.perf_counter() - waiting > own:  # later than doing it here would have been
            self._did_not_pay()
        return value, result

    def _did_not_pay(self) -> None:
        self._alone_until = time.monotonic() + BACK_OFF

    def _offer(self, task: _Task[Any]) -> bool:
        with self._cond:
            if self._pending is not None:  # another caller's half is waiting: no helper free
                return False
            if self._pid != os.getpid():
                self._pid = os.getpid()
                threading.Thread(target=self._serve, name="embed-helper", daemon=True).start()
            self._pending = task
            self._cond.notify()
            return True

    def _take_back(self, task: _Task[Any]) -> bool:
        with self._cond:
            if self._pending is task:
                self._pending = None
                return True
            return False

    def _serve(self) -> None:
        while True:
            with self._cond:
                while self._pending is None:
                    self._cond.wait()
                task, self._pending = self._pending, None
            task.run()
