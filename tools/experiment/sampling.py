"""How many evaluation rows an assessment needs, and which ones: a stratified, seeded sample of large data.

The flip rate is a proportion, so the rows needed for a given 95 % interval half-width `h` follow from the normal
approximation at its worst case p = 0.5: n = ceil(z^2 * 0.25 / h^2) (h = 0.005 -> 38,415 rows with the exact
z = 1.95996; the textbook z = 1.96 gives 38,416). The Wilson interval the metrics report is never wider than that
at p = 0.5, and narrower elsewhere, so any flip rate measured on n scored rows has a half-width <= h.

Data with at most n rows is used whole. Larger data is sampled without replacement, stratified by label with
proportional allocation (largest remainders, so the class shares match the file's to within one row), every class
getting at least `min_per_class` rows (or all it has) so that AUC and DeLong stay defined for rare positives. The
rows are drawn from `numpy.random.default_rng(seed)` per class in label order, and kept in file order: the same
labels, size and seed always give the same rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

DEFAULT_HALF_WIDTH = 0.005  # 0.5 percentage points on the flip rate
DEFAULT_SAMPLE_SEED = 1402  # fixed, not the mutation's: every mutation of a model is measured on the same rows
DEFAULT_MIN_PER_CLASS = 500
METHOD = "stratified by label, proportional allocation (largest remainders), without replacement"


@dataclass(frozen=True)
class SampleSpec:
    """What the sample must achieve. half_width <= 0 disables sampling (the whole file is used)."""

    half_width: float = DEFAULT_HALF_WIDTH
    seed: int = DEFAULT_SAMPLE_SEED
    confidence: float = 0.95
    min_per_class: int = DEFAULT_MIN_PER_CLASS

    @property
    def enabled(self) -> bool:
        return self.half_width > 0

    @property
    def rows(self) -> int:
        return sample_size(self.half_width, self.confidence)


def sample_size(half_width: float, confidence: float = 0.95) -> int:
    """Rows for a proportion's interval half-width <= `half_width` at `confidence`, whatever the proportion."""
    if not 0 < half_width < 0.5:
        raise ValueError(f"half_width must be in (0, 0.5), got {half_width}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    z = float(ndtri(0.5 + 0.5 * confidence))
    return math.ceil(z * z * 0.25 / (half_width * half_width))


def allocate(class_counts: dict[int, int], rows: int, min_per_class: int = 0) -> dict[int, int]:
    """Rows per class: proportional to the class sizes (largest remainders, summing to `rows`), then raised to
    `min_per_class` (or the whole class when it is smaller), never above a class's size."""
    total = sum(class_counts.values())
    if rows >= total:
        return dict(class_counts)
    exact = {c: rows * n / total for c, n in class_counts.items()}
    alloc = {c: math.floor(v) for c, v in exact.items()}
    short = rows - sum(alloc.values())
    for c in sorted(exact, key=lambda k: (alloc[k] - exact[k], k))[:short]:  # largest remainders first
        alloc[c] += 1
    return {c: min(class_counts[c], max(alloc[c], min_per_class)) for c in class_counts}


def stratified_indices(labels: np.ndarray, rows: int, seed: int, min_per_class: int = 0) -> np.ndarray:
    """Sorted row positions of a stratified sample of about `rows` rows (see `allocate`), deterministic in seed."""
    values, counts = np.unique(labels, return_counts=True)
    alloc = allocate({int(v): int(n) for v, n in zip(values, counts, strict=True)}, rows, min_per_class)
    rng = np.random.default_rng(seed)
    chosen = []
    for value in sorted(alloc):
        members = np.flatnonzero(labels == value)
        chosen.append(members[rng.choice(len(members), size=alloc[value], replace=False)])
    return np.sort(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.int64)
