"""Regressors: relative MAE / RMSE increases judged only when significant (paired interval wholly above 0) and
large, the share of predictions that moved beyond a tolerance, and the PSI of the predictions."""

from __future__ import annotations

from policies.metrics import ModelMetrics, PairedChange, RegressionMetrics
from policies.rules_common import band_reason, missing_task_metrics, sample_reasons, significant_size_reason
from policies.sections import RegressionRules, SignificantIncreaseRule
from policies.text import share_range, share_setting
from policies.verdicts import Reason


def regression_sample_reasons(m: ModelMetrics, rules: RegressionRules) -> list[Reason]:
    return sample_reasons([("rows", m.n, rules.min_rows)])


def _increase_reason(
    metric: str, label: str, change: PairedChange, confidence: float, rule: SignificantIncreaseRule
) -> Reason:
    before, after, delta, low, high = change.baseline, change.mutated, change.delta, change.ci_low, change.ci_high
    relative = change.relative  # delta / baseline
    shown = "unbounded: the baseline error is 0" if relative is None else f"{relative:+.1%} of baseline"
    ci = f"{share_setting(confidence)} CI {low:+.4g} to {high:+.4g}"
    facts = f"{label} {before:.4g} -> {after:.4g} (change {delta:+.4g}, {ci}; {shown})"
    if relative is None and delta <= 0:
        relative = 0.0  # a perfect baseline that stays perfect: nothing increased
    return significant_size_reason(
        metric, facts, relative, significant=low > 0, rule=rule, what="relative increase",
        not_significant=f"no significant increase (the {share_setting(confidence)} CI reaches {low:+.4g})",
    )  # fmt: skip


def _moved_reason(m: ModelMetrics, r: RegressionMetrics, rules: RegressionRules) -> Reason:
    detail = (
        f" (|change| > {r.tolerance:.4g} = {r.tolerance_basis}; {share_setting(m.confidence)} CI "
        f"{share_range(r.moved_share_ci_low, r.moved_share_ci_high)}, {r.moved} of {m.n_scored})"
    )
    return band_reason("moved_share", "moved share", r.moved_share, rules.moved_share, percent=True, detail=detail)


def regression_reasons(m: ModelMetrics, rules: RegressionRules) -> list[Reason]:
    r = m.regression
    if r is None:
        return [missing_task_metrics("regression", m)]
    return [
        _increase_reason("mae_increase", "MAE", r.mae, m.confidence, rules.mae_increase_relative),
        _increase_reason("rmse_increase", "RMSE", r.rmse, m.confidence, rules.rmse_increase_relative),
        _moved_reason(m, r, rules),
        band_reason("prediction_psi", "prediction PSI", r.prediction_psi, rules.prediction_psi, percent=False),
    ]
