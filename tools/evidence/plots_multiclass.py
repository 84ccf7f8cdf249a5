"""A multiclass classifier's two evidence plots: the flip rate per baseline-predicted class, and how predicted
classes moved (baseline argmax -> mutated argmax, row shares). Inputs are the scored rows only.

A flip is a changed argmax, as in the metrics; a class's flip rate is over the rows the baseline predicted as that
class. Beyond ``MAX_CLASSES`` the classes the baseline predicted least are drawn together as "other".
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from tools.evidence.plot_common import new_figure, not_computable

MAX_CLASSES = 12  # a readable bar chart / annotated matrix at 640x480
_LABEL_CHARS = 14


def _label(name: str) -> str:
    return name if len(name) <= _LABEL_CHARS else name[: _LABEL_CHARS - 1] + "…"


def group_classes(base_pred: np.ndarray, classes: list[str]) -> tuple[np.ndarray, list[str]]:
    """(class index -> drawn index, drawn labels): every class when they fit, else the most predicted
    ``MAX_CLASSES - 1`` in their own order plus one "other"."""
    k = len(classes)
    if k <= MAX_CLASSES:
        return np.arange(k), [_label(c) for c in classes]
    counts = np.bincount(base_pred, minlength=k)
    # Stable sort on -count: equal counts keep the classes' own order, so the choice is deterministic.
    kept = np.sort(np.argsort(-counts, kind="stable")[: MAX_CLASSES - 1])
    mapping = np.full(k, MAX_CLASSES - 1)
    mapping[kept] = np.arange(len(kept))
    return mapping, [*(_label(classes[i]) for i in kept), f"other ({k - len(kept)})"]


def flip_rates(drawn: np.ndarray, flipped: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, flip rate) per drawn class: the rows the baseline predicted as the class, and the share of them
    whose argmax changed (0 for a class with no rows)."""
    rows = np.bincount(drawn, minlength=size)
    flips = np.bincount(drawn, weights=flipped, minlength=size)
    return rows, np.divide(flips, rows, out=np.zeros(size), where=rows > 0)


def class_flip_figure(slug: str, base: np.ndarray, mut: np.ndarray, classes: list[str], failed: int) -> Figure:
    n = len(base)
    figure = new_figure(
        f"Flip rate per predicted class (argmax changed): {slug}",
        f"{n:,} scored rows, {len(classes)} classes; {failed:,} failed rows excluded",
    )
    if n == 0:
        not_computable(figure, "no row was scored successfully")
        return figure
    base_pred, mut_pred = base.argmax(axis=1), mut.argmax(axis=1)
    mapping, labels = group_classes(base_pred, classes)
    rows, rates = flip_rates(mapping[base_pred], base_pred != mut_pred, len(labels))
    figure.subplots_adjust(bottom=0.24)
    axes = figure.add_subplot()
    positions = np.arange(len(labels))
    bars = axes.bar(positions, rates * 100, color="tab:red", alpha=0.75)
    axes.bar_label(bars, labels=[f"n={r:,}" for r in rows], fontsize=7, padding=2)
    overall = float(np.count_nonzero(base_pred != mut_pred)) / n * 100
    axes.axhline(overall, color="tab:blue", linestyle="--", linewidth=1.4, label=f"all rows {overall:.2f}%")
    axes.set_xticks(positions, labels, rotation=35, ha="right", fontsize=8)
    top = max(float(rates.max()) * 100 * 1.35, 1.0)  # headroom for the bar labels and the legend
    axes.set(ylabel="rows whose predicted class changed (%)", ylim=(0, top))
    axes.grid(axis="y", alpha=0.3)
    axes.legend(loc="upper right", fontsize=9)
    return figure


def transitions_figure(slug: str, base: np.ndarray, mut: np.ndarray, classes: list[str], failed: int) -> Figure:
    n = len(base)
    figure = new_figure(
        f"Predicted class, baseline → mutated (share of each baseline class): {slug}",
        f"{n:,} scored rows; {failed:,} failed rows excluded",
    )
    if n == 0:
        not_computable(figure, "no row was scored successfully")
        return figure
    base_pred, mut_pred = base.argmax(axis=1), mut.argmax(axis=1)
    mapping, labels = group_classes(base_pred, classes)
    size = len(labels)
    counts = np.bincount(mapping[base_pred] * size + mapping[mut_pred], minlength=size * size).reshape(size, size)
    totals = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, totals, out=np.zeros((size, size)), where=totals > 0)
    figure.subplots_adjust(left=0.22, bottom=0.24, right=0.95)
    axes = figure.add_subplot()
    axes.imshow(shares, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    for i in range(size):
        for j in range(size):
            if counts[i, j]:
                color = "white" if shares[i, j] > 0.6 else "black"
                axes.text(j, i, f"{shares[i, j]:.0%}", ha="center", va="center", fontsize=7, color=color)
    positions = np.arange(size)
    axes.set_xticks(positions, labels, rotation=35, ha="right", fontsize=8)
    axes.set_yticks(positions, labels, fontsize=8)
    axes.set(xlabel="mutated predicted class", ylabel="baseline predicted class")
    return figure
