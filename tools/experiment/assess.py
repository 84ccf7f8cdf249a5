"""Testing every affected production model against one mutation, and the overall verdict.

Two phases per model: `prepare.py`'s `prepare_model` (binding, verified artifact, evaluation data, column checks)
and `run_model` here (inference, metrics; the policy judges afterwards, once, in the graph's `judge` node). Problems
with a model's binding make that model INCOMPLETE; a plan that does not fit the data (e.g. a category mapping on a
numeric column) raises PlanError so the caller can refuse it before anything runs or is written.
"""

from __future__ import annotations

from policies.engine import Decision, Reason, Verdict, overall_verdict
from tools.catalog.discovery import Discovery
from tools.evidence.schema import ExperimentRecord, ModelEvidence, ModelTest, NotTested, SamplingRecord
from tools.experiment.metrics import compute_metrics
from tools.experiment.model_evidence import binding_record, incomplete_evidence
from tools.experiment.prepare import PreparedModel
from tools.experiment.runner import BaselineCache, BaselineFailure, run_experiment
from tools.mutations import Mutation, MutationTypeError, PlanError, apply_mutation


def run_model(prepared: PreparedModel, mutation: Mutation, cache: BaselineCache) -> ModelTest:
    """Inference and metrics. The verdict is left to the policy, applied once, in the graph's `judge` node: until
    then a measured model reads INCOMPLETE with no reasons."""
    model, binding = prepared.model, prepared.binding
    path = prepared.path
    record = binding_record(binding, prepared.eval_sha256)
    column = prepared.feature_columns[0]
    frame = prepared.frame
    try:
        for extra_column in prepared.feature_columns[1:]:  # same seed: the same rows change in every copy
            frame = frame.assign(**{extra_column: apply_mutation(frame[extra_column], mutation)})
        outcome = run_experiment(
            pipeline=prepared.pipeline,
            frame=frame,
            columns=prepared.input_columns,
            label_column=binding.label_column,
            feature_column=column,
            mutation=mutation,
            cache=cache,
            cache_key=(binding.artifact_sha256, prepared.data_key),
        )
    except BaselineFailure as exc:
        return ModelTest(incomplete_evidence(model, "baseline_failure", str(exc), lineage_path=path, binding=record))
    metrics = compute_metrics(
        outcome.y_true,
        outcome.baseline,
        outcome.mutated.scores,
        outcome.mutated.failed,
        threshold=binding.decision_threshold,
    )
    experiment = ExperimentRecord(
        rows=len(frame),
        rows_changed=outcome.rows_changed,
        feature_column=column,
        mutation=mutation.describe(column),
        baseline_cached=outcome.baseline_cached,
        predict_calls=outcome.mutated.predict_calls,
        value_class_rows=outcome.mutated.value_class_rows,
        unisolated_rows=outcome.mutated.unisolated_rows,
        error_samples=outcome.mutated.error_samples,
        seconds=outcome.seconds,
        sampling=_achieved(prepared.sampling, metrics.flip_rate_ci_low, metrics.flip_rate_ci_high),
    )
    evidence = ModelEvidence(
        urn=model.urn,
        name=model.name,
        verdict=Verdict.INCOMPLETE,
        reasons=[],
        feature_column=column,
        lineage_path=path,
        binding=record,
        metrics=metrics,
        experiment=experiment,
        owners=model.owners,
        production_marker=model.production_evidence,
    )
    return ModelTest(evidence, (outcome.y_true, outcome.baseline, outcome.mutated.scores, outcome.mutated.failed))


def _achieved(sampling: SamplingRecord | None, low: float | None, high: float | None) -> SamplingRecord | None:
    if sampling is None or low is None or high is None:
        return sampling
    return sampling.model_copy(update={"achieved_flip_half_width": (high - low) / 2})


def not_tested(discovery: Discovery) -> list[NotTested]:
    return [
        NotTested(urn=m.urn, name=m.name, reason=f"not in production ({m.production_evidence})")
        for m in discovery.other_models
    ]


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


__all__ = ["ModelTest", "MutationTypeError", "PlanError", "run_model"]
