"""One dose of a tolerance scan: the change carried to the model's columns (carry.py, as `assess` carries it), one
mutated inference on the prepared rows against the cached baseline, and the policy's verdict."""

from __future__ import annotations

from dataclasses import replace

from policies import Decision, LoadedPolicy, Verdict, evaluate
from tools.experiment.carry import carry, reaching_links, unfit_column
from tools.experiment.measure import measure_prepared
from tools.experiment.prepare import PreparedModel
from tools.experiment.runner import BaselineCache
from tools.mutations import Mutation
from tools.tolerance.bisection import DosePoint


def measure_dose(
    prepared: PreparedModel, mutation: Mutation, dose: float, loaded: LoadedPolicy, cache: BaselineCache
) -> DosePoint:
    """One dose: the change carried to the model's columns, one mutated inference, the policy's verdict."""
    carried = carry(mutation, reaching_links(prepared.model.features, prepared.input_columns))
    if carried.refusal is not None:
        return DosePoint(dose=dose, verdict=Verdict.INCOMPLETE, reasons=["non_identity_transform"])
    if not carried.mutations:
        return DosePoint(dose=dose, verdict=Verdict.PASS, reasons=["change_not_carried"])
    if unfit_column(carried.mutations, prepared.frame) is not None:
        return DosePoint(dose=dose, verdict=Verdict.INCOMPLETE, reasons=["derived_change_unfit"])
    dosed = replace(prepared, mutations=carried.mutations, feature_columns=sorted(carried.mutations))
    evidence = measure_prepared(dosed, mutation, cache, loaded.policy).evidence
    if evidence.metrics is None:
        return DosePoint(dose=dose, verdict=Verdict.INCOMPLETE, reasons=[r.code for r in evidence.reasons])
    decision: Decision = evaluate(evidence.metrics, loaded.policy)
    share, low, high = evidence.metrics.headline()
    top = [r.code for r in decision.reasons if r.severity == decision.verdict and decision.verdict != Verdict.PASS]
    return DosePoint(dose=dose, verdict=decision.verdict, share=share, share_low=low, share_high=high, reasons=top)
