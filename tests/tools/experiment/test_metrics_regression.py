"""Regression metrics against independent implementations: sklearn for the point values, scipy's paired t interval
and paired bootstraps (scipy.stats.bootstrap and an explicit loop) for the intervals, binomtest for Wilson."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, bootstrap, ttest_rel
from sklearn.metrics import mean_absolute_error, mean_squared_error

from tools.experiment.metrics import psi
from tools.experiment.metrics_regression import compute_regression_metrics


def regression_case(n: int, seed: int, noise: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(50, 15, n)
    y = 3 * x + rng.normal(0, 10, n)
    base = 3 * x + rng.normal(0, 2, n)
    mut = base + rng.normal(0.5, noise * 6, n)  # a change that adds error
    return y, base, mut


def measure(y: np.ndarray, base: np.ndarray, mut: np.ndarray, **kwargs: float):  # type: ignore[no-untyped-def]
    m, ok, moved = compute_regression_metrics(y, base, mut, np.zeros(len(y), dtype=bool), **kwargs)
    assert m.regression is not None
    return m, m.regression, ok, moved


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_point_values_match_sklearn(seed: int) -> None:
    y, base, mut = regression_case(3000, seed)
    m, r, _, _ = measure(y, base, mut)
    assert r.mae.baseline == pytest.approx(mean_absolute_error(y, base), rel=1e-12)
    assert r.mae.mutated == pytest.approx(mean_absolute_error(y, mut), rel=1e-12)
    assert r.rmse.baseline == pytest.approx(math.sqrt(mean_squared_error(y, base)), rel=1e-12)
    assert r.rmse.mutated == pytest.approx(math.sqrt(mean_squared_error(y, mut)), rel=1e-12)
    assert r.mae.delta == pytest.approx(r.mae.mutated - r.mae.baseline, abs=1e-12)
    assert r.mae.relative == pytest.approx(r.mae.delta / r.mae.baseline)
    assert r.rmse.relative == pytest.approx(r.rmse.delta / r.rmse.baseline)
    assert r.prediction_psi == psi(base, mut) == m.psi
    assert (m.task, m.flips, m.flip_rate, m.binary, m.prob_shift_mean) == ("regression", 0, None, None, None)
    assert "paired-difference normal" in m.methods["mae_delta"] and "delta method" in m.methods["rmse_delta"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mae_interval_matches_the_paired_t_interval(seed: int) -> None:
    y, base, mut = regression_case(20_000, seed)
    _, r, _, _ = measure(y, base, mut)
    # ttest_rel's interval is the paired t interval of the mean difference; at n = 20 000 t and z agree to 1e-4
    ci = ttest_rel(np.abs(mut - y), np.abs(base - y)).confidence_interval(0.95)
    width = ci.high - ci.low
    assert r.mae.ci_low == pytest.approx(ci.low, abs=1e-3 * width)
    assert r.mae.ci_high == pytest.approx(ci.high, abs=1e-3 * width)


def loop_bootstrap_rmse_delta(y: np.ndarray, base: np.ndarray, mut: np.ndarray, resamples: int) -> np.ndarray:
    """The textbook paired bootstrap: resample row indices, recompute both RMSEs on the same rows."""
    rng = np.random.default_rng(12345)
    out = np.empty(resamples)
    for b in range(resamples):
        idx = rng.integers(0, len(y), len(y))
        out[b] = math.sqrt(np.mean((mut[idx] - y[idx]) ** 2)) - math.sqrt(np.mean((base[idx] - y[idx]) ** 2))
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_rmse_interval_matches_paired_bootstraps(seed: int) -> None:
    y, base, mut = regression_case(2000, seed)
    _, r, _, _ = measure(y, base, mut)
    width = r.rmse.ci_high - r.rmse.ci_low
    loop = np.quantile(loop_bootstrap_rmse_delta(y, base, mut, 2000), [0.025, 0.975])

    def statistic(yy: np.ndarray, bb: np.ndarray, mm: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.sqrt(np.mean((mm - yy) ** 2, axis=axis)) - np.sqrt(np.mean((bb - yy) ** 2, axis=axis))

    scipy_ci = bootstrap(
        (y, base, mut), statistic, paired=True, vectorized=True, n_resamples=2000, method="percentile",
        rng=np.random.default_rng(7),
    ).confidence_interval  # fmt: skip
    for low, high in (loop, (scipy_ci.low, scipy_ci.high)):
        assert r.rmse.ci_low == pytest.approx(low, abs=0.1 * width)
        assert r.rmse.ci_high == pytest.approx(high, abs=0.1 * width)


def test_mae_interval_matches_a_paired_bootstrap_too() -> None:
    y, base, mut = regression_case(2000, 3)
    _, r, _, _ = measure(y, base, mut)
    diff = np.abs(mut - y) - np.abs(base - y)
    ci = bootstrap((diff,), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(3))
    width = r.mae.ci_high - r.mae.ci_low
    assert r.mae.ci_low == pytest.approx(ci.confidence_interval.low, abs=0.1 * width)
    assert r.mae.ci_high == pytest.approx(ci.confidence_interval.high, abs=0.1 * width)


def test_moved_share_by_hand() -> None:
    base = np.array([0.0, 10.0, 20.0, 30.0, 40.0] * 40)  # std = sqrt(200) = 14.142; tolerance 1.4142
    mut = base.copy()
    mut[:10] += 1.5  # beyond the tolerance
    mut[10:20] += 1.4  # within it
    mut[20:25] -= 100  # beyond, the other way
    y = base + 1.0
    m, r, _, moved = measure(y, base, mut, tolerance_fraction=0.1)
    assert r.baseline_prediction_std == pytest.approx(math.sqrt(200)) and r.tolerance == pytest.approx(
        0.1 * math.sqrt(200)
    )
    assert r.moved == 15 == int(moved.sum()) and r.moved_share == 15 / 200
    ci = binomtest(15, 200).proportion_ci(confidence_level=0.95, method="wilson")
    assert (r.moved_share_ci_low, r.moved_share_ci_high) == pytest.approx((ci.low, ci.high))
    assert r.tolerance_basis == "0.1 x baseline prediction std"
    assert measure(y, base, mut, tolerance_fraction=0.2)[1].moved == 15 - 10  # the tolerance doubles to 2.83


def test_unchanged_predictions_have_zero_deltas_and_intervals() -> None:
    y, base, _ = regression_case(500, 4)
    _, r, _, moved = measure(y, base, base.copy())
    assert (r.mae.delta, r.mae.ci_low, r.mae.ci_high) == (0.0, 0.0, 0.0)
    assert (r.rmse.delta, r.rmse.ci_low, r.rmse.ci_high) == (0.0, 0.0, 0.0)
    assert r.moved == 0 and not moved.any() and r.prediction_psi == 0.0


def test_a_perfect_baseline_has_no_relative_change_but_a_finite_interval() -> None:
    y = np.linspace(0, 100, 300)
    mut = y + np.where(np.arange(300) % 2 == 0, 5.0, 0.0)
    _, r, _, _ = measure(y, y.copy(), mut)
    assert r.mae.baseline == 0.0 and r.mae.relative is None and r.rmse.relative is None
    assert r.mae.delta == pytest.approx(2.5) and r.mae.ci_low > 0
    assert r.rmse.delta == pytest.approx(math.sqrt(12.5)) and math.isfinite(r.rmse.ci_low)


def test_failures_are_counted_and_excluded() -> None:
    y, base, mut = regression_case(1000, 5)
    failed = np.zeros(1000, dtype=bool)
    failed[:7] = True
    mut = mut.copy()
    mut[7:10] = np.nan
    base = base.copy()
    base[10] = np.inf
    m, ok, moved = compute_regression_metrics(y, base, mut, failed)
    assert (m.failures, m.n, m.n_scored, m.failure_rate) == (11, 1000, 989, 0.011)
    assert ok.sum() == 989 and len(moved) == 989
    clean, _, _ = compute_regression_metrics(y[11:], base[11:], mut[11:], np.zeros(989, dtype=bool))
    assert m.regression == clean.regression


def test_all_rows_failed_leaves_the_task_metrics_empty() -> None:
    y = np.arange(10.0)
    m, _, moved = compute_regression_metrics(y, y, np.full(10, np.nan), np.zeros(10, dtype=bool))
    assert m.regression is None and m.psi is None and m.failures == 10 and len(moved) == 0


@pytest.mark.parametrize(
    ("y", "problem"),
    [(np.array([1.0, np.nan, 3.0]), "drop unlabelled rows"), (np.array(["a", "b", "c"]), "must be numeric")],
)
def test_bad_labels_name_the_fix(y: np.ndarray, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        compute_regression_metrics(y, np.ones(3), np.ones(3), np.zeros(3, dtype=bool))


def test_bad_shapes_and_parameters() -> None:
    with pytest.raises(ValueError, match="1-D arrays of one length"):
        compute_regression_metrics(np.ones(3), np.ones((3, 1)), np.ones(3), np.zeros(3, dtype=bool))
    with pytest.raises(ValueError, match="tolerance_fraction"):
        compute_regression_metrics(np.ones(3), np.ones(3), np.ones(3), np.zeros(3, dtype=bool), tolerance_fraction=0)
    with pytest.raises(ValueError, match="confidence"):
        compute_regression_metrics(np.ones(3), np.ones(3), np.ones(3), np.zeros(3, dtype=bool), confidence=1.0)
