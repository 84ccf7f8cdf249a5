"""One dose of a tolerance scan: the change carried to the model's columns (carry.py, as `assess` carries it), one
mutated inference on the prepared rows against the cached baseline, and the policy's verdict."""

from __future__ import annotations

from dataclasses import replace

from policies import Decision, LoadedPolicy, Verdict, evaluate
from tools.experiment.carry import carry
from tools.experiment.measure import measure_prepared
from tools.experiment.prepare import PreparedModel
from tools.experiment.runner import BaselineCache
from tools.mutations import Mutation, PlanError, check_compatible
from tools.tolerance.bisection import DosePoint


def measure_dose(
    prepared: PreparedModel, mutation: Mutation, dose: float, loaded: LoadedPolicy, cache: BaselineCache
) -> DosePoint:
    """One dose: the change carried to the model's columns, one mutated inference, the policy's verdict."""
    links = [
        f
        for f in prepared.model.features
        if f.link == "feature" or (f.link == "training_run" and f.column in prepared.input_columns)
    ]
    carried = carry(mutation, links)
    if carried.refusal is not None:
        return DosePoint(dose=dose, verdict=Verdict.INCOMPLETE, reasons=["non_identity_transform"])
    if not carried.mutations:
        return DosePoint(dose=dose, verdict=Verdict.PASS, reasons=["change_not_carried"])
    try:
        for column, derived in carried.mutations.items():
            check_compatible(derived, prepared.frame[column])
    except PlanError:
        return DosePoint(dose=dose, verdict=Verdict.INCOMPLETE, reasons=["derived_change_unfit"])
    dosed = replace(prepared, mutations=carried.mutations, feature_columns=sorted(carried.mutations))
    evidence = measure_prepared(dosed, mutation, cache, loaded.policy).evidence
    if evidence.metrics is None:
        return DosePoint(dose=dose, verdict=Verdict.INCOMPLETE, reasons=[r.code for r in evidence.reasons])
    decision: Decision = evaluate(evidence.metrics, loaded.policy)
    m = evidence.metrics
    share: float | None
    low: float | None
    high: float | None
    if m.regression is not None:
        share, low, high = m.regression.moved_share, m.regression.moved_share_ci_low, m.regression.moved_share_ci_high
    else:
        share, low, high = m.flip_rate, m.flip_rate_ci_low, m.flip_rate_ci_high
    top = [r.code for r in decision.reasons if r.severity == decision.verdict and decision.verdict != Verdict.PASS]
    return DosePoint(dose=dose, verdict=decision.verdict, share=share, share_low=low, share_high=high, reasons=top)
