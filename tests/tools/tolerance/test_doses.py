"""The dose axes: which fit which kind of column, and the mutation each dose stands for."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tools.mutations import apply_mutation
from tools.tolerance.doses import AXIS_NAMES, axes_for


def by_name(kind: str, values: pd.Series) -> dict[str, object]:
    return {a.name: a for a in axes_for(kind, values)}  # type: ignore[arg-type]


def test_each_kind_gets_the_axes_that_fit_it() -> None:
    numbers = pd.Series(np.arange(100, dtype=float))
    assert list(by_name("numeric", numbers)) == [
        "nulls", "scale_up", "scale_down", "rounding", "shift_up", "shift_down", "clip_high",
    ]  # fmt: skip
    assert list(by_name("numeric", pd.Series([5.0] * 10))) == ["nulls", "scale_up", "scale_down", "rounding"]
    assert list(by_name("categorical", pd.Series(["a", "b"]))) == ["nulls", "unseen"]
    assert list(by_name("boolean", pd.Series([True, False]))) == ["nulls"]
    assert set(AXIS_NAMES) >= {a.name for kind in ("numeric", "categorical") for a in axes_for(kind, numbers)}  # type: ignore[arg-type]


def test_each_dose_is_the_change_its_label_says() -> None:
    values = pd.Series(np.linspace(0, 99, 100))
    axes = {a.name: a for a in axes_for("numeric", values)}
    assert axes["scale_up"].mutation(2.0).model_dump()["factor"] == 2.0 and axes["scale_up"].label(2.0) == "×2"
    assert axes["scale_down"].mutation(4.0).model_dump()["factor"] == 0.25 and axes["scale_down"].label(4.0) == "÷4"
    assert axes["rounding"].mutation(10.0).model_dump()["decimals"] == -1
    std = float(values.std(ddof=0))
    assert axes["shift_down"].mutation(0.5).model_dump()["offset"] == pytest.approx(-0.5 * std)
    assert axes["shift_up"].label(0.5) == f"+0.5σ (+{0.5 * std:.4g})"
    clipped = apply_mutation(values, axes["clip_high"].mutation(0.1))
    assert (clipped != values).mean() == pytest.approx(0.09, abs=0.011)  # the top 10% (the quantile itself stays)
    nulls = apply_mutation(values, axes["nulls"].mutation(0.2))
    assert nulls.isna().mean() == pytest.approx(0.2) and axes["nulls"].label(0.2) == "20% nulls"


@pytest.mark.parametrize("name", ["scale_up", "scale_down", "nulls", "rounding", "shift_up", "clip_high"])
def test_grids_ascend_so_a_larger_dose_is_a_larger_change(name: str) -> None:
    axis = {a.name: a for a in axes_for("numeric", pd.Series(np.arange(50, dtype=float)))}[name]
    assert list(axis.grid) == sorted(axis.grid) and len(set(axis.grid)) == len(axis.grid)
