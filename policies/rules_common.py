"""Rule helpers shared by every task: threshold bands, "significant and large" changes, inference failures and
minimum sample sizes. Each returns one ``Reason`` (PASS included) naming the metric, the value and the threshold."""

from __future__ import annotations

from policies.metrics import ModelMetrics
from policies.sections import Band, FailureRule
from policies.text import pct, share_range, share_setting
from policies.verdicts import Reason, Verdict


def band_reason(metric: str, label: str, value: float, band: Band, *, percent: bool, detail: str = "") -> Reason:
    if value >= band.block:
        level, threshold, cmp = Verdict.BLOCK, band.block, ">="
    elif value >= band.warning:
        level, threshold, cmp = Verdict.WARNING, band.warning, ">="
    else:
        level, threshold, cmp = Verdict.PASS, band.warning, "<"
    shown, limit = (pct(value, 1), share_setting(threshold)) if percent else (f"{value:.3f}", f"{threshold:g}")
    name = "warning" if level is not Verdict.BLOCK else "block"
    message = f"{label} {shown}{detail} {cmp} {limit} {name} threshold"
    return Reason(
        code=f"{metric}_{level.lower()}",
        severity=level,
        message=message,
        metric=metric,
        value=value,
        threshold=threshold,
    )


def significant_size_reason(
    metric: str, facts: str, size: float | None, *, significant: bool, rule: Band, what: str, not_significant: str
) -> Reason:
    """WARNING/BLOCK only when the change is significant AND its size reaches the band (docs/design.md §6: on large
    evaluation sets tiny changes are "significant", so significance alone must never fire).

    ``size`` is the practical size compared with the band (a drop, or a relative increase); None means unbounded
    (a relative increase over a baseline error of 0), which reaches every band. ``what`` names it in the message.
    """
    reaches_block = size is None or size >= rule.block
    reaches_warning = size is None or size >= rule.warning
    if significant and reaches_block:
        level, threshold, why = Verdict.BLOCK, rule.block, f"significant, {what} >= {rule.block:g} block"
    elif significant and reaches_warning:
        level, threshold, why = Verdict.WARNING, rule.warning, f"significant, {what} >= {rule.warning:g} warning"
    elif not significant:
        level, threshold, why = Verdict.PASS, rule.warning, not_significant
    else:
        level, threshold, why = Verdict.PASS, rule.warning, f"a {what} below the {rule.warning:g} practical minimum"
    return Reason(
        code=f"{metric}_{level.lower()}",
        severity=level,
        message=f"{facts}: {why}",
        metric=metric,
        value=size,
        threshold=threshold,
    )


def failure_reason(m: ModelMetrics, rule: FailureRule) -> Reason:
    counted = f"{m.failures} of {m.n} rows ({share_setting(m.failure_rate)}) failed inference"
    if m.failure_rate >= rule.block_rate:
        level, threshold, text = Verdict.BLOCK, rule.block_rate, f">= {share_setting(rule.block_rate)} block threshold"
    elif m.failures >= rule.warning_count:
        level, threshold, text = Verdict.WARNING, float(rule.warning_count), f"(warning from {rule.warning_count})"
    else:
        level, threshold, text = Verdict.PASS, float(rule.warning_count), f"(warning from {rule.warning_count})"
    return Reason(
        code=f"inference_failures_{level.lower()}",
        severity=level,
        message=f"{counted} {text}",
        metric="failure_rate",
        value=m.failure_rate,
        threshold=threshold,
    )


def sample_reasons(checks: list[tuple[str, int, int]]) -> list[Reason]:
    """INCOMPLETE for every (what, have, need) with have < need: on too few rows the statistics are noise."""
    return [
        Reason(
            code=f"min_{what}_incomplete",
            severity=Verdict.INCOMPLETE,
            metric=what,
            value=float(have),
            threshold=float(need),
            message=f"only {have} evaluation {what}; the policy needs at least {need} to judge this model",
        )
        for what, have, need in checks
        if have < need
    ]


def flip_detail(m: ModelMetrics) -> str:
    level = share_setting(m.confidence)
    return f" ({level} CI {share_range(m.flip_rate_ci_low, m.flip_rate_ci_high)}, {m.flips} of {m.n_scored})"


def missing_task_metrics(task: str, m: ModelMetrics) -> Reason:
    return Reason(
        code=f"{task}_metrics_unavailable",
        severity=Verdict.INCOMPLETE,
        metric=task,
        message=f"the {task} metrics could not be computed on the {m.n_scored} successfully scored rows "
        "(a paired interval needs at least 2)",
    )
