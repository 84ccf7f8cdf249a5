"""The tolerance map's plots: per model, one dose-response figure per axis, and a heat map of models × axes.

A panel plots the task's headline share (flip rate or moved share) against the dose, with its 95% interval and the
policy's warning and block bands shaded. The plotted share is not always what decided a dose: an AUC drop, a
segment or failed rows can set a BLOCK while the share sits low. So each dose is drawn with the marker of the rule
that decided it (its colour is its verdict), and the legend names every marker, colour, line and band. One
figure per axis, so the chat shows each readable at its width.

Same rules as the evidence plots: an Agg canvas, no pyplot, deterministic bytes (plot_common)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from policies import Policy, Verdict
from tools import task_registry
from tools.evidence.plot_common import DPI, RENDER_LOCK, save_png
from tools.evidence.task_text import SEGMENT_METRIC_NAMES
from tools.tolerance.bisection import DosePoint
from tools.tolerance.schema import AxisResult, ModelScan

_COLOURS = {Verdict.PASS: "tab:green", Verdict.WARNING: "tab:orange", Verdict.BLOCK: "tab:red"}
_HEADLINE_MARKER = "o"
_OTHER_MARKERS = ("s", "^", "D", "v", "P", "X", "h")
_LEVEL_SUFFIXES = ("_block", "_warning")
_LEGEND_INCHES = 2.5
_WORDS = {"auc": "AUC", "mae": "MAE", "rmse": "RMSE", "f1": "F1"}
_RULES = {"segment": "a segment's share", "inference_failures": "failed rows", "rows_gone_share": "rows gone"}


@dataclass(frozen=True)
class PlottedDose:
    """One dose as the panel draws it: where, in which colour (verdict) and under which rule (marker)."""

    dose: float
    share: float
    verdict: Verdict
    rule: str  # "flip rate", "AUC drop", …; "passed" for a PASS dose


def _share_metric(task: str | None) -> str:
    """The code of the task's headline share (its segment event): flip_rate or moved_share."""
    if task is None or task not in task_registry.names():
        return "share"
    return task_registry.get(task).segment_metric


def _metric_name(share_metric: str) -> str:
    """The headline share as people say it: flip_rate -> "flip rate"."""
    return SEGMENT_METRIC_NAMES.get(share_metric, share_metric)


def _share_name(task: str | None) -> str:
    return _metric_name(_share_metric(task))


def rule_name(code: str) -> str:
    """A reason code as a person names its rule: auc_drop_block -> "AUC drop", inference_failures_block -> "failed
    rows"."""
    metric = next((code[: -len(s)] for s in _LEVEL_SUFFIXES if code.endswith(s)), code)
    return _RULES.get(metric) or " ".join(_WORDS.get(word, word) for word in metric.split("_"))


def deciding_rule(point: DosePoint, share_metric: str) -> str:
    """The rule drawn for a dose: the headline share's when it is among the deciding reasons (the plot shows it),
    else the first deciding reason's; "passed" for a PASS dose."""
    if point.verdict == Verdict.PASS:
        return "passed"
    names = [rule_name(code) for code in point.reasons]
    headline = _metric_name(share_metric)
    if headline in names:
        return headline
    return names[0] if names else "unnamed rule"


def plotted_doses(axis: AxisResult, share_metric: str) -> list[PlottedDose]:
    return [
        PlottedDose(p.dose, float(p.share), p.verdict, deciding_rule(p, share_metric))
        for p in axis.search.points
        if p.share is not None
    ]


def _markers(model: ModelScan, share_metric: str) -> dict[str, str]:
    """One marker per rule, the same in every panel of the model: circles for the plotted share (and passes)."""
    headline = _metric_name(share_metric)
    markers = {"passed": _HEADLINE_MARKER, headline: _HEADLINE_MARKER}
    for axis in model.axes:
        for dose in plotted_doses(axis, share_metric):
            if dose.rule not in markers:
                markers[dose.rule] = _OTHER_MARKERS[(len(markers) - 2) % len(_OTHER_MARKERS)]
    return markers


def axis_figure(model: ModelScan, axis: AxisResult, policy: Policy) -> Figure:
    """One axis of the model: its dose-response panel and the legend (markers as in the model's other figures)."""
    share_metric = _share_metric(model.task)
    markers = _markers(model, share_metric)
    width, height = 3.8 + _LEGEND_INCHES, 3.6
    figure = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(figure)
    # Fixed margins in inches, not a layout engine (constrained layout redraws: ~0.1 s a figure): room for the y
    # label on the left, the x label below, the title above and the legend on the right.
    figure.subplots_adjust(
        left=0.7 / width, right=1 - (_LEGEND_INCHES + 0.1) / width, bottom=0.6 / height, top=1 - 0.75 / height
    )
    figure.suptitle(f"{model.name}: {_share_name(model.task)} by {axis.axis} on {model.column}", fontsize=10)
    band = policy.share_band(model.task) if model.task else None
    _panel(figure.add_subplot(), axis, band, share_metric, markers)
    _legend(figure, axis, band, share_metric, markers)
    return figure


def axis_figure_name(model_slug: str, axis: AxisResult) -> str:
    return f"{model_slug}-{axis.axis}.png"


def axis_figures(model: ModelScan, policy: Policy, folder: Path, model_slug: str) -> list[str]:
    """One figure per axis, written into `folder`; their names. One panel each, so the chat shows them readable at
    its width (a model's seven panels in one figure shrank there to a thumbnail)."""
    names = []
    for axis in model.axes:
        name = axis_figure_name(model_slug, axis)
        figure = axis_figure(model, axis, policy)
        with RENDER_LOCK:
            save_png(figure, folder / name)
        names.append(name)
    return names


def _panel(
    axes: Axes, axis: AxisResult, band: tuple[float, float] | None, share_metric: str, markers: dict[str, str]
) -> None:
    axes.set_xscale("log")
    axes.set_title(axis.axis, fontsize=9)
    axes.set_xlabel(axis.unit, fontsize=8)
    axes.set_ylabel(_share_label(share_metric), fontsize=8)
    axes.tick_params(labelsize=7)
    if band is not None:
        axes.axhspan(band[0], band[1], color="tab:orange", alpha=0.12, linewidth=0)
        axes.axhspan(band[1], 1.0, color="tab:red", alpha=0.12, linewidth=0)
    points = [p for p in axis.search.points if p.share is not None]
    if points:
        doses = np.array([p.dose for p in points])
        share = np.array([p.share for p in points], dtype=float)
        low = np.array([p.share_low if p.share_low is not None else p.share for p in points], dtype=float)
        high = np.array([p.share_high if p.share_high is not None else p.share for p in points], dtype=float)
        axes.fill_between(doses, low, high, color="tab:blue", alpha=0.2, linewidth=0)
        axes.plot(doses, share, color="tab:blue", linewidth=1)
    plotted = plotted_doses(axis, share_metric)
    for rule in dict.fromkeys(d.rule for d in plotted):  # one collection per rule, labelled with it
        mine = [d for d in plotted if d.rule == rule]
        axes.scatter(
            [d.dose for d in mine],
            [d.share for d in mine],
            c=[_COLOURS.get(d.verdict, "tab:gray") for d in mine],
            marker=markers[rule],
            s=30,
            edgecolors="black",
            linewidths=0.4,
            zorder=3,
            label=rule,
        )
    for level, style in (("WARNING", ":"), ("BLOCK", "--")):
        bracket = axis.search.brackets.get(level)  # type: ignore[call-overload]
        if bracket is not None and bracket.reached is not None:
            axes.axvline(bracket.reached, color=_COLOURS[Verdict(level)], linestyle=style, linewidth=1)
    if axis.search.incomplete:
        axes.text(0.5, 0.5, "thresholds unknown:\nsee scan.json", transform=axes.transAxes, ha="center", fontsize=7)
    top = _y_top(axis, band)
    axes.set_ylim(-0.03 * top, top)  # below 0 a little: doses at 0 stay whole


def _y_top(axis: AxisResult, band: tuple[float, float] | None) -> float:
    """Room for the highest interval and twice the block band, at most 1: on a 0-1 axis the 5-10% bands of the
    default policy, where the verdicts change, were a sliver."""
    highs = [p.share_high if p.share_high is not None else p.share for p in axis.search.points]
    highest = max((h for h in highs if h is not None), default=0.0)
    floor = 2 * band[1] if band is not None else 0.2
    return min(1.0, max(floor, 1.1 * highest))


def _share_label(share_metric: str) -> str:
    return f"{_metric_name(share_metric)} (95% CI)"


def _legend(
    figure: Figure,
    axis: AxisResult,
    band: tuple[float, float] | None,
    share_metric: str,
    markers: dict[str, str],
) -> None:
    headline = _metric_name(share_metric)
    used = dict.fromkeys(d.rule for d in plotted_doses(axis, share_metric))
    handles: list[Line2D | Patch] = [
        Line2D([], [], color=colour, marker="o", linestyle="", label=verdict.value)
        for verdict, colour in _COLOURS.items()
    ]
    for rule in used:
        if rule == "passed":
            continue
        text = f"decided by {rule}" + (" (plotted)" if rule == headline else " (not plotted)")
        handles.append(
            Line2D([], [], color="gray", marker=markers[rule], linestyle="", markeredgecolor="black", label=text)
        )
    handles += [
        Patch(color="tab:blue", alpha=0.3, label=f"{headline}: 95% CI"),
        Line2D([], [], color="tab:orange", linestyle=":", label="first WARNING dose"),
        Line2D([], [], color="tab:red", linestyle="--", label="first BLOCK dose"),
    ]
    if band is not None:
        handles += [
            Patch(color="tab:orange", alpha=0.25, label=f"warning band ({band[0]:.0%}–{band[1]:.0%})"),
            Patch(color="tab:red", alpha=0.25, label=f"block band (≥ {band[1]:.0%})"),
        ]
    figure.legend(handles=handles, loc="center right", fontsize=7, frameon=False)


def heat_map(models: list[ModelScan], path: Path, rows: list[str] | None = None) -> None:
    figure = heat_figure(models, rows)
    with RENDER_LOCK:
        save_png(figure, path)


def heat_figure(models: list[ModelScan], rows: list[str] | None = None) -> Figure:
    """Models × axes (or, with `rows`, one labelled row per model scan: "column · model"); the colour is the share of
    the axis's grid tolerated before WARNING (1 = never warns), its scale in a colour bar."""
    labels = rows or [m.name for m in models]
    kept = [(label, m) for label, m in zip(labels, models, strict=True) if m.axes]
    scanned = [m for _, m in kept]
    names = sorted({a.axis for m in scanned for a in m.axes}, key=lambda n: _ORDER.get(n, 99))
    label_inches = 0.075 * max((len(label) for label, _ in kept), default=10) + 0.3  # room for the row labels
    width = 1.3 * max(len(names), 3) + label_inches + 1.6
    height = 0.7 * max(len(scanned), 1) + 2.0
    figure = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(figure)
    figure.subplots_adjust(left=label_inches / width, right=1 - 1.3 / width, bottom=0.9 / height, top=1 - 0.7 / height)
    figure.suptitle(
        "How far each change can go before WARNING\n(cell: the first dose that warns; — none up to the grid's end)",
        fontsize=9,
    )
    axes = figure.add_subplot()
    values = np.full((len(scanned), len(names)), np.nan)
    for r, model in enumerate(scanned):
        for axis in model.axes:
            c = names.index(axis.axis)
            values[r, c] = _tolerated_share(axis)
            dark = not np.isnan(values[r, c]) and (values[r, c] < 0.2 or values[r, c] > 0.85)
            axes.text(c, r, _first_warning(axis), ha="center", va="center", fontsize=7, color="white" if dark else "k")
    image = axes.imshow(values, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    axes.set_xticks(range(len(names)), names, fontsize=8, rotation=30, ha="right")
    axes.set_yticks(range(len(scanned)), [label for label, _ in kept], fontsize=8)
    bar = figure.colorbar(image, ax=axes, fraction=0.05, pad=0.02)
    bar.set_label("share of the axis's doses tolerated\n(1 = never warns; blank = unknown)", fontsize=7)
    bar.ax.tick_params(labelsize=7)
    return figure


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
