"""Bisection on a verdict over a dose grid: brackets that hold the true step, every tested dose kept, a
non-monotone response reported, an unjudgeable dose stopping the axis."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policies import Verdict
from tools.tolerance.bisection import DosePoint, search

GRID = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


def step(warn_at: float | None, block_at: float | None, calls: list[float] | None = None):  # type: ignore[no-untyped-def]
    def judge(dose: float) -> DosePoint:
        if calls is not None:
            calls.append(dose)
        verdict = Verdict.PASS
        if warn_at is not None and dose >= warn_at:
            verdict = Verdict.WARNING
        if block_at is not None and dose >= block_at:
            verdict = Verdict.BLOCK
        return DosePoint(dose=dose, verdict=verdict)

    return judge


@settings(max_examples=200, deadline=None)
@given(warn=st.integers(0, len(GRID)), block=st.integers(0, len(GRID)))
def test_the_brackets_hold_the_true_thresholds(warn: int, block: int) -> None:
    warn = min(warn, block)  # WARNING comes no later than BLOCK
    warn_at = GRID[warn] if warn < len(GRID) else None
    block_at = GRID[block] if block < len(GRID) else None
    calls: list[float] = []
    found = search(GRID, step(warn_at, block_at, calls))
    for level, true_index in (("WARNING", warn), ("BLOCK", block)):
        bracket = found.brackets[level]  # type: ignore[index]
        if true_index == len(GRID):  # never reached
            assert bracket.reached is None and bracket.tolerated == GRID[-1]
        else:
            assert bracket.reached == GRID[true_index]
            assert bracket.tolerated == (GRID[true_index - 1] if true_index > 0 else None)
    assert found.monotone and found.incomplete is None
    assert len(calls) == len(set(calls)) <= 2 * 4 + 1  # each dose measured once; two bisections of 10 doses
    assert [p.dose for p in found.points] == sorted(set(calls))  # every dose tested is in the record


def test_a_milder_verdict_at_a_larger_dose_is_reported_not_hidden() -> None:
    def judge(dose: float) -> DosePoint:  # BLOCK at 1.0 but PASS at 0.5, WARNING from 0.05 to 0.2
        verdict = Verdict.BLOCK if dose == 1.0 else Verdict.WARNING if 0.05 <= dose <= 0.2 else Verdict.PASS
        return DosePoint(dose=dose, verdict=verdict)

    found = search(GRID, judge)
    assert not found.monotone
    assert found.brackets["BLOCK"].reached == 1.0


def test_an_unjudgeable_dose_stops_the_axis_with_the_reason() -> None:
    def judge(dose: float) -> DosePoint:
        if dose >= 0.5:
            return DosePoint(dose=dose, verdict=Verdict.INCOMPLETE, reasons=["too_few_rows"])
        return DosePoint(dose=dose, verdict=Verdict.PASS)

    found = search(GRID, judge)
    assert found.brackets == {} and found.incomplete == "dose 1: INCOMPLETE (too_few_rows)"


@pytest.mark.parametrize("grid", [(), (0.2, 0.1)])
def test_a_grid_must_be_ascending_and_non_empty(grid: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match="ascending"):
        search(grid, step(None, None))
