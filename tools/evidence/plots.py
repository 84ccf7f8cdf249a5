"""The two evidence plots per model: ROC baseline vs mutated, and the histogram of the probability shift.

Rendering uses ``matplotlib.figure.Figure`` with an explicit Agg canvas and never imports pyplot, so no global
backend or figure registry is touched and the server can render from worker threads. Output bytes are
deterministic for identical input: fixed size and dpi, and no "Software" PNG chunk (it names the version).

Rows follow the metrics' rule (tools/experiment/metrics.py): a row counts only when it did not fail and both
scores are finite, so the plots show exactly the rows the report's numbers were computed on.
"""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter
from sklearn.metrics import roc_curve

from tools import atomic

_DPI = 100
_SIZE = (6.4, 4.8)  # inches: 640x480 px, about 30-50 KB per PNG
_CURVE_POINTS = 1_000  # ROC vertices kept for drawing; sub-pixel error at this size
_SHIFT_BINS = 50
_PNG_METADATA: dict[str, str | None] = {"Software": None}
# File-name safe: no separators, no leading dot (hidden files, ".."), short enough for "-shift.png".
_SLUG = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}")
# Matplotlib documents itself as not thread-safe (shared font caches, text layout); separate Figures are
# mostly fine, but one lock (renders queue for a few tenths of a second each) removes the question entirely.
_RENDER_LOCK = threading.Lock()


def slugify(name: str) -> str:
    """A file-name-safe slug for a model name, e.g. ``"Churn Model (v2)"`` -> ``"churn-model-v2"``."""
    slug = re.sub(r"[^a-z0-9._]+", "-", name.lower()).strip("-._")[:100]
    return slug or "model"


def roc_points(y: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Exact ROC (fpr, tpr at every distinct score, ties as diagonal segments) and its trapezoidal AUC.

    Needs both classes. sklearn's ``roc_curve`` with ``drop_intermediate=False``, so no vertex is dropped and
    ``thin_curve`` decides what is drawn. The trapezoidal AUC with ties equals the Mann-Whitney / DeLong AUC that
    the metrics report.
    """
    fpr, tpr, _ = roc_curve(y, scores, drop_intermediate=False)
    return fpr, tpr, float(np.trapezoid(tpr, fpr))


def thin_curve(x: np.ndarray, y: np.ndarray, points: int = _CURVE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``points`` vertices, evenly spaced along the curve's length (keeps corners of long segments)."""
    if len(x) <= points:
        return x, y
    length = np.r_[0.0, np.cumsum(np.hypot(np.diff(x), np.diff(y)))]
    picks = np.unique(np.searchsorted(length, np.linspace(0.0, length[-1], points)).clip(0, len(x) - 1))
    return x[picks], y[picks]


def _labels(y_true: np.ndarray) -> np.ndarray:
    y = np.asarray(y_true)
    if y.dtype == np.bool_:
        return y
    if not np.isin(y, (0, 1)).all():
        raise ValueError("y_true must be binary: bool or 0/1 (encode the positive class as 1)")
    labels: np.ndarray = y == 1
    return labels


def _figure(title: str, subtitle: str) -> Figure:
    figure = Figure(figsize=_SIZE, dpi=_DPI)
    FigureCanvasAgg(figure)  # attaches itself as figure.canvas
    # Fixed margins rather than a layout engine: constrained layout redraws several times (slow, ~0.1 s).
    figure.subplots_adjust(left=0.13, right=0.97, bottom=0.11, top=0.87)
    figure.suptitle(f"{title}\n{subtitle}", fontsize=10, y=0.98)
    return figure


def _not_computable(figure: Figure, why: str) -> None:
    # Figure coordinates, not an axes: the fixed margins would push an axes-centred text off the middle.
    figure.text(0.5, 0.5, f"not computable\n\n{why}", ha="center", va="center", fontsize=11)


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
    axes.hist(edges[:-1], bins=edges, weights=counts, log=True, color="tab:gray", alpha=0.75, label="rows")
    axes.axvline(mean, color="tab:blue", linestyle="--", linewidth=1.5, label=f"mean {mean:.4f}")
    axes.axvline(p95, color="tab:red", linestyle=":", linewidth=1.8, label=f"p95 {p95:.4f}")
    unchanged = int(np.count_nonzero(shift == 0))
    axes.set(xlabel=f"absolute probability shift (max {top:.4f})", ylabel="rows (log scale)")
    # Plain "1,000" labels and no minor ticks: the default 10^k labels go through mathtext (~0.2 s a plot).
    axes.minorticks_off()
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    axes.set_xlim(left=0.0)
    axes.grid(alpha=0.3)
    axes.legend(loc="upper right", fontsize=9, title=f"{unchanged:,} rows with shift 0", title_fontsize=8)
    return figure


def _save(figure: Figure, path: Path) -> None:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI, metadata=_PNG_METADATA)
    atomic.write_atomically(path, buffer.getvalue())


def write_plots(
    folder: Path,
    model_slug: str,
    y_true: np.ndarray,
    baseline: np.ndarray,
    mutated: np.ndarray,
    failed: np.ndarray,
) -> dict[str, str]:
    """Write ``<slug>-roc.png`` and ``<slug>-shift.png`` into ``folder``; return {"roc": file, "shift": file}.

    Never fails on degenerate data (no scored rows, one class): the affected plot says "not computable".
    """
    if not _SLUG.fullmatch(model_slug):
        raise ValueError(f"model_slug {model_slug!r} is not file-name safe; use slugify(name)")
    y = _labels(y_true)
    base = np.asarray(baseline, dtype=np.float64)
    mut = np.asarray(mutated, dtype=np.float64)
    fail = np.asarray(failed, dtype=bool)
    if not len(y) == len(base) == len(mut) == len(fail):
        raise ValueError(f"lengths differ: y {len(y)}, baseline {len(base)}, mutated {len(mut)}, failed {len(fail)}")
    ok = ~fail & np.isfinite(base) & np.isfinite(mut)
    excluded = len(y) - int(ok.sum())
    if excluded:  # copying a million rows three times costs ~15 ms; skip it in the common no-failure case
        y, base, mut = y[ok], base[ok], mut[ok]
    files = {"roc": f"{model_slug}-roc.png", "shift": f"{model_slug}-shift.png"}
    with _RENDER_LOCK:
        _save(_roc_figure(model_slug, y, base, mut, excluded), folder / files["roc"])
        _save(_shift_figure(model_slug, base, mut, excluded), folder / files["shift"])
    return files
