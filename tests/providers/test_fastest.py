"""Fastest: the short path that has been faster lately (one or two ONNX Runtime threads)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from spaceduck.providers.embeddings import onnx_short
from spaceduck.providers.embeddings.onnx_short import Fastest


class Clock:
    """A fake perf_counter that only the stand-in paths move forward."""

    def __init__(self) -> None:
        self.now = 0.0
        self.costs: dict[int, float] = {}  # seconds a run of each path takes

    def __call__(self) -> float:
        return self.now


class Path:
    def __init__(self, name: int, clock: Clock) -> None:
        self.name, self.clock = name, clock

    def __call__(self, ids: Sequence[int]) -> np.ndarray:
        self.clock.now += self.clock.costs[self.name]
        return np.full(1, self.name, dtype=np.float32)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(onnx_short, "perf_counter", fake)
    monkeypatch.setattr(onnx_short, "EXPLORE", 4)
    fake.costs.update({0: 0.006, 1: 0.003})  # path 1 (two threads) faster at first
    return fake


def ask(fastest: Fastest, times: int) -> list[int]:
    return [int(fastest([101, 102])[0]) for _ in range(times)]


def test_each_path_is_tried_then_the_fastest_runs_and_another_now_and_then(
    clock: Clock,
) -> None:
    fastest = Fastest([Path(0, clock), Path(1, clock)])
    picked = ask(fastest, 12)
    assert picked[:2] == [0, 1]  # both tried first
    assert picked[2:] == [1, 0, 1, 1, 1, 0, 1, 1, 1, 0]  # every 4th question explores
    assert fastest.cost(1) == pytest.approx(0.0015)  # seconds per token


def test_it_moves_to_the_other_path_when_the_fastest_slows_down(clock: Clock) -> None:
    fastest = Fastest([Path(0, clock), Path(1, clock)])
    ask(fastest, 8)
    clock.costs[1] = 0.030  # the second core taken by another job
    ask(fastest, 8)
    assert ask(fastest, 3) == [0, 0, 0]  # questions 17-19 (20 explores)


def test_one_slow_run_does_not_decide(clock: Clock) -> None:
    fastest = Fastest([Path(0, clock), Path(1, clock)])
    ask(fastest, 5)
    clock.costs[1] = 0.100
    assert ask(fastest, 1) == [1]
    clock.costs[1] = 0.003
    assert ask(fastest, 1) == [1]  # the median of its last runs is still the fast one
