"""The dose axes a column is scanned along, by the column's kind: each turns a dose (a number, larger = more change)
into one allowlisted mutation and says the dose the way people say the change.

Grids are fixed and geometric, so two scans of the same model test the same doses and a threshold reads as a
bracket between neighbours. The shift grid is in standard deviations of the column as the model reads it (a shift
of +3 means nothing without the column's scale); the clip grid in shares of rows clipped, at the quantile that
clips that share; the rounding grid in powers of ten.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tools.mutations import Kind, Mutation, parse_mutation

SHARES = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
SCALE_UP = (1.01, 1.02, 1.05, 1.1, 1.2, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 1000.0)
SIGMAS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
ROUNDING = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)  # the step rounded to: 10 ** -decimals
CLIPPED = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
AXIS_NAMES = ("scale_up", "scale_down", "shift_up", "shift_down", "nulls", "rounding", "clip_high", "unseen")


@dataclass(frozen=True)
class DoseAxis:
    """One way to change a column more and more: `mutation(dose)` and `label(dose)` ("×1.8", "3% nulls")."""

    name: str  # scale_up, scale_down, shift_up, shift_down, nulls, rounding, clip_high, unseen
    op: str
    grid: tuple[float, ...]
    mutation: Callable[[float], Mutation]
    label: Callable[[float], str]
    unit: str  # what the dose counts, for plots and tables


def axes_for(kind: Kind, values: pd.Series) -> list[DoseAxis]:
    """The axes that fit a column of this kind; `values` (the column as the model reads it) sets the shift and clip
    scales. A numeric column without spread gets no shift or clip axis (there is nothing to scale them by)."""
    axes = [_nulls()]
    if kind == "numeric":
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
        numbers = numbers[np.isfinite(numbers)]
        axes += [_scale_up(), _scale_down(), _rounding()]
        std = float(numbers.std()) if numbers.size > 1 else 0.0
        if std > 0:
            axes += [_shift(std, +1), _shift(std, -1), _clip_high(numbers)]
    elif kind == "categorical":
        axes.append(_unseen())
    return axes


def _nulls() -> DoseAxis:
    return DoseAxis(
        "nulls", "null_inject", SHARES, lambda d: parse_mutation("null_inject", {}, fraction=d), _pct("nulls"), "share"
    )


def _unseen() -> DoseAxis:
    return DoseAxis(
        "unseen",
        "unseen_category",
        SHARES,
        lambda d: parse_mutation("unseen_category", {"value": "__unseen__"}, fraction=d),
        _pct("unseen category"),
        "share",
    )


def _scale_up() -> DoseAxis:
    return DoseAxis(
        "scale_up", "scale", SCALE_UP, lambda d: parse_mutation("scale", {"factor": d}), lambda d: f"×{d:g}", "factor"
    )


def _scale_down() -> DoseAxis:
    # Dose f divides by f (×1/f): larger = more change, like scale_up.
    return DoseAxis(
        "scale_down",
        "scale",
        SCALE_UP,
        lambda d: parse_mutation("scale", {"factor": 1 / d}),
        lambda d: f"÷{d:g}",
        "divisor",
    )


def _rounding() -> DoseAxis:
    return DoseAxis(
        "rounding",
        "round",
        ROUNDING,
        lambda d: parse_mutation("round", {"decimals": -round(math.log10(d))}),
        lambda d: f"rounded to {d:g}",
        "step",
    )


def _shift(std: float, sign: int) -> DoseAxis:
    arrow = "+" if sign > 0 else "-"
    return DoseAxis(
        "shift_up" if sign > 0 else "shift_down",
        "shift",
        SIGMAS,
        lambda d: parse_mutation("shift", {"offset": sign * d * std}),
        lambda d: f"{arrow}{d:g}σ ({arrow}{d * std:.4g})",
        "σ",
    )


def _clip_high(numbers: np.ndarray) -> DoseAxis:
    def mutation(share: float) -> Mutation:
        return parse_mutation("clip", {"upper": float(np.quantile(numbers, 1 - share))})

    return DoseAxis("clip_high", "clip", CLIPPED, mutation, _pct("clipped at the top"), "share")


def _pct(what: str) -> Callable[[float], str]:
    return lambda d: f"{d * 100:g}% {what}"
