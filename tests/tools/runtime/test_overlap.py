"""alongside: both results, either exception, nothing left running."""

from __future__ import annotations

import threading
import time

import pytest

from tools.runtime.overlap import alongside


def test_both_results_and_the_side_runs_on_another_thread() -> None:
    main_thread = threading.get_ident()
    result, side = alongside(lambda: threading.get_ident(), lambda: threading.get_ident())
    assert result == main_thread and side != main_thread


def test_the_two_overlap() -> None:
    started = threading.Event()

    def side() -> str:
        started.set()
        return "side"

    # main waits for the side to have started: sequential execution would deadlock (and the wait time out)
    result, value = alongside(lambda: started.wait(timeout=10), side)
    assert result is True and value == "side"


def test_a_side_exception_is_raised() -> None:
    def side() -> None:
        raise LookupError("labels missing")

    with pytest.raises(LookupError, match="labels missing"):
        alongside(lambda: 1, side)


def test_a_main_exception_wins_and_the_side_has_finished() -> None:
    finished: list[bool] = []

    def side() -> None:
        time.sleep(0.05)
        finished.append(True)

    def main() -> None:
        raise ValueError("baseline failed")

    with pytest.raises(ValueError, match="baseline failed"):
        alongside(main, side)
    assert finished == [True]
