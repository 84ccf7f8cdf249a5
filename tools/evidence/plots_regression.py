"""A regressor's two evidence plots: predicted vs actual (baseline and mutated), and the histogram of the signed
prediction change. Inputs are the scored rows only (``plots.write_plots`` drops failed and non-finite rows)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from tools.evidence.formats import plural
from tools.evidence.plot_common import new_figure, not_computable, plain_log_counts

SCATTER_POINTS = 4_000  # drawn points per series: more only adds ink (and ~0.1 s per 10k markers)
CHANGE_BINS = 50
_SAMPLE_SEED = 0  # a fixed subsample so the same input always gives the same bytes


def _subsample(n: int, limit: int = SCATTER_POINTS) -> np.ndarray:
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(_SAMPLE_SEED).choice(n, size=limit, replace=False))


def fit_figure(slug: str, y: np.ndarray, base: np.ndarray, mut: np.ndarray, failed: int) -> Figure:
    """Predicted (vertical) against actual (horizontal), one colour per run; the diagonal is a perfect model."""
    known = np.isfinite(y)
    shown = min(int(known.sum()), SCATTER_POINTS)
    figure = new_figure(
        f"Predicted vs actual, baseline vs mutated: {slug}",
        f"{len(y):,} scored rows ({shown:,} drawn); {failed:,} failed rows excluded",
    )
    if not known.any():
        not_computable(figure, "no scored row has a finite actual value")
        return figure
    y, base, mut = y[known], base[known], mut[known]
    picks = _subsample(len(y))
    axes = figure.add_subplot()
    for scores, name, color, marker in ((base, "baseline", "tab:blue", "o"), (mut, "mutated", "tab:red", "x")):
        mae = float(np.mean(np.abs(scores - y)))
        axes.scatter(
            y[picks],
            scores[picks],
            s=6,
            marker=marker,
            color=color,
            alpha=0.4,
            linewidths=0.6,
            label=f"{name} (MAE {mae:.4g})",
        )
    low, high = float(min(y.min(), base.min())), float(max(y.max(), base.max()))
    axes.plot([low, high], [low, high], color="0.4", linestyle=":", linewidth=1, label="predicted = actual")
    axes.set(xlabel="actual", ylabel="predicted")
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left", fontsize=9, markerscale=2)
    return figure


def change_figure(slug: str, base: np.ndarray, mut: np.ndarray, failed: int, tolerance: float | None) -> Figure:
    """Signed change mutated - baseline per row, log counts; the tolerance lines bound what counts as "moved"."""
    change = mut - base
    figure = new_figure(
        f"Prediction change (mutated - baseline): {slug}",
        f"{len(change):,} scored rows; {failed:,} failed rows excluded",
    )
    if len(change) == 0:
        not_computable(figure, "no row was scored successfully")
        return figure
    low, high = float(change.min()), float(change.max())
    # No spread to bin (nothing changed, or every row by the same amount): one unit around the only value.
    span = (low, high) if low < high else (low - 0.5, high + 0.5)
    counts, edges = np.histogram(change, bins=CHANGE_BINS, range=span)
    axes = figure.add_subplot()
    # Unchanged rows pile up at 0 and would flatten the tails that matter, hence the log count axis.
    axes.hist(edges[:-1], bins=edges.tolist(), weights=counts, log=True, color="tab:gray", alpha=0.75, label="rows")
    if tolerance is not None:
        moved = int(np.count_nonzero(np.abs(change) > tolerance))
        for sign in (-1, 1):
            axes.axvline(
                sign * tolerance,
                color="tab:red",
                linestyle=":",
                linewidth=1.6,
                label=f"±tolerance {tolerance:.4g} ({moved:,} rows beyond)" if sign > 0 else None,
            )
    unchanged = int(np.count_nonzero(change == 0))
    axes.set(xlabel=f"prediction change (min {low:.4g}, max {high:.4g})", ylabel="rows (log scale)")
    plain_log_counts(axes, tallest=float(counts.max()))
    axes.grid(alpha=0.3)
    axes.legend(loc="upper right", fontsize=9, title=f"{plural(unchanged, 'row')} unchanged", title_fontsize=8)
    return figure
