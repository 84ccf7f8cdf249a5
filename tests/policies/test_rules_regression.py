"""Regression rules of default-v2, table-driven: every threshold just below, at and just above."""

from __future__ import annotations

from typing import Any

import pytest

from policies import Decision, Policy, Reason, Verdict, evaluate, load_policy
from tests.policies.helpers import TINY, regression

POLICY = load_policy().policy
RULES = POLICY.regression
assert RULES is not None


def reason_for(decision: Decision, metric: str) -> Reason:
    return next(r for r in decision.reasons if r.metric == metric)


def test_default_v2_regression_values_are_the_documented_ones() -> None:
    assert RULES is not None and RULES.min_rows == 200 and RULES.tolerance_fraction == 0.1
    assert (RULES.mae_increase_relative.warning, RULES.mae_increase_relative.block) == (0.05, 0.10)
    assert (RULES.rmse_increase_relative.warning, RULES.rmse_increase_relative.block) == (0.05, 0.10)
    assert (RULES.moved_share.warning, RULES.moved_share.block) == (0.05, 0.10)
    assert (RULES.prediction_psi.warning, RULES.prediction_psi.block) == (0.10, 0.25)
    assert POLICY.regression_tolerance_fraction() == 0.1 and POLICY.segment_bands("regression") == (0.05, 0.10)


def test_unchanged_regressor_passes_with_a_reason_per_rule() -> None:
    decision = evaluate(regression(), POLICY)
    assert decision.verdict is Verdict.PASS
    assert {r.code for r in decision.reasons} == {
        "inference_failures_pass", "mae_increase_pass", "rmse_increase_pass", "moved_share_pass", "prediction_psi_pass",
    }  # fmt: skip


def band_cases(warning: float, block: float) -> list[tuple[float, Verdict]]:
    return [
        (warning - TINY, Verdict.PASS), (warning, Verdict.WARNING), (warning + TINY, Verdict.WARNING),
        (block - TINY, Verdict.WARNING), (block, Verdict.BLOCK), (block + TINY, Verdict.BLOCK),
    ]  # fmt: skip


@pytest.mark.parametrize(("value", "expected"), band_cases(0.05, 0.10))
def test_moved_share_thresholds(value: float, expected: Verdict) -> None:
    moved: dict[str, Any] = {
        "moved_share": value,
        "moved": round(value * 1000),
        "moved_share_ci_high": min(value + 0.02, 1.0),
    }
    decision = evaluate(regression(**moved), POLICY)
    assert decision.verdict is expected
    reason = reason_for(decision, "moved_share")
    assert reason.code == f"moved_share_{expected.lower()}" and reason.value == value
    assert f"{value:.1%}" in reason.message and "0.1 x baseline prediction std" in reason.message


def test_a_moved_share_near_one_writes_its_interval_as_every_other_share_interval() -> None:
    """The demo's regressor said "95% CI 99.9%-> 99.9%": the one interval not written by `share_range`."""
    moved: dict[str, Any] = {"moved_share": 0.99986, "moved": 7199, "moved_share_ci_low": 0.99921,
                             "moved_share_ci_high": 0.99998}  # fmt: skip
    message = reason_for(evaluate(regression(**moved), POLICY), "moved_share").message
    assert "95% CI 99.921% to 99.998%, 7199 of" in message and "->" not in message


@pytest.mark.parametrize(("value", "expected"), band_cases(0.10, 0.25))
def test_prediction_psi_thresholds(value: float, expected: Verdict) -> None:
    decision = evaluate(regression(prediction_psi=value), POLICY)
    assert decision.verdict is expected
    reason = reason_for(decision, "prediction_psi")
    assert reason.code == f"prediction_psi_{expected.lower()}" and f"{value:.3f}" in reason.message


def increase_cases(warning: float, block: float) -> list[tuple[float, float, Verdict]]:
    """(relative increase, CI low of the delta, expected): significant when the interval lies wholly above 0."""
    significant = TINY
    return [
        (warning - TINY, significant, Verdict.PASS), (warning, significant, Verdict.WARNING),
        (warning + TINY, significant, Verdict.WARNING), (block - TINY, significant, Verdict.WARNING),
        (block, significant, Verdict.BLOCK), (block + TINY, significant, Verdict.BLOCK),
        (5.0, 0.0, Verdict.PASS),  # the interval reaches 0: not significant, however large the point increase
        (5.0, -TINY, Verdict.PASS),
        (-0.5, -6.0, Verdict.PASS),  # the error fell
    ]  # fmt: skip


@pytest.mark.parametrize("metric", ["mae", "rmse"])
@pytest.mark.parametrize(("relative", "ci_low", "expected"), increase_cases(0.05, 0.10))
def test_error_increases_need_significance_and_size(
    metric: str, relative: float, ci_low: float, expected: Verdict
) -> None:
    before = 10.0
    change: dict[str, Any] = {
        f"{metric}_baseline": before, f"{metric}_mutated": before * (1 + relative),
        f"{metric}_delta": before * relative, f"{metric}_delta_ci_low": ci_low,
        f"{metric}_delta_ci_high": before * relative + 1,
        f"{metric}_delta_relative": relative,
    }  # fmt: skip
    decision = evaluate(regression(**change), POLICY)
    assert decision.verdict is expected
    reason = reason_for(decision, f"{metric}_increase")
    assert reason.code == f"{metric}_increase_{expected.lower()}" and reason.value == relative
    assert f"{relative:+.1%} of baseline" in reason.message and "95% CI" in reason.message
    rule = getattr(RULES, f"{metric}_increase_relative")
    assert reason.threshold == (rule.block if expected is Verdict.BLOCK else rule.warning)


@pytest.mark.parametrize(("delta", "ci_low", "expected"), [(2.0, 1.0, Verdict.BLOCK), (0.0, 0.0, Verdict.PASS)])
def test_a_perfect_baseline_makes_any_significant_increase_unbounded(
    delta: float, ci_low: float, expected: Verdict
) -> None:
    change: dict[str, Any] = {
        "mae_baseline": 0.0, "mae_mutated": delta, "mae_delta": delta, "mae_delta_ci_low": ci_low,
        "mae_delta_ci_high": delta + 1, "mae_delta_relative": None,
    }  # fmt: skip
    reason = reason_for(evaluate(regression(**change), POLICY), "mae_increase")
    assert reason.severity is expected and "the baseline error is 0" in reason.message


@pytest.mark.parametrize(("n", "expected"), [(199, Verdict.INCOMPLETE), (200, Verdict.PASS), (201, Verdict.PASS)])
def test_minimum_rows(n: int, expected: Verdict) -> None:
    decision = evaluate(regression(n=n, moved_share=0.5, moved=n // 2), POLICY)
    expected_now = Verdict.BLOCK if expected is Verdict.PASS else expected  # judged: the 50% moved share blocks
    assert decision.verdict is expected_now
    if expected is Verdict.INCOMPLETE:
        assert {r.code for r in decision.reasons} == {"inference_failures_pass", "min_rows_incomplete"}


@pytest.mark.parametrize(
    ("failures", "expected"),
    [(0, Verdict.PASS), (1, Verdict.WARNING), (9, Verdict.WARNING), (10, Verdict.BLOCK), (11, Verdict.BLOCK)],
)
def test_inference_failures_apply_to_regression(failures: int, expected: Verdict) -> None:
    m = regression(metrics={"failures": failures, "failure_rate": failures / 1000, "n_scored": 1000 - failures})
    assert evaluate(m, POLICY).verdict is expected


def test_fewer_than_two_scored_rows_is_incomplete() -> None:
    m = regression(metrics={"regression": None, "n_scored": 1, "failures": 999, "failure_rate": 0.999, "psi": None})
    codes = {r.code for r in evaluate(m, POLICY).reasons}
    assert {"inference_failures_block", "regression_metrics_unavailable"} <= codes


def test_v1_policy_does_not_judge_regressors(v1: Policy) -> None:
    decision = evaluate(regression(), v1)
    assert decision.verdict is Verdict.INCOMPLETE
    (reason,) = [r for r in decision.reasons if r.severity is Verdict.INCOMPLETE]
    assert reason.code == "regression_not_judged" and "v1" in reason.message and "default-v2.yaml" in reason.message
    assert v1.regression_tolerance_fraction() is None and v1.segment_bands("regression") is None


def test_reason_messages_carry_value_interval_and_threshold() -> None:
    change: dict[str, Any] = {
        "mae_mutated": 13.0, "mae_delta": 3.0, "mae_delta_ci_low": 2.5, "mae_delta_ci_high": 3.5,
        "mae_delta_relative": 0.3,
    }  # fmt: skip
    reason = reason_for(evaluate(regression(**change), POLICY), "mae_increase")
    assert reason.message == (
        "MAE 10 -> 13 (change +3, 95% CI +2.5 to +3.5; +30.0% of baseline): significant, relative increase >= 0.1 block"
    )
