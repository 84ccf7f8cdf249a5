"""Rows gone between a pull request's base and head, judged by the task's share band: just below, at and above."""

from __future__ import annotations

import pytest

from policies import Verdict, load_policy, rows_gone_reason

POLICY = load_policy().policy
V1 = load_policy(load_policy().path.with_name("default-v1.yaml")).policy


@pytest.mark.parametrize(
    ("gone", "task", "expected"),
    [
        (0, "binary", Verdict.PASS),
        (49, "binary", Verdict.PASS),
        (50, "binary", Verdict.WARNING),  # flip_rate.warning 0.05
        (100, "binary", Verdict.BLOCK),  # flip_rate.block 0.10
        (100, "regression", Verdict.BLOCK),  # the moved-share band
    ],
)
def test_the_share_gone_is_judged_by_the_tasks_band(gone: int, task: str, expected: Verdict) -> None:
    reason = rows_gone_reason(gone, 1000, task, POLICY)
    assert reason.severity == expected
    assert reason.value == pytest.approx(gone / 1000)


def test_a_policy_without_a_band_for_the_task_cannot_judge_it() -> None:
    reason = rows_gone_reason(10, 1000, "regression", V1)
    assert reason.severity == Verdict.INCOMPLETE and "no share band for regression" in reason.message


def test_nothing_gone_says_so() -> None:
    assert rows_gone_reason(0, 1000, "binary", POLICY).message == "no row the model scores today is gone (of 1000)"


def test_an_unlabelled_classifier_blocks_on_flips_and_is_incomplete_otherwise() -> None:
    from policies import BinaryMetrics, ModelMetrics, unlabelled_decision

    def measured(flip_rate: float) -> ModelMetrics:
        return ModelMetrics(
            n=1000, n_scored=1000, flips=int(flip_rate * 1000), flip_rate=flip_rate, flip_rate_ci_low=flip_rate,
            flip_rate_ci_high=flip_rate, prob_shift_mean=0.0, prob_shift_p95=0.0, prob_shift_max=0.0, psi=0.0,
            failures=0, failure_rate=0.0, threshold=0.5, confidence=0.95, methods={},
            binary=BinaryMetrics(positives=0, negatives=0, auc=None),
        )  # fmt: skip

    assert unlabelled_decision(measured(0.2), POLICY, "y").verdict == Verdict.BLOCK
    for rate in (0.0, 0.06):  # a warning or nothing: without labels the model's quality is unknown
        decision = unlabelled_decision(measured(rate), POLICY, "y")
        assert decision.verdict == Verdict.INCOMPLETE
        assert any(r.code == "label_metrics_not_measured" for r in decision.reasons)
