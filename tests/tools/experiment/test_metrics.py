"""Metrics against independent references: sklearn AUC, a slow O(n^2) DeLong, scipy's Wilson interval."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy.stats import binomtest, norm
from sklearn.metrics import roc_auc_score

from tools.experiment.metrics import (
    PSI_EPSILON,
    PSI_QUANTILE_ROWS,
    bin_counts,
    compute_metrics,
    delong_paired,
    psi,
    wilson_interval,
)


def slow_delong(y: np.ndarray, a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> dict[str, float]:
    """DeLong et al. (1988) written out: structural components from explicit pairwise comparisons."""
    y = y.astype(bool)
    out: dict[str, float] = {}
    v10s, v01s = [], []
    for name, s in (("a", a), ("b", b)):
        x, z = s[y][:, None], s[~y][None, :]  # positives down, negatives across
        psi_matrix = (x > z).astype(float) + 0.5 * (x == z)
        out[f"auc_{name}"] = psi_matrix.mean()
        v10s.append(psi_matrix.mean(axis=1))  # per positive: mean over negatives
        v01s.append(psi_matrix.mean(axis=0))  # per negative: mean over positives
    s10, s01 = np.cov(np.vstack(v10s)), np.cov(np.vstack(v01s))
    cov = s10 / y.sum() + s01 / (~y).sum()
    var = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    delta = out["auc_b"] - out["auc_a"]
    se = math.sqrt(var)
    zq = norm.ppf(0.5 + confidence / 2)
    z = delta / se
    return out | {"delta": delta, "se": se, "z": z, "p_value": 2 * norm.sf(abs(z)),
                  "ci_low": delta - zq * se, "ci_high": delta + zq * se}  # fmt: skip


def datasets() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(2024)
    cases = []
    for i, (n, prevalence, ties) in enumerate(
        [(60, 0.5, False), (300, 0.1, False), (250, 0.3, True), (500, 0.7, True)]
    ):
        y = rng.random(n) < prevalence
        a = y * 0.8 + rng.normal(0, 1, n)
        b = a + rng.normal(0, 0.5, n)
        if ties:  # coarse scores: many ties within and across classes
            a, b = np.round(a, 0), np.round(b, 0)
        cases.append((f"case{i}", y.astype(int), a, b))
    y = np.array([0, 0, 1, 1, 0, 1, 0, 1])
    cases.append(
        (
            "tiny",
            y,
            np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.5, 0.5]),
            np.array([0.3, 0.3, 0.3, 0.7, 0.1, 0.6, 0.2, 0.2]),
        )
    )
    return cases


@pytest.mark.parametrize(("name", "y", "a", "b"), datasets())
def test_delong_matches_sklearn_and_the_slow_reference(name: str, y: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    fast = delong_paired(y, a, b)
    assert fast.auc_a == pytest.approx(roc_auc_score(y, a), abs=1e-12)
    assert fast.auc_b == pytest.approx(roc_auc_score(y, b), abs=1e-12)
    slow = slow_delong(y, a, b)
    for field in ("auc_a", "auc_b", "delta", "se", "z", "p_value", "ci_low", "ci_high"):
        assert getattr(fast, field) == pytest.approx(slow[field], abs=1e-6), field


def test_delong_confidence_level_widens_the_interval() -> None:
    _, y, a, b = datasets()[1]
    narrow, wide = delong_paired(y, a, b, confidence=0.8), delong_paired(y, a, b, confidence=0.99)
    assert wide.ci_low < narrow.ci_low < narrow.delta < narrow.ci_high < wide.ci_high
    assert slow_delong(y, a, b, 0.99)["ci_high"] == pytest.approx(wide.ci_high, abs=1e-9)


def test_delong_identical_scores() -> None:
    _, y, a, _ = datasets()[0]
    result = delong_paired(y, a, a.copy())
    assert (result.delta, result.se, result.z, result.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert result.ci_low == result.ci_high == result.delta


def test_delong_zero_variance_but_different_aucs() -> None:
    y = np.array([0, 0, 1, 1])
    perfect, constant = np.array([0.1, 0.2, 0.8, 0.9]), np.full(4, 0.5)
    result = delong_paired(y, perfect, constant)
    assert result.delta == pytest.approx(-0.5) and result.se == 0.0 and result.p_value == 0.0


@pytest.mark.parametrize("y", [np.ones(10), np.zeros(10), np.array([1, 0, 0, 0])])
def test_delong_needs_both_classes(y: np.ndarray) -> None:
    with pytest.raises(ValueError, match="at least 2 positives and 2 negatives"):
        delong_paired(y, np.linspace(0, 1, len(y)), np.linspace(0, 1, len(y)))


def test_delong_rejects_bad_labels_and_lengths() -> None:
    with pytest.raises(ValueError, match="binary"):
        delong_paired(np.array([0, 1, 2, 1]), np.zeros(4), np.zeros(4))
    with pytest.raises(ValueError, match="lengths differ"):
        delong_paired(np.array([0, 1, 0, 1]), np.zeros(4), np.zeros(3))


@pytest.mark.parametrize("n", [1, 2, 5, 17, 100, 1000])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_wilson_matches_scipy(n: int, confidence: float) -> None:
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n} & set(range(n + 1))):
        expected = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
        low, high = wilson_interval(k, n, confidence)
        assert low == pytest.approx(expected.low, abs=1e-9) and high == pytest.approx(expected.high, abs=1e-9)
        assert 0.0 <= low <= k / n <= high <= 1.0


@pytest.mark.parametrize(("k", "n"), [(1, 0), (-1, 5), (6, 5)])
def test_wilson_rejects_impossible_counts(k: int, n: int) -> None:
    with pytest.raises(ValueError):
        wilson_interval(k, n)


def test_psi_identical_is_zero_and_grows_with_shift() -> None:
    base = np.random.default_rng(1).beta(2, 5, 5000)
    assert psi(base, base.copy()) == 0.0
    values = [psi(base, np.clip(base + shift, 0, 1)) for shift in (0.0, 0.02, 0.05, 0.1, 0.2)]
    assert values[0] == 0.0 and all(x < y for x, y in zip(values, values[1:], strict=False))


def test_psi_by_hand() -> None:
    base = np.arange(100.0)  # deciles of 10 values each
    mutated = np.full(50, 1000.0)  # everything lands in the open-ended top bin
    expected = (1 - 0.1) * math.log(1 / 0.1) + 9 * (PSI_EPSILON - 0.1) * math.log(PSI_EPSILON / 0.1)
    assert psi(base, mutated) == pytest.approx(expected, rel=1e-12)
    assert psi(np.full(20, 0.5), np.full(20, 0.5)) == 0.0  # a constant baseline still works


@pytest.mark.parametrize("seed", range(4))
def test_bin_counts_are_searchsorted_bincount(seed: int) -> None:
    """The comparison-pass counting gives the integers of the binary search it replaced, so PSI is bit-identical."""
    rng = np.random.default_rng(seed)
    values = np.round(rng.normal(0, 1, 20_000), 1)  # rounded: many values sit exactly on an edge
    values[:50] = np.nan
    values[50:60], values[60:70] = np.inf, -np.inf
    edges = np.unique(np.quantile(values[70:], np.linspace(0, 1, 11)[1:-1]))
    expected = np.bincount(np.searchsorted(edges, values, side="right"), minlength=len(edges) + 1)
    assert bin_counts(values, edges).tolist() == expected.tolist()
    assert bin_counts(values, np.array([])).tolist() == [len(values)]


def scored(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.35).astype(int)
    base = np.clip(0.25 + 0.4 * y + rng.normal(0, 0.2, n), 0, 1)
    return y, base, np.clip(base + rng.normal(0, 0.1, n), 0, 1)


def test_compute_metrics_matches_the_parts() -> None:
    y, base, mut = scored()
    m = compute_metrics(y, base, mut, np.zeros(len(y), dtype=bool), threshold=0.5)
    d = delong_paired(y, base, mut)
    assert m.binary is not None and m.binary.auc is not None
    a = m.binary.auc
    assert (a.baseline, a.mutated, a.delta, a.ci_low, a.ci_high, a.p_value) == (
        d.auc_a, d.auc_b, d.delta, d.ci_low, d.ci_high, d.p_value
    )  # fmt: skip
    flips = int(((base >= 0.5) != (mut >= 0.5)).sum())
    assert m.flips == flips and m.flip_rate == flips / len(y)
    assert (m.flip_rate_ci_low, m.flip_rate_ci_high) == wilson_interval(flips, len(y))
    shift = np.abs(mut - base)
    assert m.prob_shift_mean == pytest.approx(shift.mean()) and m.prob_shift_max == shift.max()
    assert m.prob_shift_p95 == pytest.approx(np.percentile(shift, 95))
    assert m.psi == psi(base, mut)
    assert (m.n, m.binary.positives, m.binary.negatives, m.n_scored, m.failures) == (
        len(y), y.sum(), len(y) - y.sum(), len(y), 0
    )  # fmt: skip
    assert "DeLong paired (Sun & Xu 2014 fast algorithm" in m.methods["auc"] and "Wilson" in m.methods["flip_rate"]


def test_failed_rows_are_excluded_and_counted() -> None:
    y, base, mut = scored()
    failed = np.zeros(len(y), dtype=bool)
    failed[:30] = True
    garbage = mut.copy()
    garbage[:30] = 1 - base[:30]  # would flip if counted
    garbage[30] = np.nan  # a NaN score is a failure too
    m = compute_metrics(y, base, garbage, failed)
    ok = np.arange(len(y)) > 30
    clean = compute_metrics(y[ok], base[ok], mut[ok], np.zeros(ok.sum(), dtype=bool))
    assert m.failures == 31 and m.failure_rate == 31 / len(y) and m.n_scored == len(y) - 31
    assert m.binary is not None and (m.binary.positives, m.n) == (
        y.sum(),
        len(y),
    )  # class counts describe the evaluation data, all rows
    assert clean.binary is not None and m.binary.auc == clean.binary.auc
    for field in ("flips", "flip_rate", "psi", "prob_shift_mean", "prob_shift_p95", "prob_shift_max"):
        assert getattr(m, field) == getattr(clean, field), field


def test_all_rows_failed() -> None:
    y, base, mut = scored(50)
    m = compute_metrics(y, base, mut, np.ones(50, dtype=bool))
    assert m.failure_rate == 1.0 and m.n_scored == 0 and m.flips == 0
    assert m.binary is not None and m.binary.auc is None and m.flip_rate is None and m.psi is None


def test_one_class_among_scored_rows_gives_no_auc() -> None:
    y, base, mut = scored(100)
    m = compute_metrics(y, base, mut, y == 1)  # every positive failed
    assert m.binary is not None and m.binary.auc is None
    assert m.flip_rate is not None and m.failures == y.sum()


def test_compute_metrics_rejects_bad_input() -> None:
    y, base, mut = scored(20)
    with pytest.raises(ValueError, match="lengths differ"):
        compute_metrics(y, base, mut[:-1], np.zeros(20, dtype=bool))
    with pytest.raises(ValueError, match="binary"):
        compute_metrics(y * 2, base, mut, np.zeros(20, dtype=bool))
    with pytest.raises(ValueError, match="confidence"):
        compute_metrics(y, base, mut, np.zeros(20, dtype=bool), confidence=1.0)


def test_compute_metrics_one_million_rows_is_fast() -> None:
    y, base, mut = scored(1_000_000, seed=3)
    failed = np.zeros(len(y), dtype=bool)
    failed[::1000] = True
    timings = []
    for _ in range(2):
        start = time.perf_counter()
        compute_metrics(y, base, mut, failed)
        timings.append(time.perf_counter() - start)
    assert min(timings) < 1.0, f"best of 2: {min(timings):.3f} s"


def _psi_with_edges_from(base: np.ndarray, mutated: np.ndarray, edge_rows: np.ndarray) -> float:
    """PSI by hand: decile edges of `edge_rows`, shares counted on every row by binary search."""
    edges = np.unique(np.quantile(edge_rows, np.linspace(0, 1, 11)[1:-1]))
    expected = np.bincount(np.searchsorted(edges, base, side="right"), minlength=len(edges) + 1) / len(base)
    actual = np.bincount(np.searchsorted(edges, mutated, side="right"), minlength=len(edges) + 1) / len(mutated)
    expected, actual = np.maximum(expected, PSI_EPSILON), np.maximum(actual, PSI_EPSILON)
    return float(np.sum((actual - expected) * np.log(actual / expected)))


@pytest.mark.parametrize(("n", "step"), [(PSI_QUANTILE_ROWS, 1), (2 * PSI_QUANTILE_ROWS - 1, 1), (250_000, 2)])
def test_psi_edges_come_from_every_row_up_to_twice_the_quantile_rows(n: int, step: int) -> None:
    rng = np.random.default_rng(n)
    base = rng.beta(2, 5, n)
    mutated = np.clip(base + rng.normal(0.03, 0.02, n), 0, 1)
    assert psi(base, mutated) == pytest.approx(_psi_with_edges_from(base, mutated, base[::step]), rel=1e-12)
    if step > 1:  # evenly spaced rows move the edges a little, not the index
        assert psi(base, mutated) == pytest.approx(_psi_with_edges_from(base, mutated, base), rel=0.02)
