"""Binary classifiers: v1's rules, unchanged in v2 (flip rate, score PSI, paired-DeLong AUC drop)."""

from __future__ import annotations

from policies.metrics import BinaryMetrics, ModelMetrics, PairedChange
from policies.policy import Policy
from policies.rules_common import band_reason, flip_detail, sample_reasons, significant_size_reason
from policies.sections import AucDropRule
from policies.text import share_setting
from policies.verdicts import Reason, Verdict


def binary_sample_reasons(m: ModelMetrics, b: BinaryMetrics, p: Policy) -> list[Reason]:
    return sample_reasons(
        [
            ("rows", m.n, p.min_rows),
            ("positives", b.positives, p.min_positives),
            ("negatives", b.negatives, p.min_negatives),
        ]
    )


def _auc_reason(m: ModelMetrics, auc: PairedChange | None, rule: AucDropRule) -> Reason:
    if auc is None or auc.p_value is None:
        return Reason(
            code="auc_unavailable",
            severity=Verdict.INCOMPLETE,
            metric="auc_drop",
            message=f"ROC AUC could not be computed on the {m.n_scored} successfully scored rows "
            "(needs at least 2 positives and 2 negatives among them)",
        )
    drop, p = -auc.delta, auc.p_value  # the thresholds are on the drop (baseline - mutated)
    # The message speaks of one quantity only, the change (mutated - baseline), so the delta and both CI bounds
    # carry the same sign convention: a drop reads "change -0.1727, 95% CI -0.1854 to -0.1601".
    ci = f"{share_setting(m.confidence)} CI {auc.ci_low:+.4f} to {auc.ci_high:+.4f}"
    change = f"change {auc.delta:+.4f}, {ci}, DeLong p = {p:.3g}"
    facts = f"AUC {auc.baseline:.4f} -> {auc.mutated:.4f} ({change})"
    return significant_size_reason(
        "auc_drop", facts, drop, significant=p < rule.alpha, rule=rule, what="drop",
        not_significant=f"not significant (p >= alpha {rule.alpha:g})",
    )  # fmt: skip


def binary_reasons(m: ModelMetrics, b: BinaryMetrics, p: Policy) -> list[Reason]:
    reasons = []
    if m.flip_rate is not None:
        reasons.append(
            band_reason("flip_rate", "flip rate", m.flip_rate, p.flip_rate, percent=True, detail=flip_detail(m))
        )
    if m.psi is not None:
        reasons.append(band_reason("score_psi", "score PSI", m.psi, p.score_psi, percent=False))
    reasons.append(_auc_reason(m, b.auc, p.auc_drop))
    return reasons
