"""A classifier measured without labels (`provenance diff` on a relation that does not hold the bound label column):
its decisions are compared, its quality cannot be. The flip rate and the score PSI are judged by the task's bands as
always; the label metrics (AUC, accuracy, macro-F1) were not measured, which is INCOMPLETE — so a flip rate past the
block band still BLOCKs (BLOCK outranks INCOMPLETE), but nothing passes on its decisions alone."""

from __future__ import annotations

from policies.metrics import ModelMetrics
from policies.policy import Policy
from policies.rules_common import band_reason, failure_reason, flip_detail, sample_reasons
from policies.sections import Band
from policies.verdicts import Decision, Reason, Verdict


def _psi_band(task: str, policy: Policy) -> Band | None:
    if task == "binary":
        return policy.score_psi
    if task == "multiclass" and policy.multiclass is not None:
        return policy.multiclass.class_psi
    return None


def unlabelled_decision(m: ModelMetrics, policy: Policy, label: str) -> Decision:
    """The verdict on a classifier's flips and score shift, with the label metrics said to be missing."""
    reasons = [failure_reason(m, policy.inference_failures)]
    missing = Reason(
        code="label_metrics_not_measured",
        severity=Verdict.INCOMPLETE,
        metric="labels",
        message=f"the relation has no label column {label!r}: flips and score shift were measured, the model's "
        "quality (AUC, accuracy) was not; add the label to the relation to judge it",
    )
    band = policy.share_band(m.task)
    if band is None or m.flip_rate is None:
        return Decision.from_reasons([*reasons, missing])
    too_small = sample_reasons([("rows", m.n, policy.min_rows)])
    if too_small:
        return Decision.from_reasons([*reasons, *too_small, missing])
    share = Band(warning=band[0], block=band[1])
    reasons.append(band_reason("flip_rate", "flip rate", m.flip_rate, share, percent=True, detail=flip_detail(m)))
    psi = _psi_band(m.task, policy)
    if psi is not None and m.psi is not None:
        reasons.append(band_reason("score_psi", "score PSI", m.psi, psi, percent=False))
    return Decision.from_reasons([*reasons, missing])
