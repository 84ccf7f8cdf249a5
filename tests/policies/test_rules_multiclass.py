"""Multiclass rules of default-v2, table-driven: every threshold just below, at and just above."""

from __future__ import annotations

from typing import Any

import pytest

from policies import Decision, ModelMetrics, Verdict, evaluate, load_policy
from tests.policies.helpers import CLASSES, TINY, multiclass

POLICY = load_policy().policy
RULES = POLICY.multiclass
assert RULES is not None


def reason_for(decision: Decision, metric: str) -> Any:
    return next(r for r in decision.reasons if r.metric == metric)


def test_default_v2_multiclass_values_are_the_documented_ones() -> None:
    assert RULES is not None and RULES.min_rows == 200
    assert (RULES.flip_rate.warning, RULES.flip_rate.block) == (0.05, 0.10)
    assert (RULES.accuracy_drop.warning, RULES.accuracy_drop.block) == (0.01, 0.03)
    assert (RULES.macro_f1_drop.warning, RULES.macro_f1_drop.block) == (0.01, 0.03)
    assert (RULES.class_psi.warning, RULES.class_psi.block) == (0.10, 0.25)


def test_unchanged_model_passes_with_a_reason_per_rule() -> None:
    decision = evaluate(multiclass(), POLICY)
    assert decision.verdict is Verdict.PASS
    assert {r.code for r in decision.reasons} == {
        "inference_failures_pass", "flip_rate_pass", "class_psi_pass", "accuracy_drop_pass", "macro_f1_drop_pass",
    }  # fmt: skip


def band_cases(warning: float, block: float) -> list[tuple[float, Verdict]]:
    return [
        (warning - TINY, Verdict.PASS), (warning, Verdict.WARNING), (warning + TINY, Verdict.WARNING),
        (block - TINY, Verdict.WARNING), (block, Verdict.BLOCK), (block + TINY, Verdict.BLOCK),
    ]  # fmt: skip


@pytest.mark.parametrize(("value", "expected"), band_cases(0.05, 0.10))
def test_argmax_flip_rate_thresholds(value: float, expected: Verdict) -> None:
    m = multiclass(metrics={"flip_rate": value, "flips": round(value * 1000), "flip_rate_ci_high": value + 0.01})
    decision = evaluate(m, POLICY)
    assert decision.verdict is expected
    reason = reason_for(decision, "flip_rate")
    assert reason.code == f"flip_rate_{expected.lower()}" and reason.value == value
    assert "argmax flip rate" in reason.message and f"{value:.1%}" in reason.message


@pytest.mark.parametrize(("value", "expected"), band_cases(0.10, 0.25))
def test_class_psi_judges_the_worst_class(value: float, expected: Verdict) -> None:
    psi = {"low": 0.01, "medium": value, "high": 0.02}
    decision = evaluate(multiclass(per_class_psi=psi), POLICY)
    assert decision.verdict is expected
    reason = reason_for(decision, "class_psi")
    assert reason.code == f"class_psi_{expected.lower()}" and reason.value == value
    assert "class medium" in reason.message and f"{value:.3f}" in reason.message


def drop_cases(warning: float, block: float) -> list[tuple[float, float, Verdict]]:
    """(drop, CI high of the change, expected): significant when the interval lies wholly below 0."""
    significant = -TINY
    return [
        (warning - TINY, significant, Verdict.PASS), (warning, significant, Verdict.WARNING),
        (warning + TINY, significant, Verdict.WARNING), (block - TINY, significant, Verdict.WARNING),
        (block, significant, Verdict.BLOCK), (block + TINY, significant, Verdict.BLOCK),
        (0.2, 0.0, Verdict.PASS),  # the interval reaches 0: not significant, however large the point drop
        (0.2, TINY, Verdict.PASS),
        (-0.2, 0.25, Verdict.PASS),  # an improvement
    ]  # fmt: skip


@pytest.mark.parametrize("metric", ["accuracy", "macro_f1"])
@pytest.mark.parametrize(("drop", "ci_high", "expected"), drop_cases(0.01, 0.03))
def test_drops_need_significance_and_size(metric: str, drop: float, ci_high: float, expected: Verdict) -> None:
    before = 0.80
    change: dict[str, Any] = {
        f"{metric}_baseline": before, f"{metric}_mutated": before - drop, f"{metric}_delta": -drop,
        f"{metric}_delta_ci_low": -drop - 0.01, f"{metric}_delta_ci_high": ci_high,
    }  # fmt: skip
    decision = evaluate(multiclass(**change), POLICY)
    assert decision.verdict is expected
    reason = reason_for(decision, f"{metric}_drop")
    assert reason.code == f"{metric}_drop_{expected.lower()}" and reason.value == pytest.approx(drop)
    assert f"change {-drop:+.4f}" in reason.message and "95% CI" in reason.message
    rule = getattr(RULES, f"{metric}_drop")
    assert reason.threshold == (rule.block if expected is Verdict.BLOCK else rule.warning)


@pytest.mark.parametrize(("n", "expected"), [(199, Verdict.INCOMPLETE), (200, Verdict.PASS), (201, Verdict.PASS)])
def test_minimum_rows(n: int, expected: Verdict) -> None:
    decision = evaluate(multiclass(n=n), POLICY)
    assert decision.verdict is expected
    if expected is Verdict.INCOMPLETE:
        assert {r.code for r in decision.reasons} == {"inference_failures_pass", "min_rows_incomplete"}


def test_positives_and_negatives_do_not_apply_to_multiclass() -> None:
    m = multiclass()
    assert m.binary is None and evaluate(m, POLICY).verdict is Verdict.PASS


@pytest.mark.parametrize(
    ("failures", "expected"),
    [(0, Verdict.PASS), (1, Verdict.WARNING), (9, Verdict.WARNING), (10, Verdict.BLOCK), (11, Verdict.BLOCK)],
)
def test_inference_failures_apply_to_multiclass(failures: int, expected: Verdict) -> None:
    m = multiclass(metrics={"failures": failures, "failure_rate": failures / 1000, "n_scored": 1000 - failures})
    assert evaluate(m, POLICY).verdict is expected


def test_no_scored_rows_is_incomplete_and_blocked_by_failures() -> None:
    m = multiclass(
        metrics={"multiclass": None, "n_scored": 0, "failures": 1000, "failure_rate": 1.0, "flip_rate": None}
    )
    decision = evaluate(m, POLICY)
    assert decision.verdict is Verdict.BLOCK
    assert {"inference_failures_block", "multiclass_metrics_unavailable"} <= {r.code for r in decision.reasons}


def test_v1_policy_does_not_judge_multiclass(v1: Any) -> None:
    decision = evaluate(multiclass(per_class_psi=dict.fromkeys(CLASSES, 0.9)), v1)
    assert decision.verdict is Verdict.INCOMPLETE
    (reason,) = [r for r in decision.reasons if r.severity is Verdict.INCOMPLETE]
    assert reason.code == "multiclass_not_judged" and "default-v2.yaml" in reason.message


def test_metrics_type_is_shared() -> None:
    assert isinstance(multiclass(), ModelMetrics)
