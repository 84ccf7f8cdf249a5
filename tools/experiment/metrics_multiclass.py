"""Multiclass metrics: baseline vs mutated class probabilities on the same labelled rows.

Rows are treated as in the binary case (tools/experiment/metrics.py): a failed row (or one with a NaN/inf
probability) counts in ``failures`` and is excluded from everything else; the rest is paired on the scored rows.
The predicted class is the argmax of the probabilities (columns in ``classes`` order); labels are compared as
strings, so y_true may hold the classes in any dtype.

Intervals:

- accuracy change: the paired-difference normal approximation on c_i = correct_mut,i - correct_base,i (the Wald
  interval of a paired difference of proportions, the one behind McNemar's test); O(n), no seed.
- macro-F1 change: a paired bootstrap (BOOTSTRAP_RESAMPLES resamples, fixed seed, percentile interval). Each row is
  one of at most L^3 cells (label, baseline class, mutated class) and F1 depends on the rows only through the
  cell counts, so resampling n rows with replacement is drawing the cell counts from Multinomial(n, cell shares):
  the bootstrap costs O(resamples x cells), not O(resamples x n), and a million rows take milliseconds.
  Macro-F1 is the unweighted mean of the per-label F1 over the labels present in y_true or either prediction
  (zero_division = 0), the same label set for baseline, mutated and every resample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from policies import ModelMetrics, MulticlassMetrics, PairedChange
from tools.experiment.metrics import PSI_BINS, psi, wilson_interval, z_quantile
from tools.runtime.overlap import alongside

BOOTSTRAP_RESAMPLES = 2000
_CELLS_PER_CHUNK = 4_000_000  # resamples x cells held at once

METHODS_MULTICLASS: dict[str, str] = {
    "flip_rate": "argmax class changed; Wilson score interval",
    "accuracy_delta": "paired-difference normal approximation on correct_mut - correct_base per row",
    "macro_f1_delta": f"paired bootstrap, {BOOTSTRAP_RESAMPLES} resamples, fixed seed, percentile interval "
    "(rows resampled as multinomial counts of (label, baseline class, mutated class) cells)",
    "macro_f1": "mean per-label F1 over the labels in y_true or either prediction, zero_division=0",
    "per_class_flip_rate": "flips among the rows whose baseline argmax is that class / those rows",
    "psi": f"PSI of each class probability, {PSI_BINS}; psi = the max",
    "prob_shift": "per row max over classes |p_mut - p_base|: mean, p95 (linear interpolation), max",
    "rows": "flips, accuracy, F1, shift and PSI on successfully scored rows, paired; failures = failed or NaN/inf / n",
}


def encode_labels(y_true: np.ndarray, classes: Sequence[object]) -> tuple[np.ndarray, list[str]]:
    """Label index per row into ``labels`` = the classes (as str) followed by any other value y_true holds."""
    labels = [str(c) for c in classes]
    if len(set(labels)) != len(labels):
        raise ValueError(f"classes must be distinct as strings, got {labels}")
    index = {label: i for i, label in enumerate(labels)}
    codes, uniques = pd.factorize(np.asarray(y_true), use_na_sentinel=True)
    if (codes < 0).any():
        raise ValueError("y_true has missing labels; drop unlabelled rows from the evaluation data")
    for value in map(str, uniques):
        if value not in index:  # a label the model has no class for: always a wrong prediction
            index[value] = len(labels)
            labels.append(value)
    lookup = np.array([index[str(u)] for u in uniques], dtype=np.int64)
    return lookup[codes], labels


def _f1_macro(tp: np.ndarray, true: np.ndarray, pred: np.ndarray, present: np.ndarray) -> np.ndarray:
    denom = true + pred
    f1 = np.divide(2.0 * tp, denom, out=np.zeros(np.broadcast(tp, denom).shape), where=denom > 0)
    return np.asarray(f1[..., present].mean(axis=-1))


def macro_f1_delta(
    y: np.ndarray, pred_b: np.ndarray, pred_m: np.ndarray, n_labels: int, *, confidence: float, seed: int
) -> tuple[float, float, float, float]:
    """(macro-F1 baseline, mutated, CI low, CI high of mutated - baseline) by the cell-multinomial paired bootstrap."""
    size = n_labels**3
    cell = (y * n_labels + pred_b) * n_labels + pred_m
    if size <= 1 << 22:
        counts_all = np.bincount(cell, minlength=size)
        cells = np.flatnonzero(counts_all)
        counts = counts_all[cells]
    else:
        cells, counts = np.unique(cell, return_counts=True)
    cy, cb, cm = cells // (n_labels * n_labels), (cells // n_labels) % n_labels, cells % n_labels
    eye = np.eye(n_labels)
    true_ind, pred_b_ind, pred_m_ind = eye[cy], eye[cb], eye[cm]  # (cells, labels) one-hot
    tp_b_ind, tp_m_ind = true_ind * (cy == cb)[:, None], true_ind * (cy == cm)[:, None]
    present = (true_ind.sum(0) + pred_b_ind.sum(0) + pred_m_ind.sum(0)) > 0

    def macro(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        true = w @ true_ind
        return (
            _f1_macro(w @ tp_b_ind, true, w @ pred_b_ind, present),
            _f1_macro(w @ tp_m_ind, true, w @ pred_m_ind, present),
        )

    f1_b, f1_m = macro(counts.astype(np.float64))
    rng = np.random.default_rng(seed)
    n, shares = int(counts.sum()), counts / counts.sum()
    chunk = max(1, _CELLS_PER_CHUNK // len(cells))
    deltas = []
    for start in range(0, BOOTSTRAP_RESAMPLES, chunk):
        draws = rng.multinomial(n, shares, size=min(chunk, BOOTSTRAP_RESAMPLES - start)).astype(np.float64)
        boot_b, boot_m = macro(draws)
        deltas.append(boot_m - boot_b)
    alpha = 1.0 - confidence
    low, high = np.quantile(np.concatenate(deltas), [alpha / 2, 1 - alpha / 2])
    return float(f1_b), float(f1_m), float(low), float(high)


def _per_class_flip_rate(pred_b: np.ndarray, flipped: np.ndarray, classes: list[str]) -> dict[str, float]:
    k = len(classes)
    rows = np.bincount(pred_b, minlength=k)[:k]
    flips = np.bincount(pred_b, weights=flipped, minlength=k)[:k]
    return {c: float(flips[i] / rows[i]) if rows[i] else 0.0 for i, c in enumerate(classes)}


def by_class(probabilities: np.ndarray) -> np.ndarray:
    """One contiguous row per class: PSI's passes over a strided (n, k) column are ~3x slower."""
    return np.ascontiguousarray(probabilities.T)


def paired_multiclass(
    y: np.ndarray,
    base: np.ndarray,
    mut: np.ndarray,
    labels: list[str],
    classes: list[str],
    *,
    confidence: float,
    seed: int,
) -> tuple[MulticlassMetrics, np.ndarray, np.ndarray]:
    """The task's metrics on scored rows (at least 2), the per-row flip indicator and max |Δp| per row."""
    # The class PSIs (~45 ms per 1M rows of 3 classes) run on a second thread while the rest is computed here.
    (metrics, flipped, shift), class_psi = alongside(
        lambda: _paired(y, base, mut, labels, classes, confidence=confidence, seed=seed),
        lambda: {c: psi(b, m) for c, b, m in zip(classes, by_class(base), by_class(mut), strict=True)},
    )
    return metrics.model_copy(update={"per_class_psi": class_psi}), flipped, shift


def _paired(
    y: np.ndarray,
    base: np.ndarray,
    mut: np.ndarray,
    labels: list[str],
    classes: list[str],
    *,
    confidence: float,
    seed: int,
) -> tuple[MulticlassMetrics, np.ndarray, np.ndarray]:
    pred_b, pred_m = base.argmax(axis=1), mut.argmax(axis=1)
    flipped = pred_b != pred_m
    right_b, right_m = pred_b == y, pred_m == y
    diff = right_m.astype(np.float64) - right_b
    # count / n is np.mean of the bools exactly (their float sum is the integer count), without a float pass
    acc_b, acc_m = int(np.count_nonzero(right_b)) / len(y), int(np.count_nonzero(right_m)) / len(y)
    half = z_quantile(confidence) * float(diff.std(ddof=1)) / math.sqrt(len(y))
    f1_b, f1_m, f1_lo, f1_hi = macro_f1_delta(y, pred_b, pred_m, len(labels), confidence=confidence, seed=seed)
    metrics = MulticlassMetrics(
        classes=classes,
        accuracy=PairedChange(
            baseline=acc_b,
            mutated=acc_m,
            delta=acc_m - acc_b,
            ci_low=acc_m - acc_b - half,
            ci_high=acc_m - acc_b + half,
        ),
        macro_f1=PairedChange(baseline=f1_b, mutated=f1_m, delta=f1_m - f1_b, ci_low=f1_lo, ci_high=f1_hi),
        per_class_flip_rate=_per_class_flip_rate(pred_b, flipped, classes),
        per_class_psi={},
    )
    return metrics, flipped, _max_abs_shift(base, mut)


def _max_abs_shift(base: np.ndarray, mut: np.ndarray) -> np.ndarray:
    """max_j |mut[:, j] - base[:, j]| per row, a column at a time: numpy's max over a short last axis is ~10x
    slower than k elementwise passes, and the maximum of the same values is the same number."""
    shift: np.ndarray = np.abs(mut[:, 0] - base[:, 0])
    step = np.empty_like(shift)
    for j in range(1, base.shape[1]):
        np.subtract(mut[:, j], base[:, j], out=step)
        np.maximum(shift, np.abs(step, out=step), out=shift)
    return shift


def finite_rows(scores: np.ndarray) -> np.ndarray:
    """Rows whose every column is finite, a column at a time (faster than ``isfinite(...).all(axis=1)``); one pass
    over the contiguous block first, since every row is finite in the usual case."""
    if scores.flags.c_contiguous and np.isfinite(scores.reshape(-1)).all():
        return np.ones(len(scores), dtype=bool)
    finite: np.ndarray = np.isfinite(scores[:, 0])  # typed: numpy 2.4's stubs (Python 3.11) make this Any
    for j in range(1, scores.shape[1]):
        finite &= np.isfinite(scores[:, j])
    return finite


def compute_multiclass_metrics(
    y_true: np.ndarray,
    baseline: np.ndarray,
    mutated: np.ndarray,
    failed: np.ndarray,
    classes: Sequence[object],
    *,
    confidence: float = 0.95,
    seed: int = 0,
    threshold: float = 0.5,
    encoded: tuple[np.ndarray, list[str]] | None = None,
) -> tuple[ModelMetrics, np.ndarray, np.ndarray]:
    """ModelMetrics for a multiclass classifier, the scored-row mask and the per-scored-row flip indicator.

    ``threshold`` has no meaning for an argmax; it is recorded as given so every task's metrics have one.
    ``encoded``: ``encode_labels(y_true, classes)`` if already computed (it does not depend on the mutation)."""
    base = np.asarray(baseline, dtype=np.float64)
    mut = np.asarray(mutated, dtype=np.float64)
    fail = np.asarray(failed, dtype=bool)
    k = len(classes)
    if base.ndim != 2 or base.shape != mut.shape or base.shape[1] != k:
        raise ValueError(
            f"baseline and mutated must be (n, {k}) probabilities in classes order, got {base.shape}, {mut.shape}"
        )
    if not len(np.asarray(y_true)) == len(base) == len(fail):
        raise ValueError(f"lengths differ: y {len(np.asarray(y_true))}, probabilities {len(base)}, failed {len(fail)}")
    if len(base) == 0:
        raise ValueError("no rows to compute metrics on")
    z_quantile(confidence)
    y, labels = encoded if encoded is not None else encode_labels(np.asarray(y_true), classes)
    if len(y) != len(base):
        raise ValueError(f"{len(y)} encoded labels for {len(base)} rows: encode this evaluation's labels")
    ok = finite_rows(base) & finite_rows(mut) & ~fail
    n, n_scored = len(base), int(ok.sum())
    task_metrics, flipped, shift = None, np.zeros(n_scored, dtype=bool), np.zeros(0)
    if n_scored >= 2:
        every = n_scored == n  # the usual case: no (n, k) copies of every row
        task_metrics, flipped, shift = paired_multiclass(
            y if every else y[ok], base if every else base[ok], mut if every else mut[ok], labels, labels[:k],
            confidence=confidence, seed=seed,
        )  # fmt: skip
    flips = int(np.count_nonzero(flipped))
    flip_lo, flip_hi = wilson_interval(flips, n_scored, confidence) if n_scored >= 2 else (None, None)
    scored = task_metrics is not None
    metrics = ModelMetrics(
        n=n,
        n_scored=n_scored,
        flips=flips,
        flip_rate=flips / n_scored if scored else None,
        flip_rate_ci_low=flip_lo,
        flip_rate_ci_high=flip_hi,
        prob_shift_mean=float(shift.mean()) if scored else None,
        prob_shift_p95=float(np.quantile(shift, 0.95)) if scored else None,
        prob_shift_max=float(np.max(shift)) if scored else None,
        psi=max(task_metrics.per_class_psi.values()) if task_metrics is not None else None,
        failures=n - n_scored,
        failure_rate=(n - n_scored) / n,
        threshold=threshold,
        confidence=confidence,
        methods=dict(METHODS_MULTICLASS),
        task="multiclass",
        multiclass=task_metrics,
    )
    return metrics, ok, flipped
