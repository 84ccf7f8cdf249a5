"""The tolerance map's plots: per model, one dose-response panel per axis (the task's headline share against the
dose, with its 95% interval, the policy's warning and block bands shaded, each dose coloured by its verdict and the
found thresholds marked), and a heat map of models × axes coloured by how far along its grid each axis stays below
WARNING. Same rules as the evidence plots: an Agg canvas, no pyplot, deterministic bytes (plot_common)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from policies import Policy, Verdict
from tools import task_registry
from tools.evidence.plot_common import DPI, RENDER_LOCK, save_png
from tools.evidence.task_text import SEGMENT_METRIC_NAMES
from tools.tolerance.schema import AxisResult, ModelScan

_COLOURS = {Verdict.PASS: "tab:green", Verdict.WARNING: "tab:orange", Verdict.BLOCK: "tab:red"}


def _share_name(task: str | None) -> str:
    """What the task's headline share counts (its segment event): the flip rate, or the moved share."""
    if task is None or task not in task_registry.names():
        return "share"
    return SEGMENT_METRIC_NAMES[task_registry.get(task).segment_metric]


def dose_response(model: ModelScan, policy: Policy, path: Path) -> None:
    columns = min(4, max(1, len(model.axes)))
    rows = max(1, math.ceil(len(model.axes) / columns))
    figure = Figure(figsize=(3.2 * columns, 2.8 * rows + 0.6), dpi=DPI)
    FigureCanvasAgg(figure)
    figure.suptitle(
        f"{model.name}: {_share_name(model.task)} vs dose on {model.column} (95% CI; dots: verdict)",
        fontsize=10,
    )
    band = policy.share_band(model.task) if model.task else None
    for i, axis in enumerate(model.axes):
        _panel(figure.add_subplot(rows, columns, i + 1), axis, band)
    figure.subplots_adjust(left=0.07, right=0.98, bottom=0.1, top=0.86, hspace=0.55, wspace=0.3)
    with RENDER_LOCK:
        save_png(figure, path)


def _panel(axes: object, axis: AxisResult, band: tuple[float, float] | None) -> None:
    from matplotlib.axes import Axes

    assert isinstance(axes, Axes)
    points = [p for p in axis.search.points if p.share is not None]
    axes.set_xscale("log")
    axes.set_title(axis.axis, fontsize=9)
    axes.set_xlabel(axis.unit, fontsize=8)
    axes.tick_params(labelsize=7)
    if band is not None:
        axes.axhspan(band[0], band[1], color="tab:orange", alpha=0.12, linewidth=0)
        axes.axhspan(band[1], 1.0, color="tab:red", alpha=0.12, linewidth=0)
    if points:
        doses = np.array([p.dose for p in points])
        share = np.array([p.share for p in points], dtype=float)
        low = np.array([p.share_low if p.share_low is not None else p.share for p in points], dtype=float)
        high = np.array([p.share_high if p.share_high is not None else p.share for p in points], dtype=float)
        axes.fill_between(doses, low, high, color="tab:blue", alpha=0.2, linewidth=0)
        axes.plot(doses, share, color="tab:blue", linewidth=1)
        axes.scatter(doses, share, c=[_COLOURS.get(p.verdict, "tab:gray") for p in points], s=18, zorder=3)
    for level, style in (("WARNING", ":"), ("BLOCK", "--")):
        bracket = axis.search.brackets.get(level)  # type: ignore[call-overload]
        if bracket is not None and bracket.reached is not None:
            axes.axvline(bracket.reached, color=_COLOURS[Verdict(level)], linestyle=style, linewidth=1)
    axes.set_ylim(0, 1)


def heat_map(models: list[ModelScan], path: Path, rows: list[str] | None = None) -> None:
    """Models × axes (or, with `rows`, one labelled row per model scan: "column · model"); the colour is the share of
    the axis's grid tolerated before WARNING (1 = never warns)."""
    labels = rows or [m.name for m in models]
    kept = [(label, m) for label, m in zip(labels, models, strict=True) if m.axes]
    scanned = [m for _, m in kept]
    names = sorted({a.axis for m in scanned for a in m.axes}, key=lambda n: _ORDER.get(n, 99))
    label_inches = 0.075 * max((len(label) for label, _ in kept), default=10) + 0.3  # room for the row labels
    width = 1.3 * max(len(names), 3) + label_inches + 0.3
    figure = Figure(figsize=(width, 0.7 * max(len(scanned), 1) + 1.6), dpi=DPI)
    FigureCanvasAgg(figure)
    figure.suptitle("Dose tolerated before WARNING (share of each axis's grid; label: first WARNING dose)", fontsize=9)
    axes = figure.add_subplot()
    values = np.full((len(scanned), len(names)), np.nan)
    for r, model in enumerate(scanned):
        for axis in model.axes:
            c = names.index(axis.axis)
            values[r, c] = _tolerated_share(axis)
            text = _first_warning(axis)
            axes.text(c, r, text, ha="center", va="center", fontsize=7)
    axes.imshow(values, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    axes.set_xticks(range(len(names)), names, fontsize=8, rotation=30, ha="right")
    axes.set_yticks(range(len(scanned)), [label for label, _ in kept], fontsize=8)
    figure.subplots_adjust(left=label_inches / width, right=0.98, bottom=0.3, top=0.85)
    with RENDER_LOCK:
        save_png(figure, path)


_ORDER = {n: i for i, n in enumerate(("scale_up", "scale_down", "shift_up", "shift_down", "nulls", "rounding",
                                       "clip_high", "unseen"))}  # fmt: skip


def _tolerated_share(axis: AxisResult) -> float:
    bracket = axis.search.brackets.get("WARNING")
    if axis.search.incomplete or bracket is None:
        return float("nan")
    if bracket.reached is None:
        return 1.0
    grid = sorted(axis.labels)
    return grid.index(bracket.reached) / len(grid) if bracket.reached in grid else 0.0


def _first_warning(axis: AxisResult) -> str:
    bracket = axis.search.brackets.get("WARNING")
    if axis.search.incomplete or bracket is None:
        return "unknown"
    return "—" if bracket.reached is None else axis.labels[bracket.reached].split(" (")[0]
