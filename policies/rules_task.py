"""A registered task's rules (a policy's `tasks:` section) over its general section (`TaskMetrics`): the headline
share judged by its band, and each named loss judged as a relative increase, only when significant (the paired
interval lies wholly above 0) and large — as a regressor's MAE is. A loss the policy names but the task did not
measure is INCOMPLETE: the rule was not checked."""

from __future__ import annotations

from policies.metrics import ModelMetrics, PairedChange, TaskMetrics
from policies.rules_common import band_reason, missing_task_metrics, sample_reasons, significant_size_reason
from policies.sections import SignificantIncreaseRule, TaskRules
from policies.text import share_range, share_setting
from policies.verdicts import Reason, Verdict


def task_sample_reasons(m: ModelMetrics, rules: TaskRules) -> list[Reason]:
    return sample_reasons([("rows", m.n, rules.min_rows)])


def _increase(name: str, change: PairedChange, confidence: float, rule: SignificantIncreaseRule) -> Reason:
    relative = change.relative
    shown = "unbounded: the baseline is 0" if relative is None else f"{relative:+.1%} of baseline"
    ci = f"{share_setting(confidence)} CI {change.ci_low:+.4g} to {change.ci_high:+.4g}"
    facts = f"{name} {change.baseline:.4g} -> {change.mutated:.4g} (change {change.delta:+.4g}, {ci}; {shown})"
    if relative is None and change.delta <= 0:
        relative = 0.0  # a baseline of 0 that stays 0: nothing increased
    return significant_size_reason(
        f"{name}_increase", facts, relative, significant=change.ci_low > 0, rule=rule, what="relative increase",
        not_significant=f"no significant increase (the {share_setting(confidence)} CI reaches {change.ci_low:+.4g})",
    )  # fmt: skip


def _unmeasured(task: str, name: str) -> Reason:
    return Reason(
        code=f"{name}_unmeasured",
        severity=Verdict.INCOMPLETE,
        metric=name,
        message=f"the policy judges {name}, which the {task} task did not measure; "
        f"measure it in the task's module or remove it from the policy's tasks.{task}.increases",
    )


def task_reasons(m: ModelMetrics, rules: TaskRules) -> list[Reason]:
    t: TaskMetrics | None = m.other
    if t is None:
        return [missing_task_metrics(m.task, m)]
    level = share_setting(m.confidence)
    detail = f" ({level} CI {share_range(t.share_ci_low, t.share_ci_high)}, {t.events} of {m.n_scored})"
    label = t.share_name.replace("_", " ")
    reasons = [band_reason(t.share_name, label, t.share, rules.share, percent=True, detail=detail)]
    for name, rule in rules.increases.items():
        change = t.paired.get(name)
        reasons.append(_unmeasured(m.task, name) if change is None else _increase(name, change, m.confidence, rule))
    return reasons
