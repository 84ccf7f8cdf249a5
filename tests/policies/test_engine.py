"""The policy engine: every threshold just below, at and above; INCOMPLETE rules; ordering; loading."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from policies import (
    DEFAULT_POLICY_PATH,
    V1_POLICY_PATH,
    Decision,
    Policy,
    PolicyError,
    Verdict,
    evaluate,
    incomplete,
    load_policy,
    overall_verdict,
)
from tools.experiment.metrics import METHODS, ModelMetrics, compute_metrics

POLICY = load_policy().policy
TINY = 1e-9


def metrics(**overrides: Any) -> ModelMetrics:
    """Metrics that pass every rule of any sane policy; tests override one number at a time."""
    n = overrides.get("n", 1000)
    fields: dict[str, Any] = {
        "n": n, "positives": n // 2, "negatives": n - n // 2, "n_scored": n,
        "auc_baseline": 0.85, "auc_mutated": 0.85, "auc_delta": 0.0, "auc_delta_ci_low": -0.01,
        "auc_delta_ci_high": 0.01, "auc_p_value": 1.0, "flips": 0, "flip_rate": 0.0, "flip_rate_ci_low": 0.0,
        "flip_rate_ci_high": 0.004, "prob_shift_mean": 0.0, "prob_shift_p95": 0.0, "prob_shift_max": 0.0,
        "psi": 0.0, "failures": 0, "failure_rate": 0.0, "threshold": 0.5, "confidence": 0.95, "methods": METHODS,
    }  # fmt: skip
    fields.update(overrides)
    return ModelMetrics(**fields)


def codes(decision: Decision) -> set[str]:
    return {r.code for r in decision.reasons}


@pytest.mark.parametrize(("path", "version"), [(DEFAULT_POLICY_PATH, 2), (V1_POLICY_PATH, 1)])
def test_default_policy_values_are_the_documented_ones(path: Path, version: int) -> None:
    p = load_policy(path).policy  # v2 is the default; its binary rules are v1's, unchanged
    assert (p.name, p.version) == ("default", version)
    assert (p.flip_rate.warning, p.flip_rate.block) == (0.05, 0.10)
    assert (p.score_psi.warning, p.score_psi.block) == (0.10, 0.25)
    assert (p.inference_failures.warning_count, p.inference_failures.block_rate) == (1, 0.01)
    assert (p.auc_drop.alpha, p.auc_drop.warning, p.auc_drop.block) == (0.05, 0.01, 0.03)
    assert (p.min_rows, p.min_positives, p.min_negatives) == (200, 20, 20)


def test_everything_fine_passes_with_informational_reasons() -> None:
    decision = evaluate(metrics(), POLICY)
    assert decision.verdict is Verdict.PASS
    assert codes(decision) == {"inference_failures_pass", "flip_rate_pass", "score_psi_pass", "auc_drop_pass"}
    flip = next(r for r in decision.reasons if r.code == "flip_rate_pass")
    assert "0.0%" in flip.message and "5%" in flip.message and "warning threshold" in flip.message


def band_cases(metric: str) -> list[tuple[float, Verdict]]:
    band = getattr(POLICY, metric)
    return [
        (band.warning - TINY, Verdict.PASS),
        (band.warning, Verdict.WARNING),
        (band.warning + TINY, Verdict.WARNING),
        (band.block - TINY, Verdict.WARNING),
        (band.block, Verdict.BLOCK),
        (band.block + TINY, Verdict.BLOCK),
    ]


@pytest.mark.parametrize(("value", "expected"), band_cases("flip_rate"))
def test_flip_rate_thresholds(value: float, expected: Verdict) -> None:
    decision = evaluate(metrics(flip_rate=value, flips=round(value * 1000)), POLICY)
    assert decision.verdict is expected
    reason = next(r for r in decision.reasons if r.metric == "flip_rate")
    assert reason.code == f"flip_rate_{expected.lower()}" and reason.value == value
    assert f"{value:.1%}" in reason.message


@pytest.mark.parametrize(("value", "expected"), band_cases("score_psi"))
def test_psi_thresholds(value: float, expected: Verdict) -> None:
    decision = evaluate(metrics(psi=value), POLICY)
    assert decision.verdict is expected
    reason = next(r for r in decision.reasons if r.metric == "score_psi")
    assert reason.code == f"score_psi_{expected.lower()}" and f"{value:.3f}" in reason.message
    limit = POLICY.score_psi.block if expected is Verdict.BLOCK else POLICY.score_psi.warning
    assert reason.threshold == limit and f"{limit:g}" in reason.message


def failure_cases() -> list[tuple[int, int, Verdict]]:
    rule = POLICY.inference_failures
    n = 10_000
    at_block = round(rule.block_rate * n)
    return [
        (rule.warning_count - 1, n, Verdict.PASS),
        (rule.warning_count, n, Verdict.WARNING),
        (rule.warning_count + 1, n, Verdict.WARNING),
        (at_block - 1, n, Verdict.WARNING),
        (at_block, n, Verdict.BLOCK),
        (at_block + 1, n, Verdict.BLOCK),
        (n, n, Verdict.BLOCK),
    ]


@pytest.mark.parametrize(("failures", "n", "expected"), failure_cases())
def test_inference_failure_thresholds(failures: int, n: int, expected: Verdict) -> None:
    scored = n - failures
    auc: dict[str, Any] = {} if scored else dict.fromkeys(
        ("auc_baseline", "auc_mutated", "auc_delta", "auc_delta_ci_low", "auc_delta_ci_high", "auc_p_value",
         "flip_rate", "flip_rate_ci_low", "flip_rate_ci_high", "psi"))  # fmt: skip
    m = metrics(n=n, failures=failures, failure_rate=failures / n, n_scored=scored, **auc)
    decision = evaluate(m, POLICY)
    assert decision.verdict is expected
    reason = next(r for r in decision.reasons if r.metric == "failure_rate")
    assert reason.code == f"inference_failures_{expected.lower()}" and f"{failures} of {n}" in reason.message


def auc_cases() -> list[tuple[float, float, Verdict]]:
    rule = POLICY.auc_drop
    significant, not_significant = rule.alpha / 10, rule.alpha
    return [
        (rule.warning - TINY, significant, Verdict.PASS),
        (rule.warning, significant, Verdict.WARNING),
        (rule.warning + TINY, significant, Verdict.WARNING),
        (rule.block - TINY, significant, Verdict.WARNING),
        (rule.block, significant, Verdict.BLOCK),
        (rule.block + TINY, significant, Verdict.BLOCK),
        (0.2, not_significant, Verdict.PASS),  # p == alpha is not significant (p < alpha is required)
        (0.2, rule.alpha - TINY, Verdict.BLOCK),
        (0.2, rule.alpha + TINY, Verdict.PASS),
        (-0.2, significant, Verdict.PASS),  # a significant improvement is not a problem
    ]


@pytest.mark.parametrize(("drop", "p_value", "expected"), auc_cases())
def test_auc_drop_needs_significance_and_size(drop: float, p_value: float, expected: Verdict) -> None:
    m = metrics(auc_mutated=0.85 - drop, auc_delta=-drop, auc_p_value=p_value)
    decision = evaluate(m, POLICY)
    assert decision.verdict is expected
    reason = next(r for r in decision.reasons if r.metric == "auc_drop")
    assert reason.code == f"auc_drop_{expected.lower()}" and reason.value == pytest.approx(drop)
    assert "DeLong p" in reason.message


AUC_FACTS = re.compile(
    r"AUC (?P<before>\d\.\d{4}) -> (?P<after>\d\.\d{4}) \(change (?P<delta>[+-]\d\.\d{4}), "
    r"95% CI (?P<low>[+-]\d\.\d{4}) to (?P<high>[+-]\d\.\d{4}), DeLong p = "
)


@pytest.mark.parametrize(
    ("delta", "ci_low", "ci_high", "p_value"),
    [
        (-0.1727, -0.1854, -0.1601, 1e-12),  # a significant drop (the demo's cents change): all three negative
        (-0.02, -0.035, -0.005, 0.01),  # a smaller significant drop
        (0.0150, 0.0040, 0.0260, 0.01),  # a significant improvement: all three positive
        (0.2, 0.15, 0.25, 1e-6),
    ],
)
def test_auc_reason_uses_one_sign_for_the_change_and_its_interval(
    delta: float, ci_low: float, ci_high: float, p_value: float
) -> None:
    m = metrics(
        auc_mutated=0.85 + delta, auc_delta=delta, auc_delta_ci_low=ci_low, auc_delta_ci_high=ci_high,
        auc_p_value=p_value,
    )  # fmt: skip
    reason = next(r for r in evaluate(m, POLICY).reasons if r.metric == "auc_drop")
    found = AUC_FACTS.search(reason.message)
    assert found, reason.message
    shown = {k: float(found[k]) for k in ("delta", "low", "high")}
    assert shown == pytest.approx({"delta": delta, "low": ci_low, "high": ci_high}, abs=5e-5), reason.message
    sign = np.sign(delta)
    assert all(found[k][0] == ("-" if sign < 0 else "+") for k in ("delta", "low", "high")), reason.message
    assert np.sign(float(found["after"]) - float(found["before"])) == sign, reason.message
    assert reason.value == pytest.approx(-delta)  # the thresholds still compare the drop (baseline - mutated)


def test_auc_reason_interval_straddling_zero_keeps_each_bounds_own_sign() -> None:
    m = metrics(auc_mutated=0.84, auc_delta=-0.01, auc_delta_ci_low=-0.03, auc_delta_ci_high=0.01, auc_p_value=0.3)
    found = AUC_FACTS.search(next(r for r in evaluate(m, POLICY).reasons if r.metric == "auc_drop").message)
    assert found and (found["delta"], found["low"], found["high"]) == ("-0.0100", "-0.0300", "+0.0100")


@pytest.mark.parametrize(
    ("field", "minimum"), [("n", "min_rows"), ("positives", "min_positives"), ("negatives", "min_negatives")]
)
def test_minimum_sample_sizes(field: str, minimum: str) -> None:
    need = getattr(POLICY, minimum)
    base = {"n": 5000, "positives": 2500, "negatives": 2500}
    for have, expected in ((need - 1, Verdict.INCOMPLETE), (need, Verdict.PASS), (need + 1, Verdict.PASS)):
        counts = base | {field: have}
        if field == "n":
            counts |= {"positives": have // 2, "negatives": have - have // 2}
        decision = evaluate(metrics(**counts, n_scored=counts["n"]), POLICY)
        assert decision.verdict is expected, (field, have)
        if expected is Verdict.INCOMPLETE:
            reason = next(r for r in decision.reasons if r.severity is Verdict.INCOMPLETE)
            assert str(need) in reason.message and str(have) in reason.message


def test_small_sample_is_not_judged_on_statistics_but_failures_still_block() -> None:
    tiny = {"n": 50, "positives": 25, "negatives": 25, "n_scored": 50}
    assert evaluate(metrics(**tiny, flip_rate=0.5, psi=3.0), POLICY).verdict is Verdict.INCOMPLETE
    failing = evaluate(metrics(**(tiny | {"n_scored": 45}), failures=5, failure_rate=0.1), POLICY)
    assert failing.verdict is Verdict.BLOCK and "inference_failures_block" in codes(failing)
    one_class = evaluate(metrics(positives=0, negatives=1000, auc_baseline=None, auc_mutated=None), POLICY)
    assert one_class.verdict is Verdict.INCOMPLETE and "min_positives_incomplete" in codes(one_class)


def test_auc_not_computable_is_incomplete() -> None:
    decision = evaluate(metrics(auc_baseline=None, auc_mutated=None, auc_delta=None, auc_p_value=None), POLICY)
    assert decision.verdict is Verdict.INCOMPLETE and "auc_unavailable" in codes(decision)


def test_all_rows_failed_blocks_on_failure_rate() -> None:
    y = np.array([0, 1] * 250)
    m = compute_metrics(y, np.full(500, 0.3), np.full(500, np.nan), np.zeros(500, dtype=bool))
    decision = evaluate(m, POLICY)
    assert decision.verdict is Verdict.BLOCK
    assert {"inference_failures_block", "auc_unavailable"} <= codes(decision)


def test_end_to_end_from_scores() -> None:
    rng = np.random.default_rng(7)
    y = (rng.random(2000) < 0.3).astype(int)
    base = np.clip(0.2 + 0.5 * y + rng.normal(0, 0.15, 2000), 0, 1)
    ok = np.zeros(2000, dtype=bool)
    assert evaluate(compute_metrics(y, base, base.copy(), ok), POLICY).verdict is Verdict.PASS
    inverted = evaluate(compute_metrics(y, base, 1 - base, ok), POLICY)
    assert inverted.verdict is Verdict.BLOCK
    assert {"flip_rate_block", "score_psi_block", "auc_drop_block"} <= codes(inverted)


def test_evaluate_is_pure() -> None:
    m = metrics(flip_rate=0.07, psi=0.12)
    assert evaluate(m, POLICY) == evaluate(m, POLICY)
    assert m == metrics(flip_rate=0.07, psi=0.12)


def test_verdict_ordering_and_overall() -> None:
    order = [Verdict.PASS, Verdict.WARNING, Verdict.INCOMPLETE, Verdict.BLOCK]
    assert sorted(Verdict, key=lambda v: v.severity) == order
    assert overall_verdict([]) is Verdict.PASS
    for i, worst in enumerate(order):
        assert overall_verdict(order[: i + 1]) is worst
        assert overall_verdict(list(reversed(order[: i + 1]))) is worst
    assert overall_verdict([Verdict.WARNING, Verdict.INCOMPLETE, Verdict.PASS]) is Verdict.INCOMPLETE


def test_incomplete_helper() -> None:
    decision = incomplete("artifact_hash_mismatch", "sha256 of model.joblib does not match the catalog")
    assert decision.verdict is Verdict.INCOMPLETE
    assert decision.reasons[0].code == "artifact_hash_mismatch" and decision.reasons[0].metric is None


def test_load_policy_hash_and_path() -> None:
    loaded = load_policy()
    assert loaded.sha256 == hashlib.sha256(DEFAULT_POLICY_PATH.read_bytes()).hexdigest()
    assert loaded.path == DEFAULT_POLICY_PATH.resolve()
    assert load_policy(DEFAULT_POLICY_PATH) == loaded


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_copied_policy_loads_with_its_own_hash(tmp_path: Path) -> None:
    text = V1_POLICY_PATH.read_text().replace("block: 0.10", "block: 0.12", 1)
    loaded = load_policy(write(tmp_path, "default-v1.yaml", text))
    assert loaded.policy.flip_rate.block == 0.12 and loaded.sha256 != load_policy(V1_POLICY_PATH).sha256


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: default\nversion: [1\n", "not valid YAML"),
        ("- just\n- a list\n", "expected a mapping"),
        ("", "expected a mapping"),
        ("name: default\nversion: 1\n", "min_rows"),
    ],
)
def test_malformed_policy_names_the_file(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path, "broken.yaml", text)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert str(path) in str(info.value) and problem in str(info.value)


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("warning: 0.05     #", "warning: 0.5     #", "flip_rate: warning (0.5) must be <= block"),
        ("block: 0.25       #", "block: -1       #", "score_psi.block"),
        ("alpha: 0.05       #", "alpha: 1.5       #", "auc_drop.alpha"),
        ("min_positives: 20", "min_positives: 1", "min_positives"),
        ("min_rows: 200", "min_rows: 30", "min_rows must be >= min_positives + min_negatives"),
        ("version: 1", "version: 1\nextra_threshold: 3", "extra_threshold"),
        ("version: 1", "version: 1\nversion: 2", "duplicate key 'version'"),
        ("version: 1", "version: 2", "file name says default v1"),
    ],
)
def test_invalid_policy_values(tmp_path: Path, old: str, new: str, problem: str) -> None:
    text = V1_POLICY_PATH.read_text()  # the loader's checks on v1 (still selectable); v2's: test_engine_v2.py
    assert old in text
    path = write(tmp_path, "default-v1.yaml", text.replace(old, new, 1))
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert str(path) in str(info.value) and problem in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read policy file"):
        load_policy(tmp_path / "nope.yaml")


def test_policy_is_frozen() -> None:
    with pytest.raises(ValidationError):
        POLICY.min_rows = 1  # type: ignore[misc]
    assert isinstance(POLICY, Policy)
