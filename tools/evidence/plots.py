"""The evidence plots of a model, drawn by its task (tools/tasks/: each names its plots and draws them): binary ROC
baseline vs mutated and the probability-shift histogram (drawn here); regression predicted vs actual and the
prediction-change histogram (``plots_regression``); multiclass flip rate per class and class transitions
(``plots_multiclass``). ``write_plots`` is the one entry point.

Rows follow the metrics' rule (tools/experiment/metrics.py): a row counts only when it did not fail and both
predictions are finite, so the plots show exactly the rows the report's numbers were computed on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from policies import TaskName
from tools import task_registry
from tools.evidence.plot_common import RENDER_LOCK, new_figure, not_computable, plain_log_counts, save_png

_CURVE_POINTS = 1_000  # ROC vertices kept for drawing; sub-pixel error at this size
_SHIFT_BINS = 50
# File-name safe: no separators, no leading dot (hidden files, ".."), short enough for "-class-flips.png".
_SLUG = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}")
# Module names the binary figures call through, so a test can watch what they draw (as before the split).
_figure = new_figure
_not_computable = not_computable


def slugify(name: str) -> str:
    """A file-name-safe slug for a model name, e.g. ``"Churn Model (v2)"`` -> ``"churn-model-v2"``."""
    slug = re.sub(r"[^a-z0-9._]+", "-", name.lower()).strip("-._")[:100]
    return slug or "model"


def roc_points(y: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Exact ROC (fpr, tpr at every distinct score, ties as diagonal segments) and its trapezoidal AUC.

    Needs both classes. The vertices sklearn's ``roc_curve(drop_intermediate=False)`` gives, from one unstable
    sort: rows tied on a score reach the same vertex in any order, so the stable sort sklearn uses (and its input
    checks) only cost time, ~0.2 s per curve on a million rows. ``thin_curve`` decides what is drawn. The
    trapezoidal AUC with ties equals the Mann-Whitney / DeLong AUC that the metrics report.
    """
    order = np.argsort(scores)[::-1]  # descending
    ranked = scores[order]
    # The last row of each run of equal scores: where the curve has a vertex.
    ends = np.r_[np.flatnonzero(ranked[1:] != ranked[:-1]), len(ranked) - 1]
    true_positives = np.cumsum(np.asarray(y, dtype=np.int64)[order])[ends]
    false_positives = ends + 1 - true_positives
    tpr = np.r_[0.0, true_positives / true_positives[-1]]
    fpr = np.r_[0.0, false_positives / false_positives[-1]]
    return fpr, tpr, float(np.trapezoid(tpr, fpr))


def thin_curve(x: np.ndarray, y: np.ndarray, points: int = _CURVE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``points`` vertices, evenly spaced along the curve's length (keeps corners of long segments)."""
    if len(x) <= points:
        return x, y
    length = np.r_[0.0, np.cumsum(np.hypot(np.diff(x), np.diff(y)))]
    picks = np.unique(np.searchsorted(length, np.linspace(0.0, length[-1], points)).clip(0, len(x) - 1))
    return x[picks], y[picks]


def binary_labels(y_true: np.ndarray) -> np.ndarray:
    y = np.asarray(y_true)
    if y.dtype == np.bool_:
        return y
    if not np.isin(y, (0, 1)).all():
        raise ValueError("y_true must be binary: bool or 0/1 (encode the positive class as 1)")
    labels: np.ndarray = y == 1
    return labels


def _roc_figure(slug: str, y: np.ndarray, base: np.ndarray, mut: np.ndarray, failed: int) -> Figure:
    positives = int(y.sum())
    negatives = len(y) - positives
    figure = _figure(
        f"ROC, baseline vs mutated: {slug}",
        f"{len(y):,} scored rows ({positives:,} positive, {negatives:,} negative); {failed:,} failed rows excluded",
    )
    if positives < 2 or negatives < 2:  # the metrics' rule for AUC: otherwise the report says n/a
        _not_computable(
            figure,
            f"{positives} positive and {negatives} negative scored rows;\nROC AUC needs at least 2 of each class",
        )
        return figure
    axes = figure.add_subplot()
    axes.plot([0, 1], [0, 1], color="0.6", linestyle=":", linewidth=1, label="chance (AUC 0.500)")
    for scores, name, color, style in ((base, "baseline", "tab:blue", "-"), (mut, "mutated", "tab:red", "--")):
        fpr, tpr, auc = roc_points(y, scores)
        fpr, tpr = thin_curve(fpr, tpr)
        axes.plot(fpr, tpr, color=color, linestyle=style, linewidth=1.6, label=f"{name} (AUC {auc:.3f})")
    axes.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="false positive rate", ylabel="true positive rate")
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right", fontsize=9)
    return figure


def _shift_figure(slug: str, base: np.ndarray, mut: np.ndarray, failed: int) -> Figure:
    shift = np.abs(mut - base)
    figure = _figure(
        f"Probability shift |p_mutated - p_baseline|: {slug}",
        f"{len(shift):,} scored rows; {failed:,} failed rows excluded",
    )
    if len(shift) == 0:
        _not_computable(figure, "no row was scored successfully")
        return figure
    mean, p95, top = float(shift.mean()), float(np.quantile(shift, 0.95)), float(shift.max())
    counts, edges = np.histogram(shift, bins=_SHIFT_BINS, range=(0.0, top if top > 0 else 1.0))
    axes = figure.add_subplot()
    # Unchanged rows pile up at 0 and would flatten the tail that matters, hence the log count axis.
    axes.hist(edges[:-1], bins=edges.tolist(), weights=counts, log=True, color="tab:gray", alpha=0.75, label="rows")
    axes.axvline(mean, color="tab:blue", linestyle="--", linewidth=1.5, label=f"mean {mean:.4f}")
    axes.axvline(p95, color="tab:red", linestyle=":", linewidth=1.8, label=f"p95 {p95:.4f}")
    unchanged = int(np.count_nonzero(shift == 0))
    axes.set(xlabel=f"absolute probability shift (max {top:.4f})", ylabel="rows (log scale)")
    plain_log_counts(axes, tallest=float(counts.max()))
    axes.set_xlim(left=0.0)
    axes.grid(alpha=0.3)
    axes.legend(loc="upper right", fontsize=9, title=f"{unchanged:,} rows with shift 0", title_fontsize=8)
    return figure


@dataclass(frozen=True, kw_only=True)
class PlotInput:
    """One model's scored rows, validated for its task: failed and non-finite rows already removed."""

    task: TaskName
    y: np.ndarray  # binary: bool; regression: float; multiclass: the labels (unused by the plots)
    baseline: np.ndarray  # binary: P(positive); regression: predictions; multiclass: (n, k) probabilities
    mutated: np.ndarray
    excluded: int  # failed or non-finite rows left out
    classes: list[str]  # multiclass: the probability columns' classes; empty otherwise
    tolerance: float | None  # regression: |change| beyond which a prediction "moved"; None: not drawn


def _scores(task: TaskName, baseline: np.ndarray, mutated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    base = np.asarray(baseline, dtype=np.float64)
    mut = np.asarray(mutated, dtype=np.float64)
    dims = 2 if task_registry.get(task).per_class else 1
    if base.ndim != dims or mut.shape != base.shape:
        expected = "(n, k) class probabilities" if dims == 2 else "1-D scores"
        raise ValueError(f"{task} plots need {expected}; got baseline {base.shape} and mutated {mut.shape}")
    return base, mut


def prepare(
    task: TaskName,
    y_true: np.ndarray,
    baseline: np.ndarray,
    mutated: np.ndarray,
    failed: np.ndarray,
    *,
    classes: Sequence[str] | None = None,
    tolerance: float | None = None,
) -> PlotInput:
    """Validate one model's arrays for ``task`` and keep the rows the metrics count."""
    base, mut = _scores(task, baseline, mutated)
    y = task_registry.get(task).plot_labels(y_true)
    fail = np.asarray(failed, dtype=bool)
    if not len(y) == len(base) == len(mut) == len(fail):
        raise ValueError(f"lengths differ: y {len(y)}, baseline {len(base)}, mutated {len(mut)}, failed {len(fail)}")
    names = [str(c) for c in classes] if classes is not None else []
    if base.ndim == 2:
        names = names or [str(i) for i in range(base.shape[1])]
        if len(names) != base.shape[1]:
            raise ValueError(f"{len(names)} class names for {base.shape[1]} probability columns")
        ok = ~fail & np.isfinite(base).all(axis=1) & np.isfinite(mut).all(axis=1)
    else:
        ok = ~fail & np.isfinite(base) & np.isfinite(mut)
    excluded = len(y) - int(ok.sum())
    if excluded:  # copying a million rows three times costs ~15 ms; skip it in the common no-failure case
        y, base, mut = y[ok], base[ok], mut[ok]
    return PlotInput(task=task, y=y, baseline=base, mutated=mut, excluded=excluded, classes=names, tolerance=tolerance)


def binary_figures(slug: str, data: PlotInput) -> dict[str, Figure]:
    """The binary task's plots (tools/tasks/binary.py): ROC baseline vs mutated, and the probability shift."""
    y, base, mut, excluded = data.y, data.baseline, data.mutated, data.excluded
    return {"roc": _roc_figure(slug, y, base, mut, excluded), "shift": _shift_figure(slug, base, mut, excluded)}


def write_plots(
    folder: Path,
    model_slug: str,
    y_true: np.ndarray,
    baseline: np.ndarray,
    mutated: np.ndarray,
    failed: np.ndarray,
    *,
    task: TaskName = "binary",
    classes: Sequence[str] | None = None,
    tolerance: float | None = None,
) -> dict[str, str]:
    """Write the task's two plots into ``folder``; return {plot name: file name} (names in its task's ``plot_files``).

    The arrays are those the metrics were computed from (tools/experiment/task_metrics.py): binary 1-D positive
    probabilities with 0/1 labels; regression 1-D predictions with numeric actuals; multiclass (n, k)
    probabilities whose columns are ``classes``. ``tolerance`` (regression) draws the "moved" bounds.
    Never fails on degenerate data (no scored rows, one class): the affected plot says "not computable".
    """
    if not _SLUG.fullmatch(model_slug):
        raise ValueError(f"model_slug {model_slug!r} is not file-name safe; use slugify(name)")
    data = prepare(task, y_true, baseline, mutated, failed, classes=classes, tolerance=tolerance)
    kind = task_registry.get(task)
    files = {name: f"{model_slug}-{suffix}.png" for name, suffix in kind.plot_files.items()}
    with RENDER_LOCK:
        for name, figure in kind.figures(model_slug, data).items():
            save_png(figure, folder / files[name])
    return files
