"""Measuring every affected production model against one mutation, and the overall verdict.

Two phases per model: `prepare.py`'s `prepare_model` (binding, verified artifact, evaluation data, column checks)
and `measure_prepared` here (inference, metrics; the policy judges afterwards, once, in the graph's `judge`
node). Problems with a model's binding make that model INCOMPLETE; a plan that does not fit the data (e.g. a
category mapping on a numeric column) raises PlanError so the caller can refuse it before anything runs or is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from policies import Decision, ModelMetrics, Policy, Reason, Verdict, load_policy, overall_verdict
from tools.catalog.discovery import Discovery
from tools.evidence.schema import (
    ExperimentRecord,
    ModelEvidence,
    ModelTest,
    NotTested,
    SamplingRecord,
    ScoreArrays,
)
from tools.experiment.model_evidence import binding_record, incomplete_evidence
from tools.experiment.prepare import PreparedModel
from tools.experiment.runner import BaselineCache, BaselineFailure, ExperimentOutcome, run_experiment
from tools.mutations import Mutation, MutationTypeError, PlanError
from tools.runtime.overlap import alongside

if TYPE_CHECKING:
    import pandas as pd

    from tools.experiment.segments import SegmentGroups

DEFAULT_TOLERANCE_FRACTION = 0.1  # a policy without regression rules (v1) still gets a regressor's numbers measured


def measure_prepared(
    prepared: PreparedModel, mutation: Mutation, cache: BaselineCache, policy: Policy | None = None
) -> ModelTest:
    """Inference and metrics. The verdict is left to the policy, applied once, in the graph's `judge` node: until
    then a measured model reads INCOMPLETE with no reasons. `policy` (default: the packaged default policy) only
    says how to measure: the regression tolerance and the segment analysis (its rule and bands)."""
    model, binding, task = prepared.model, prepared.binding, prepared.task
    path = prepared.path
    record = binding_record(binding, prepared.eval_sha256)
    column = prepared.feature_columns[0]
    frame = prepared.frame
    # A task other than binary changes what the cached arrays hold, so it is part of the key (binary keys are
    # unchanged, and the same artifact always decides the same task unless a binding key overrides it).
    data_key = prepared.data_key if task.task == "binary" else f"{prepared.data_key}:{task.task}"
    measuring = policy or load_policy().policy
    mutations = {c: prepared.mutations.get(c, mutation) for c in prepared.feature_columns}  # carried through SQL
    mutation = mutations[column]
    try:
        outcome, groups = alongside(
            lambda: run_experiment(
                pipeline=prepared.pipeline,
                frame=frame,
                columns=prepared.input_columns,
                label_column=binding.label_column,
                feature_column=column,
                mutation=mutation,
                cache=cache,
                cache_key=(binding.artifact_sha256, data_key),
                task=task,
                # same seed: the same rows change in every column the change reaches
                other_mutations={c: mutations[c] for c in prepared.feature_columns[1:]},
            ),
            lambda: _segment_groups(prepared, measuring),
        )
    except BaselineFailure as exc:
        return ModelTest(
            incomplete_evidence(
                model,
                "baseline_failure",
                str(exc),
                lineage_path=path,
                binding=record,
                task=task.task,
                task_basis=task.basis,
            )
        )
    metrics = _metrics(prepared, outcome, measuring, groups)
    experiment = ExperimentRecord(
        rows=len(frame),
        rows_changed=outcome.rows_changed,
        feature_column=column,
        mutation="; ".join(mutations[c].describe(c) for c in prepared.feature_columns),
        derivation=prepared.derivations,
        baseline_cached=outcome.baseline_cached,
        predict_calls=outcome.mutated.predict_calls,
        value_class_rows=outcome.mutated.value_class_rows,
        unisolated_rows=outcome.mutated.unisolated_rows,
        error_samples=outcome.mutated.error_samples,
        seconds=outcome.seconds,
        sampling=_achieved(prepared.sampling, *metrics.headline()[1:]),
    )
    evidence = ModelEvidence(
        urn=model.urn,
        name=model.name,
        verdict=Verdict.INCOMPLETE,
        reasons=[],
        feature_column=column,
        lineage_path=path,
        binding=record,
        task=task.task,
        task_basis=task.basis,
        metrics=metrics,
        experiment=experiment,
        owners=model.owners,
        production_marker=model.production_evidence,
    )
    arrays = ScoreArrays(
        task=task.task,
        y=outcome.y_true,
        baseline=outcome.baseline,
        mutated=outcome.mutated.scores,
        failed=outcome.mutated.failed,
        classes=task.class_list,
        tolerance=metrics.regression.tolerance if metrics.regression is not None else None,
    )
    return ModelTest(evidence, arrays)


def _segments_frame(prepared: PreparedModel, policy: Policy) -> pd.DataFrame | None:
    """Segments split the evaluation rows as they were before the mutation, by the columns
    `PreparedModel.segment_columns` names; a policy without a segment rule gets none."""
    return prepared.frame[prepared.segment_columns] if policy.segment_bands(prepared.task.task) is not None else None


def _segment_groups(prepared: PreparedModel, policy: Policy) -> SegmentGroups | None:
    """The evaluation rows' segments, grouped while the model scores (they depend on the data alone)."""
    from tools.experiment.task_metrics import prepare_metric_inputs  # scipy and the task modules: when measuring

    return prepare_metric_inputs(None, _segments_frame(prepared, policy), policy.segments).groups


def _metrics(
    prepared: PreparedModel, outcome: ExperimentOutcome, policy: Policy, groups: SegmentGroups | None
) -> ModelMetrics:
    """The task's metrics on the experiment's arrays, with the label codes and segment groups made meanwhile."""
    from tools.experiment.task_metrics import MetricInputs, compute_task_metrics

    task = prepared.task
    return compute_task_metrics(
        task.task,
        outcome.y_true,
        outcome.baseline,
        outcome.mutated.scores,
        outcome.mutated.failed,
        threshold=prepared.binding.decision_threshold,
        classes=task.class_list,
        segments_frame=groups.frame if groups is not None else None,
        segment_bands=policy.segment_bands(task.task),
        tolerance_fraction=policy.regression_tolerance_fraction() or DEFAULT_TOLERANCE_FRACTION,
        segment_rule=policy.segments,
        prepared=MetricInputs(labels=outcome.label_codes, groups=groups),
    )


def _achieved(sampling: SamplingRecord | None, low: float | None, high: float | None) -> SamplingRecord | None:
    if sampling is None or low is None or high is None:
        return sampling
    return sampling.model_copy(update={"achieved_flip_half_width": (high - low) / 2})


def not_tested(discovery: Discovery) -> list[NotTested]:
    return [
        NotTested(urn=m.urn, name=m.name, reason=f"not in production ({m.production_evidence})")
        for m in discovery.other_models
    ]


def every_production_model(discovery: Discovery, models: list[ModelEvidence]) -> list[ModelEvidence]:
    """`models` plus an INCOMPLETE record for each production model discovery reached that has none: a production
    model reached is tested or INCOMPLETE with its reason, never absent from the answer."""
    answered = {m.urn for m in models}
    missing = [
        incomplete_evidence(
            m,
            "not_measured",
            "reached in production through lineage, but no experiment result was recorded for it; "
            "this is a defect of Provenance: report it with this run's evidence",
            lineage_path=m.features[0].path if m.features else [],
        )
        for m in discovery.production_models
        if m.urn not in answered
    ]
    return [*models, *missing]


def overall(discovery: Discovery, models: list[ModelEvidence]) -> tuple[Verdict, list[str]]:
    coverage = discovery.coverage
    if not models and not coverage.complete:
        return Verdict.INCOMPLETE, [
            "no production model was found, but the lineage could not be read completely: "
            + "; ".join(coverage.unreadable)
        ]
    if not models:
        searched = ", ".join(discovery.datasets_searched)
        reached = len(coverage.models_reached)
        tail = f"; {reached} model(s) reached, none in production" if reached else ""
        return Verdict.PASS, [
            f"no production model depends on this field (the whole lineage graph was read: {searched}{tail})"
        ]
    verdict = overall_verdict([m.verdict for m in models])
    reasons = [
        f"{m.name}: {m.verdict}" + (f" — {_headline(m.reasons)}" if m.verdict != Verdict.PASS else "") for m in models
    ]
    if not coverage.complete:
        verdict = overall_verdict([verdict, Verdict.INCOMPLETE])
        reasons.append("lineage could not be read completely: " + "; ".join(coverage.unreadable))
    return verdict, reasons


def _headline(reasons: list[Reason]) -> str:
    worst = Decision.from_reasons(reasons).verdict
    return "; ".join(r.message for r in reasons if r.severity == worst)


__all__ = ["ModelTest", "MutationTypeError", "PlanError", "measure_prepared"]
