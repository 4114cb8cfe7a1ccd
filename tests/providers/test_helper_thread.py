"""The helper thread that takes half of a short query's work."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from spaceduck.providers.embeddings import helper_thread
from spaceduck.providers.embeddings.helper_thread import HelperThread


def test_it_returns_both_results_in_order() -> None:
    helper = HelperThread()
    assert helper.both(lambda: 1, lambda: 2) == (1, 2)
    pairs = [helper.both(lambda i=i: i, lambda i=i: -i) for i in range(50)]
    assert pairs == [(i, -i) for i in range(50)]


def test_the_second_call_runs_on_the_helper_when_it_is_free() -> None:
    helper, ran_on = HelperThread(), []
    started = threading.Event()

    def first() -> None:
        # Wait for the helper to start the second call: with no wait the caller may
        # take it back first (its right), and this test would prove nothing.
        assert started.wait(timeout=10)

    def second() -> None:
        ran_on.append(threading.current_thread().name)
        started.set()

    helper.both(first, second)
    assert ran_on == ["embed-helper"]


def test_the_caller_takes_the_second_call_back_when_the_helper_is_busy() -> None:
    helper, release = HelperThread(), threading.Event()
    blocked = threading.Event()

    def hold() -> str:
        blocked.set()
        assert release.wait(timeout=10)
        return "held"

    with ThreadPoolExecutor(max_workers=1) as pool:
        other = pool.submit(helper.both, lambda: blocked.wait(timeout=10) and "waited", hold)
        assert blocked.wait(timeout=10)  # the helper is inside hold()
        # No waiting for the busy helper: both calls run here, at once.
        assert helper.both(lambda: "a", lambda: threading.current_thread().name) == (
            "a",
            threading.current_thread().name,
        )
        release.set()
        assert other.result(timeout=10) == ("waited", "held")


def test_an_error_in_either_call_reaches_the_caller() -> None:
    helper = HelperThread()

    def fail() -> int:
        raise ZeroDivisionError("second")

    with pytest.raises(ZeroDivisionError, match="second"):
        helper.both(lambda: 1, fail)
    with pytest.raises(ZeroDivisionError, match="second"):
        helper.both(fail, lambda: 1)
    assert helper.both(lambda: 1, lambda: 2) == (1, 2)  # still serving


def test_many_callers_at_once_each_get_their_own_results() -> None:
    helper = HelperThread()
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda i: helper.both(lambda: i, lambda: i * i), range(300)))
    assert results == [(i, i * i) for i in range(300)]


def test_after_a_late_helper_the_caller_works_alone_for_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    helper, release = HelperThread(), threading.Event()
    in_helper = threading.Event()
    here = threading.current_thread().name

    def slow() -> str:
        in_helper.set()
        assert release.wait(timeout=10)
        return threading.current_thread().name

    def first() -> str:
        assert in_helper.wait(timeout=10)
        # The helper finishes 50 ms after this half: later than doing it here.
        threading.Timer(0.05, release.set).start()
        return here

    monkeypatch.setattr(helper_thread, "BACK_OFF", 60.0)
    assert helper.both(first, slow) == (here, "embed-helper")
    offered: list[object] = []
    real_offer = helper._offer
    monkeypatch.setattr(helper, "_offer", lambda task: offered.append(task) or real_offer(task))
    assert helper.both(lambda: 1, lambda: 2) == (1, 2)
    assert offered == []  # backing off: nothing handed over
    helper._alone_until = 0.0  # BACK_OFF seconds later
    assert helper.both(lambda: 1, lambda: 2) == (1, 2)
    assert len(offered) == 1
