"""Behaviour metrics for one model: baseline vs mutated scores on the same labelled rows (docs/design.md §5).

Everything is vectorised numpy; the only O(n log n) steps are one sort per score vector (DeLong) and the
baseline quantiles (PSI), so a million rows take well under a second.

How inference failures enter (``failed[i]`` is True when either inference failed on row i, or either score is
NaN/inf): they are counted in ``failures`` and ``failure_rate = failures / n`` over *all* rows, and are
excluded from everything else. AUC, probability shift, PSI and flips are computed on the successfully scored
rows only, paired on the same rows, so a crash is never mistaken for a flip and never double-counted. The
policy judges the failure rate on its own (any failure is at least a WARNING).
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict

import numpy as np
from pydantic import BaseModel, ConfigDict

from policies import BinaryMetrics, ModelMetrics, PairedChange

PSI_EPSILON = 1e-4  # floor for an empty bin's share, so ln(a/e) stays finite; one empty bin adds at most ~0.1
# PSI's bin edges come from at most about this many evenly spaced baseline rows (every row below 2x this): a
# partition of every row cost ~30 ms per score vector at 1M rows, and an edge from 100k rows moves a bin's expected
# share by well under a percent point. The shares themselves are then counted exactly on every row.
PSI_QUANTILE_ROWS = 100_000
PSI_BINS = (
    f"10 baseline-quantile bins (edges from every row, or from ~{PSI_QUANTILE_ROWS:,} evenly spaced rows beyond "
    f"{2 * PSI_QUANTILE_ROWS:,}), eps={PSI_EPSILON:g}"
)

METHODS: dict[str, str] = {
    "auc": "DeLong paired (Sun & Xu 2014 fast algorithm)",
    "flip_rate": "Wilson score interval",
    "psi": f"PSI, {PSI_BINS}",
    "prob_shift": "|p_mutated - p_baseline|: mean, p95 (linear interpolation), max",
    "rows": "AUC, flips, shift and PSI on successfully scored rows, paired; failures = failed or NaN/inf rows / n",
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DeLongResult(_Frozen):
    auc_a: float
    auc_b: float
    delta: float  # auc_b - auc_a
    se: float
    ci_low: float
    ci_high: float
    z: float
    p_value: float


def z_quantile(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level (1.96 for 0.95); the one check of `confidence`."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    from scipy.special import ndtri  # scipy.stats costs ~0.5 s to import: only when a metric is computed

    return float(ndtri(0.5 + 0.5 * confidence))


def _midranks_sorted(values: np.ndarray) -> np.ndarray:
    """1-based midranks of an already sorted array: tied values share the mean of their positions."""
    n = len(values)
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    ends = np.r_[starts[1:], n]
    return np.repeat((starts + 1 + ends) / 2.0, ends - starts)


_COMPONENT_CACHE: OrderedDict[bytes, tuple[float, np.ndarray, np.ndarray]] = OrderedDict()
_COMPONENT_CACHE_SIZE = 4


def _cached_components(y: np.ndarray, scores: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Structural components, memoised by content: every assessment of a model pairs against the same
    baseline, so its sort (the costliest step of DeLong) is done once per baseline, not once per mutation."""
    key = hashlib.blake2b(y.tobytes() + scores.tobytes(), digest_size=16).digest()
    hit = _COMPONENT_CACHE.get(key)
    if hit is None:
        hit = _structural_components(y, scores)
        _COMPONENT_CACHE[key] = hit
        if len(_COMPONENT_CACHE) > _COMPONENT_CACHE_SIZE:
            _COMPONENT_CACHE.popitem(last=False)
    else:
        _COMPONENT_CACHE.move_to_end(key)
    return hit


def _structural_components(y: np.ndarray, scores: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """AUC and DeLong's placement values V10 (per positive) and V01 (per negative), in input row order.

    Sun & Xu: with midranks tz over all rows and tx / ty within positives / negatives,
    V10_i = (tz_i - tx_i) / n_neg and V01_j = 1 - (tz_j - ty_j) / n_pos. One sort serves all three rankings,
    because the sorted positives (negatives) are the positives (negatives) of the sorted whole.
    """
    order = np.argsort(scores)  # stability is not needed: tied scores get the same midrank
    sorted_scores, sorted_pos = scores[order], y[order]
    tz = _midranks_sorted(sorted_scores)
    m, n = int(sorted_pos.sum()), int(len(y) - sorted_pos.sum())
    t_within = np.empty(len(y))
    t_within[sorted_pos] = _midranks_sorted(sorted_scores[sorted_pos])
    t_within[~sorted_pos] = _midranks_sorted(sorted_scores[~sorted_pos])
    placement = np.empty(len(y))
    placement[order] = tz - t_within  # back to input order so the two score vectors pair row by row
    v10 = placement[y] / n
    v01 = 1.0 - placement[~y] / m
    auc = float(v10.mean())
    return auc, v10, v01


def _as_labels(y_true: np.ndarray) -> np.ndarray:
    y = np.asarray(y_true)
    if y.dtype != np.bool_:
        if not np.isin(y, (0, 1)).all():
            raise ValueError("y_true must be binary: bool or 0/1 (encode the positive class as 1)")
        y = y == 1
    return y


def delong_paired(
    y_true: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, confidence: float = 0.95
) -> DeLongResult:
    """Paired DeLong test of AUC(b) - AUC(a) on the same rows and labels (two-sided p-value)."""
    y = _as_labels(y_true)
    a, b = np.asarray(scores_a, dtype=np.float64), np.asarray(scores_b, dtype=np.float64)
    if not len(y) == len(a) == len(b):
        raise ValueError(f"lengths differ: y_true {len(y)}, scores_a {len(a)}, scores_b {len(b)}")
    m = int(y.sum())
    if m < 2 or len(y) - m < 2:
        raise ValueError(
            f"DeLong needs at least 2 positives and 2 negatives, got {m} positives and {len(y) - m} "
            "negatives (with only one class present ROC AUC is undefined)"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("scores must be finite; drop failed rows first")
    auc_a, v10_a, v01_a = _cached_components(y, a)
    auc_b, v10_b, v01_b = _structural_components(y, b)
    # Variance of the difference of two correlated AUCs: var(V_b - V_a) per class over that class's count.
    var = np.var(v10_b - v10_a, ddof=1) / m + np.var(v01_b - v01_a, ddof=1) / (len(y) - m)
    delta = auc_b - auc_a
    se = math.sqrt(max(float(var), 0.0))
    if se == 0.0:  # identical (or rank-identical) scores: no sampling variability in the difference
        z, p = (0.0, 1.0) if delta == 0 else (math.copysign(math.inf, delta), 0.0)
    else:
        z = delta / se
        from scipy.stats import norm

        p = float(2.0 * norm.sf(abs(z)))
    half = z_quantile(confidence) * se
    return DeLongResult(
        auc_a=auc_a, auc_b=auc_b, delta=delta, se=se, ci_low=delta - half, ci_high=delta + half, z=z, p_value=p
    )


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion (Newcombe 1998), by scipy's binomtest; exact 0 / 1 at the ends."""
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"need n > 0 and 0 <= successes <= n, got successes={successes}, n={n}")
    z_quantile(confidence)  # the same "confidence must be in (0, 1)" error as everywhere else in this module
    from scipy.stats import binomtest

    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def bin_counts(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Rows per bin, bin i holding the values with exactly i edges <= value (sorted, unique ``edges``): the same
    integers as ``np.bincount(np.searchsorted(edges, values, side="right"))``, NaN in the last bin included, by one
    comparison pass per edge, which is ~10x faster than a binary search per value on unsorted data."""
    below = [np.count_nonzero(values < edge) for edge in edges]  # values < edge_j: the bins before j+1
    return np.diff(np.array([0, *below, len(values)], dtype=np.int64))


def psi(baseline_scores: np.ndarray, mutated_scores: np.ndarray, bins: int = 10) -> float:
    """Population stability index of the mutated scores against the baseline scores.

    Bin edges are the baseline's interior quantiles (duplicates dropped, so tied scores share a bin; from every
    ``len // PSI_QUANTILE_ROWS``-th row when there are more than twice as many rows); the
    outer bins are open-ended so every mutated score lands somewhere. Shares are floored at PSI_EPSILON
    so an empty bin contributes a large but finite term. Symmetric form: sum over bins (a - e) * ln(a / e).
    """
    base = np.asarray(baseline_scores, dtype=np.float64)
    mut = np.asarray(mutated_scores, dtype=np.float64)
    if len(base) == 0 or len(mut) == 0:
        raise ValueError("psi needs at least one baseline and one mutated score")
    if bins < 2:
        raise ValueError(f"bins must be >= 2, got {bins}")
    step = max(1, len(base) // PSI_QUANTILE_ROWS)
    edges = np.unique(np.quantile(base[::step], np.linspace(0.0, 1.0, bins + 1)[1:-1]))
    expected = bin_counts(base, edges) / len(base)
    actual = bin_counts(mut, edges) / len(mut)
    expected, actual = np.maximum(expected, PSI_EPSILON), np.maximum(actual, PSI_EPSILON)
    return float(np.sum((actual - expected) * np.log(actual / expected)))


def compute_metrics(
    y_true: np.ndarray,
    p_baseline: np.ndarray,
    p_mutated: np.ndarray,
    failed: np.ndarray,
    threshold: float = 0.5,
    confidence: float = 0.95,
) -> ModelMetrics:
    """All per-model metrics; see the module docstring for how failed rows are treated."""
    return binary_metrics(y_true, p_baseline, p_mutated, failed, threshold, confidence)[0]


def binary_metrics(
    y_true: np.ndarray,
    p_baseline: np.ndarray,
    p_mutated: np.ndarray,
    failed: np.ndarray,
    threshold: float = 0.5,
    confidence: float = 0.95,
) -> tuple[ModelMetrics, np.ndarray, np.ndarray]:
    """`compute_metrics`, plus the scored-row mask and each scored row's flip (what the segment analysis splits)."""
    y = _as_labels(y_true)
    base = np.asarray(p_baseline, dtype=np.float64)
    mut = np.asarray(p_mutated, dtype=np.float64)
    fail = np.asarray(failed, dtype=bool)
    if not len(y) == len(base) == len(mut) == len(fail):
        raise ValueError(f"lengths differ: y {len(y)}, baseline {len(base)}, mutated {len(mut)}, failed {len(fail)}")
    n = len(y)
    if n == 0:
        raise ValueError("no rows to compute metrics on")
    z_quantile(confidence)
    fail = fail | ~np.isfinite(base) | ~np.isfinite(mut)  # a NaN score is a failure, not a number to average
    ok = ~fail
    ys, bs, ms = y[ok], base[ok], mut[ok]
    n_scored = len(ys)
    positives = int(y.sum())
    failures = n - n_scored

    auc = None
    scored_pos = int(ys.sum())
    if scored_pos >= 2 and n_scored - scored_pos >= 2:
        d = delong_paired(ys, bs, ms, confidence)
        auc = PairedChange(
            baseline=d.auc_a, mutated=d.auc_b, delta=d.delta, ci_low=d.ci_low, ci_high=d.ci_high, p_value=d.p_value
        )

    flipped = (bs >= threshold) != (ms >= threshold)
    flips = int(np.count_nonzero(flipped))
    flip_rate = flip_lo = flip_hi = shift_mean = shift_p95 = shift_max = score_psi = None
    if n_scored:
        flip_rate = flips / n_scored
        flip_lo, flip_hi = wilson_interval(flips, n_scored, confidence)
        shift = np.abs(ms - bs)
        shift_mean, shift_p95, shift_max = float(shift.mean()), float(np.quantile(shift, 0.95)), float(shift.max())
        score_psi = psi(bs, ms)

    metrics = ModelMetrics(
        n=n,
        n_scored=n_scored,
        binary=BinaryMetrics(positives=positives, negatives=n - positives, auc=auc),
        flips=flips,
        flip_rate=flip_rate,
        flip_rate_ci_low=flip_lo,
        flip_rate_ci_high=flip_hi,
        prob_shift_mean=shift_mean,
        prob_shift_p95=shift_p95,
        prob_shift_max=shift_max,
        psi=score_psi,
        failures=failures,
        failure_rate=failures / n,
        threshold=threshold,
        confidence=confidence,
        methods=dict(METHODS),
    )
    return metrics, ok, flipped
