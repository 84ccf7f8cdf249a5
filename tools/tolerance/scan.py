"""Scanning the production models downstream of one column: for each model and each dose axis that fits the column,
the doses at which the policy says WARNING and BLOCK (bisection.py), measured by the experiment engine as `assess`
measures one change.

Each model is prepared once (binding verified, evaluation data read and sampled as `assess` samples it); every dose
then reuses that frame and the cached baseline, so a dose costs one mutated inference and its metrics. The change
is carried along the model's lineage path (carry.py) at every dose, as `assess` carries it.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from policies import Decision, LoadedPolicy, Reason, Verdict, evaluate
from tools.catalog.conventions import load_conventions
from tools.catalog.discovery import Discovery
from tools.evidence.build import environment, policy_record
from tools.evidence.schema import new_run_id
from tools.experiment.carry import carry
from tools.experiment.measure import measure_prepared, not_tested
from tools.experiment.prepare import CATALOG_KINDS, PreparedModel, prepare_model
from tools.experiment.runner import BaselineCache
from tools.mutations import Mutation, PlanError, check_compatible, column_kind, parse_mutation
from tools.tolerance.bisection import DosePoint, search
from tools.tolerance.doses import DoseAxis, axes_for
from tools.tolerance.schema import AxisResult, ModelScan, ScanResult

PROBE = parse_mutation("null_inject", {})  # fits every column: what preparing a model needs to know of the change


def scan(discovery: Discovery, base_dir: Path, loaded: LoadedPolicy, axes: list[str] | None = None) -> ScanResult:
    """The tolerance map of every production model `discovery` reached; `axes` limits the dose axes by name."""
    started = time.perf_counter()
    cache = BaselineCache()
    counter = [0]
    models = [
        _scan_model(prepared, discovery, loaded, cache, axes, counter)
        if isinstance(prepared := prepare_model(model, PROBE, base_dir), PreparedModel)
        else ModelScan(urn=model.urn, name=model.name, not_scanned=_why(prepared.reasons))
        for model in discovery.production_models
    ]
    return ScanResult(
        scan_id=f"scan-{new_run_id()}",
        dataset_urn=discovery.dataset.urn,
        field=discovery.field,
        field_type=discovery.field_type,
        models=models,
        not_tested=not_tested(discovery),
        coverage=discovery.coverage,
        policy=policy_record(loaded),
        conventions_sha256=load_conventions().sha256,
        experiments=counter[0],
        seconds=round(time.perf_counter() - started, 2),
        environment=environment(),
    )


def _scan_model(
    prepared: PreparedModel,
    discovery: Discovery,
    loaded: LoadedPolicy,
    cache: BaselineCache,
    names: list[str] | None,
    counter: list[int],
) -> ModelScan:
    column = prepared.feature_columns[0]
    values = prepared.frame[column]
    kind = CATALOG_KINDS.get(discovery.field_type.upper()) or column_kind(values)
    chosen = [a for a in axes_for(kind, values) if names is None or a.name in names]
    results = []
    for axis in chosen:

        def judge(dose: float, axis: DoseAxis = axis) -> DosePoint:
            counter[0] += 1
            return measure_dose(prepared, axis.mutation(dose), dose, loaded, cache)

        found = search(axis.grid, judge)
        labels = {p.dose: axis.label(p.dose) for p in found.points} | {d: axis.label(d) for d in axis.grid}
        results.append(AxisResult(axis=axis.name, op=axis.op, unit=axis.unit, search=found, labels=labels))
    return ModelScan(
        urn=prepared.model.urn,
        name=prepared.model.name,
        task=prepared.task.task,
        column=column,
        artifact_sha256=prepared.binding.artifact_sha256,
        eval_data_sha256=prepared.eval_sha256,
        rows=len(prepared.frame),
        axes=results,
    )


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


def _why(reasons: list[Reason]) -> str:
    return "; ".join(r.message for r in reasons) or "the model could not be prepared"
