"""A registered task's rules (a policy's `tasks:` section) over its general metrics section: the headline share's
band, each named loss as a significant relative increase, and INCOMPLETE wherever a rule could not be checked."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from policies import (
    DEFAULT_POLICY_PATH,
    ModelMetrics,
    PairedChange,
    Policy,
    TaskMetrics,
    Verdict,
    evaluate,
    load_policy,
)

QUANTILE_RULES = {
    "min_rows": 100,
    "share": {"warning": 0.05, "block": 0.1},
    "increases": {"pinball_loss": {"warning": 0.05, "block": 0.2}},
}
POLICY = Policy.model_validate(load_policy().policy.model_dump() | {"tasks": {"quantile": QUANTILE_RULES}})


def loss(baseline: float = 2.0, delta: float = 0.0, low: float = -0.01, high: float = 0.01) -> PairedChange:
    return PairedChange(
        baseline=baseline, mutated=baseline + delta, delta=delta, ci_low=low, ci_high=high, relative=delta / baseline
    )


def metrics(
    n: int = 1000, share: float = 0.0, paired: dict[str, PairedChange] | None = None, **top: Any
) -> ModelMetrics:
    section = TaskMetrics(
        share_name="moved_share", share=share, share_ci_low=max(0.0, share - 0.01), share_ci_high=share + 0.01,
        events=round(share * n), paired={"pinball_loss": loss()} if paired is None else paired,
    )  # fmt: skip
    fields: dict[str, Any] = {
        "n": n, "n_scored": n, "flips": 0, "flip_rate": None, "flip_rate_ci_low": None, "flip_rate_ci_high": None,
        "prob_shift_mean": None, "prob_shift_p95": None, "prob_shift_max": None, "psi": None, "failures": 0,
        "failure_rate": 0.0, "threshold": 0.5, "confidence": 0.95, "methods": {}, "task": "quantile",
        "other": section,
    }  # fmt: skip
    return ModelMetrics(**(fields | top))


def codes(m: ModelMetrics, policy: Policy = POLICY) -> dict[str, Verdict]:
    return {r.code: r.severity for r in evaluate(m, policy).reasons}


def test_unchanged_numbers_pass_with_every_rule_named() -> None:
    decision = evaluate(metrics(), POLICY)
    assert decision.verdict == Verdict.PASS
    assert {"moved_share_pass", "pinball_loss_increase_pass"} <= set(codes(metrics()))


@pytest.mark.parametrize(("share", "expected"), [(0.049, Verdict.PASS), (0.05, Verdict.WARNING), (0.1, Verdict.BLOCK)])
def test_the_share_is_judged_by_its_band(share: float, expected: Verdict) -> None:
    assert evaluate(metrics(share=share), POLICY).verdict == expected


@pytest.mark.parametrize(
    ("delta", "low", "expected"),
    [
        (0.5, 0.4, Verdict.BLOCK),  # +25 %, significant
        (0.2, 0.1, Verdict.WARNING),  # +10 %
        (0.5, -0.1, Verdict.PASS),  # large but the interval reaches 0: not significant
        (0.05, 0.01, Verdict.PASS),  # significant but +2.5 %: below the practical minimum
    ],
)
def test_a_loss_increase_fires_only_when_significant_and_large(delta: float, low: float, expected: Verdict) -> None:
    m = metrics(paired={"pinball_loss": loss(delta=delta, low=low, high=delta + 0.1)})
    assert evaluate(m, POLICY).verdict == expected


def test_a_loss_the_policy_names_but_the_task_did_not_measure_is_incomplete() -> None:
    assert codes(metrics(paired={}))["pinball_loss_unmeasured"] == Verdict.INCOMPLETE
    assert evaluate(metrics(paired={}), POLICY).verdict == Verdict.INCOMPLETE


def test_a_policy_without_the_tasks_section_leaves_it_incomplete_and_says_which_section() -> None:
    decision = evaluate(metrics(), load_policy().policy)
    assert decision.verdict == Verdict.INCOMPLETE
    reason = next(r for r in decision.reasons if r.code == "quantile_not_judged")
    assert "tasks: {quantile: ...}" in reason.message


def test_too_few_rows_are_incomplete() -> None:
    assert evaluate(metrics(n=50), POLICY).verdict == Verdict.INCOMPLETE


def test_a_built_in_task_cannot_carry_the_general_section() -> None:
    with pytest.raises(ValidationError, match="their own section"):
        metrics(task="regression")


def test_the_tasks_section_is_read_from_a_policy_file(tmp_path: Any) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(
        DEFAULT_POLICY_PATH.read_text()
        + "tasks:\n  quantile:\n    min_rows: 100\n    share: {warning: 0.05, block: 0.1}\n"
    )
    policy = load_policy(path).policy
    assert policy.share_band("quantile") == (0.05, 0.1) and policy.judges("quantile")
    assert not load_policy().policy.judges("quantile")
    path.write_text(
        DEFAULT_POLICY_PATH.read_text()
        + "tasks:\n  quantile:\n    min_rows: 100\n    share: {warning: 0.05, block: 1.5}\n"
    )
    with pytest.raises(Exception, match="block"):
        load_policy(path)
