"""Serving processes run with one BLAS thread unless the operator says otherwise."""

from __future__ import annotations

from spaceduck.core.blas import SERVING_COMMANDS, VARIABLES, one_thread


def test_one_thread_by_default_for_each_blas_library() -> None:
    assert one_thread({}) == dict.fromkeys(VARIABLES, "1")


def test_an_operators_setting_wins() -> None:
    assert one_thread({"OPENBLAS_NUM_THREADS": "4"})["OPENBLAS_NUM_THREADS"] == "4"


def test_the_long_running_commands_are_the_serving_ones() -> None:
    assert {"serve", "worker", "mcp"} == SERVING_COMMANDS
