"""Multiclass metrics against independent implementations: sklearn for accuracy / macro-F1, scipy's paired t
interval for the accuracy change, an explicit-loop row bootstrap with sklearn's f1_score for the macro-F1 change."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest, ttest_rel
from sklearn.metrics import accuracy_score, f1_score

from tools.experiment.metrics import psi
from tools.experiment.metrics_multiclass import (
    BOOTSTRAP_RESAMPLES,
    compute_multiclass_metrics,
    encode_labels,
    finite_rows,
)

CLASSES = ["bronze", "silver", "gold", "platinum"]


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def multiclass_case(n: int, seed: int, damage: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels, a decent baseline (about 70 % accuracy) and a mutated copy with noise added to its logits."""
    rng = np.random.default_rng(seed)
    k = len(CLASSES)
    truth = rng.integers(0, k, n)
    logits = rng.normal(0, 1, (n, k))
    logits[np.arange(n), truth] += 1.8
    mutated = logits + rng.normal(0, damage, (n, k))
    return np.array(CLASSES)[truth], softmax(logits), softmax(mutated)


def measure(y: np.ndarray, base: np.ndarray, mut: np.ndarray, seed: int = 0):  # type: ignore[no-untyped-def]
    m, ok, flipped = compute_multiclass_metrics(y, base, mut, np.zeros(len(y), dtype=bool), CLASSES, seed=seed)
    assert m.multiclass is not None
    return m, m.multiclass, ok, flipped


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_point_values_match_sklearn(seed: int) -> None:
    y, base, mut = multiclass_case(3000, seed)
    m, mc, _, flipped = measure(y, base, mut)
    pred_b, pred_m = np.array(CLASSES)[base.argmax(1)], np.array(CLASSES)[mut.argmax(1)]
    assert mc.accuracy.baseline == pytest.approx(accuracy_score(y, pred_b))
    assert mc.accuracy.mutated == pytest.approx(accuracy_score(y, pred_m))
    assert mc.macro_f1.baseline == pytest.approx(f1_score(y, pred_b, average="macro"), rel=1e-12)
    assert mc.macro_f1.mutated == pytest.approx(f1_score(y, pred_m, average="macro"), rel=1e-12)
    assert m.flips == int((pred_b != pred_m).sum()) == int(flipped.sum()) and m.flip_rate == m.flips / 3000
    ci = binomtest(m.flips, 3000).proportion_ci(confidence_level=0.95, method="wilson")
    assert (m.flip_rate_ci_low, m.flip_rate_ci_high) == pytest.approx((ci.low, ci.high))
    assert mc.per_class_psi == {c: psi(base[:, j], mut[:, j]) for j, c in enumerate(CLASSES)}
    assert m.psi == max(mc.per_class_psi.values())
    shift = np.abs(mut - base).max(axis=1)
    assert (m.prob_shift_mean, m.prob_shift_max) == pytest.approx((shift.mean(), shift.max()))
    assert (m.task, m.binary) == ("multiclass", None)


def test_per_class_flip_rate_by_hand() -> None:
    eye = np.eye(4)
    base = np.repeat(eye, [4, 2, 2, 2], axis=0) * 0.7 + 0.075  # baseline classes: 4 bronze, 2 silver, 2 gold, 2 plat.
    mut = base.copy()
    mut[0], mut[1], mut[4] = base[4], base[6], base[0]  # two bronze rows and one silver row change class
    y = np.array(CLASSES)[base.argmax(1)]
    _, mc, _, _ = measure(y, base, mut)
    assert mc.per_class_flip_rate == {"bronze": 0.5, "silver": 0.5, "gold": 0.0, "platinum": 0.0}


@pytest.mark.parametrize("seed", [0, 1])
def test_accuracy_interval_matches_the_paired_t_interval(seed: int) -> None:
    y, base, mut = multiclass_case(20_000, seed)
    _, mc, _, _ = measure(y, base, mut)
    correct_b = (np.array(CLASSES)[base.argmax(1)] == y).astype(float)
    correct_m = (np.array(CLASSES)[mut.argmax(1)] == y).astype(float)
    ci = ttest_rel(correct_m, correct_b).confidence_interval(0.95)
    width = ci.high - ci.low
    assert mc.accuracy.ci_low == pytest.approx(ci.low, abs=1e-3 * width)
    assert mc.accuracy.ci_high == pytest.approx(ci.high, abs=1e-3 * width)


def loop_bootstrap_f1_delta(y: np.ndarray, pred_b: np.ndarray, pred_m: np.ndarray, resamples: int) -> np.ndarray:
    """Resample rows, recompute both macro-F1s with sklearn on the same rows (labels fixed to the full sample's)."""
    labels = sorted(set(y) | set(pred_b) | set(pred_m))
    rng = np.random.default_rng(99)
    out = np.empty(resamples)
    for b in range(resamples):
        i = rng.integers(0, len(y), len(y))
        f1_m = f1_score(y[i], pred_m[i], labels=labels, average="macro", zero_division=0)
        out[b] = f1_m - f1_score(y[i], pred_b[i], labels=labels, average="macro", zero_division=0)
    return out


@pytest.mark.slow
def test_macro_f1_interval_matches_an_explicit_row_bootstrap() -> None:
    y, base, mut = multiclass_case(800, 4, damage=1.5)
    _, mc, _, _ = measure(y, base, mut)
    pred_b, pred_m = np.array(CLASSES)[base.argmax(1)], np.array(CLASSES)[mut.argmax(1)]
    loop = loop_bootstrap_f1_delta(y, pred_b, pred_m, 500)  # sklearn in a loop: ~2 ms a resample
    low, high = np.quantile(loop, [0.025, 0.975])
    spread = float(loop.std())
    assert mc.macro_f1.ci_low == pytest.approx(low, abs=0.35 * spread)
    assert mc.macro_f1.ci_high == pytest.approx(high, abs=0.35 * spread)
    assert mc.macro_f1.ci_low < mc.macro_f1.delta < mc.macro_f1.ci_high
    assert BOOTSTRAP_RESAMPLES >= 1000


def test_bootstrap_is_seeded() -> None:
    y, base, mut = multiclass_case(1000, 5)
    assert measure(y, base, mut, seed=3)[1] == measure(y, base, mut, seed=3)[1]
    other = measure(y, base, mut, seed=4)[1]
    assert other.macro_f1.ci_low != measure(y, base, mut, seed=3)[1].macro_f1.ci_low


def test_unchanged_model_has_zero_change_and_zero_width_intervals() -> None:
    y, base, _ = multiclass_case(500, 6)
    m, mc, _, _ = measure(y, base, base.copy())
    assert m.flips == 0 and (mc.accuracy.delta, mc.accuracy.ci_low, mc.accuracy.ci_high) == (0, 0, 0)
    assert (mc.macro_f1.delta, mc.macro_f1.ci_low, mc.macro_f1.ci_high) == (0, 0, 0)


def test_labels_compare_as_strings_and_unknown_labels_are_always_wrong() -> None:
    y_int = np.array([0, 1, 2, 2, 7])  # 7: a label the model has no class for
    codes, labels = encode_labels(y_int, [0, 1, 2])
    assert labels == ["0", "1", "2", "7"] and codes.tolist() == [0, 1, 2, 2, 3]
    probs = np.eye(3)[[0, 1, 2, 2, 2]]
    m, _, _ = compute_multiclass_metrics(y_int, probs, probs, np.zeros(5, dtype=bool), [0, 1, 2])
    assert m.multiclass is not None and m.multiclass.accuracy.baseline == pytest.approx(0.8)
    expected = f1_score(y_int.astype(str), np.array(["0", "1", "2", "2", "2"]), average="macro", zero_division=0)
    assert m.multiclass.macro_f1.baseline == pytest.approx(expected)


def test_many_classes_take_the_sparse_cell_path() -> None:
    k, n = 170, 3000  # 170^3 cells > the dense bincount limit
    rng = np.random.default_rng(8)
    truth = rng.integers(0, k, n)
    logits = rng.normal(0, 1, (n, k))
    logits[np.arange(n), truth] += 3
    mut = logits + rng.normal(0, 0.5, (n, k))
    classes = [f"c{i}" for i in range(k)]
    m, _, _ = compute_multiclass_metrics(
        np.array(classes)[truth], softmax(logits), softmax(mut), np.zeros(n, bool), classes
    )
    assert m.multiclass is not None
    pred_b = np.array(classes)[logits.argmax(1)]
    assert m.multiclass.macro_f1.baseline == pytest.approx(
        f1_score(np.array(classes)[truth], pred_b, average="macro", zero_division=0)
    )


def test_failures_are_counted_and_excluded() -> None:
    y, base, mut = multiclass_case(1000, 7)
    failed = np.zeros(1000, dtype=bool)
    failed[:4] = True
    mut = mut.copy()
    mut[4:6, 1] = np.nan
    m, ok, flipped = compute_multiclass_metrics(y, base, mut, failed, CLASSES)
    assert (m.failures, m.n_scored, int(ok.sum()), len(flipped)) == (6, 994, 994, 994)
    clean, _, _ = compute_multiclass_metrics(y[6:], base[6:], mut[6:], np.zeros(994, dtype=bool), CLASSES)
    assert m.multiclass == clean.multiclass and m.flips == clean.flips


def test_the_max_shift_is_over_every_class_of_the_scored_rows() -> None:
    y, base, mut = multiclass_case(1000, 9)
    mut = mut.copy()
    mut[7, 2] = np.inf
    m, ok, _ = compute_multiclass_metrics(y, base, mut, np.zeros(1000, dtype=bool), CLASSES)
    shift = np.abs(mut[ok] - base[ok]).max(axis=1)
    assert (int(ok.sum()), bool(ok[7])) == (999, False)
    assert (m.prob_shift_mean, m.prob_shift_max) == (float(shift.mean()), float(shift.max()))
    assert m.prob_shift_p95 == float(np.quantile(shift, 0.95))


def test_all_rows_failed() -> None:
    y, base, _ = multiclass_case(20, 8)
    m, _, _ = compute_multiclass_metrics(y, base, np.full_like(base, np.nan), np.zeros(20, dtype=bool), CLASSES)
    assert m.multiclass is None and m.flip_rate is None and m.failure_rate == 1.0


@pytest.mark.parametrize(
    ("probs", "classes", "y", "problem"),
    [
        (np.ones((3, 2)), CLASSES, ["bronze"] * 3, "must be \\(n, 4\\) probabilities"),
        (np.ones((3, 2)), ["a", "a"], ["a"] * 3, "distinct"),
        (np.ones((3, 2)), ["a", "b"], ["a", None, "b"], "missing labels"),
        (np.ones((3, 2)), ["a", "b"], ["a", "b"], "lengths differ"),
    ],
)
def test_bad_inputs_name_the_fix(probs: np.ndarray, classes: list[str], y: list[object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        compute_multiclass_metrics(np.array(y, dtype=object), probs, probs, np.zeros(len(probs), dtype=bool), classes)


def test_finite_rows_finds_a_single_bad_value_in_a_contiguous_block() -> None:
    scores = np.random.default_rng(3).random((1000, 4))
    assert finite_rows(scores).all()
    scores[17, 2], scores[400, 0] = np.nan, np.inf
    expected = np.isfinite(scores).all(axis=1)
    np.testing.assert_array_equal(finite_rows(scores), expected)
    np.testing.assert_array_equal(finite_rows(scores[::2]), expected[::2])  # a strided view takes the column path


def test_precomputed_label_codes_give_the_same_metrics() -> None:
    rng = np.random.default_rng(9)
    n = 3000
    base = rng.dirichlet([2, 2, 2], n)
    mut = rng.dirichlet([2, 2, 2], n)
    y = np.array(["a", "b", "c", "z"])[rng.integers(0, 4, n)]  # "z": a label the model has no class for
    failed = rng.random(n) < 0.02
    plain, ok, flips = compute_multiclass_metrics(y, base, mut, failed, ["a", "b", "c"])
    given, ok2, flips2 = compute_multiclass_metrics(
        y, base, mut, failed, ["a", "b", "c"], encoded=encode_labels(y, ["a", "b", "c"])
    )
    assert given == plain
    np.testing.assert_array_equal(ok, ok2)
    np.testing.assert_array_equal(flips, flips2)
    with pytest.raises(ValueError, match="encode this evaluation's labels"):
        short = encode_labels(y[:10], ["a", "b", "c"])
        compute_multiclass_metrics(y, base, mut, failed, ["a", "b", "c"], encoded=short)
