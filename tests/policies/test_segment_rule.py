"""The segment rule of default-v2: BH-adjusted p just below, at and above the FDR for each band; every task."""

from __future__ import annotations

import pytest

from policies import ModelMetrics, Policy, Verdict, evaluate, load_policy
from tests.policies.helpers import TINY, binary, finding, multiclass, regression, with_segments

POLICY = load_policy().policy
RULE = POLICY.segments
assert RULE is not None
FDR = RULE.fdr


def segment_reason(m: ModelMetrics, policy: Policy = POLICY) -> list[tuple[str, Verdict]]:
    return [(r.code, r.severity) for r in evaluate(m, policy).reasons if r.code.startswith("segment")]


def test_default_v2_segment_values_are_the_documented_ones() -> None:
    assert RULE is not None
    assert (RULE.min_share, RULE.fdr, RULE.numeric_bins, RULE.max_columns, RULE.max_categories) == (
        0.05,
        0.05,
        4,
        20,
        50,
    )
    assert POLICY.segment_bands("binary") == (0.05, 0.10) == POLICY.segment_bands("multiclass")


@pytest.mark.parametrize(
    ("p_adjusted", "p_adjusted_block", "expected"),
    [
        (FDR - TINY, 1.0, Verdict.WARNING), (FDR, 1.0, Verdict.PASS), (FDR + TINY, 1.0, Verdict.PASS),
        (1e-9, FDR - TINY, Verdict.BLOCK), (1e-9, FDR, Verdict.WARNING), (1e-9, FDR + TINY, Verdict.WARNING),
    ],
)  # fmt: skip
@pytest.mark.parametrize("build", [binary, multiclass])
def test_bh_adjusted_p_against_the_fdr(
    build: object, p_adjusted: float, p_adjusted_block: float, expected: Verdict
) -> None:
    f = finding(value=0.3, events=60, ci_low=0.24, ci_high=0.37, p_value=p_adjusted / 10, p_adjusted=p_adjusted,
                p_value_block=p_adjusted_block / 10, p_adjusted_block=p_adjusted_block)  # fmt: skip
    m = with_segments(build(), [f])  # type: ignore[operator]
    assert segment_reason(m) == [(f"segment_{expected.lower()}", expected)]
    assert evaluate(m, POLICY).verdict is expected  # every other rule passes: the segment alone raises the verdict


def test_segment_reason_names_column_segment_value_interval_and_both_p_values() -> None:
    f = finding(segment="region=north", value=0.3, events=60, n=200, share=0.2, ci_low=0.244, ci_high=0.366,
                overall_value=0.031, p_value=1.2e-30, p_adjusted=4.8e-30, p_value_block=2.0e-14,
                p_adjusted_block=8.0e-14)  # fmt: skip
    reason = next(
        r for r in evaluate(with_segments(binary(), [f, finding()]), POLICY).reasons if r.code == "segment_block"
    )
    assert reason.message == (
        "segment region=north: flip rate 30.0% (95% CI 24.4% to 36.6%, 60 of 200 scored rows, 20.0% of them; "
        "overall 3.1%) is credibly above the 10% block band: one-sided binomial p = 2e-14, BH-adjusted p = 8e-14 "
        "< FDR 0.05 across 2 segments"
    )
    assert (reason.metric, reason.value, reason.threshold) == ("segment_flip_rate", 0.3, 0.10)


def test_regressor_segments_use_the_moved_share() -> None:
    f = finding(metric="moved_share", segment="amount in [10, 50)", value=0.4, events=80, p_adjusted=1e-6,
                p_adjusted_block=1e-3)  # fmt: skip
    reason = next(r for r in evaluate(with_segments(regression(), [f]), POLICY).reasons if r.code == "segment_block")
    assert reason.metric == "segment_moved_share" and "moved share 40.0%" in reason.message


def test_the_most_severe_segment_is_reported() -> None:
    mild = finding(segment="region=south", value=0.5, p_adjusted=0.5, p_adjusted_block=0.9)  # high but not credible
    credible = finding(segment="region=north", value=0.08, events=16, p_adjusted=0.01, p_adjusted_block=0.9)
    m = with_segments(binary(), [mild, credible])
    decision = evaluate(m, POLICY)
    assert decision.verdict is Verdict.WARNING
    assert "region=north" in next(r.message for r in decision.reasons if r.code == "segment_warning")


def test_nothing_credible_passes_naming_the_worst_segment() -> None:
    m = with_segments(binary(), [finding(value=0.07, events=14, p_adjusted=0.3), finding(segment="region=east")])
    reason = next(r for r in evaluate(m, POLICY).reasons if r.code == "segment_pass")
    assert "not credibly above the 5% warning band" in reason.message and ">= FDR 0.05" in reason.message


def test_no_segment_tested_passes() -> None:
    reason = next(r for r in evaluate(with_segments(binary(), []), POLICY).reasons if r.code.startswith("segment"))
    assert reason.severity is Verdict.PASS and "no segment" in reason.message


def test_findings_computed_against_other_bands_are_not_judged() -> None:
    m = with_segments(binary(), [finding(p_adjusted=1e-9, p_adjusted_block=1e-9)], bands=(0.02, 0.04))
    assert segment_reason(m) == [("segment_bands_mismatch", Verdict.INCOMPLETE)]


def test_v1_does_not_judge_segments(v1: Policy) -> None:
    m = with_segments(binary(), [finding(p_adjusted=1e-9, p_adjusted_block=1e-9)])
    assert segment_reason(m, v1) == [] and evaluate(m, v1).verdict is Verdict.PASS


def test_segments_are_not_judged_on_too_small_a_sample() -> None:
    m = with_segments(binary(n=100), [finding(p_adjusted=1e-9, p_adjusted_block=1e-9)])
    assert segment_reason(m) == [] and evaluate(m, POLICY).verdict is Verdict.INCOMPLETE
