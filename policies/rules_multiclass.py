"""Multiclass classifiers: argmax flip rate, per-class probability PSI, and accuracy / macro-F1 drops judged only
when significant (paired interval wholly below 0) and large."""

from __future__ import annotations

from policies.metrics import ModelMetrics, MulticlassMetrics, PairedChange
from policies.rules_common import (
    band_reason,
    flip_detail,
    missing_task_metrics,
    sample_reasons,
    significant_size_reason,
)
from policies.sections import MulticlassRules, SignificantDropRule
from policies.text import share_setting
from policies.verdicts import Reason


def multiclass_sample_reasons(m: ModelMetrics, rules: MulticlassRules) -> list[Reason]:
    return sample_reasons([("rows", m.n, rules.min_rows)])


def _drop_reason(
    metric: str,
    label: str,
    change: PairedChange,
    confidence: float,
    rule: SignificantDropRule,
) -> Reason:
    before, after, delta, low, high = change.baseline, change.mutated, change.delta, change.ci_low, change.ci_high
    level = share_setting(confidence)
    facts = f"{label} {before:.4f} -> {after:.4f} (change {delta:+.4f}, {level} CI {low:+.4f} to {high:+.4f})"
    return significant_size_reason(
        metric, facts, -delta, significant=high < 0, rule=rule, what="drop",
        not_significant=f"no significant drop (the {share_setting(confidence)} CI reaches {high:+.4f})",
    )  # fmt: skip


def _class_psi_reason(mc: MulticlassMetrics, rules: MulticlassRules) -> Reason | None:
    if not mc.per_class_psi:
        return None
    worst = max(mc.per_class_psi, key=lambda c: mc.per_class_psi[c])
    label = f"class probability PSI (max over {len(mc.per_class_psi)} classes, class {worst})"
    return band_reason("class_psi", label, mc.per_class_psi[worst], rules.class_psi, percent=False)


def multiclass_reasons(m: ModelMetrics, rules: MulticlassRules) -> list[Reason]:
    mc = m.multiclass
    if mc is None:
        return [missing_task_metrics("multiclass", m)]
    reasons = []
    if m.flip_rate is not None:
        detail = flip_detail(m)
        reasons.append(
            band_reason("flip_rate", "argmax flip rate", m.flip_rate, rules.flip_rate, percent=True, detail=detail)
        )
    psi = _class_psi_reason(mc, rules)
    if psi is not None:
        reasons.append(psi)
    reasons.append(_drop_reason("accuracy_drop", "accuracy", mc.accuracy, m.confidence, rules.accuracy_drop))
    reasons.append(_drop_reason("macro_f1_drop", "macro-F1", mc.macro_f1, m.confidence, rules.macro_f1_drop))
    return reasons
