"""Testing every affected production model against one mutation, and the overall verdict.

Two phases per model: `prepare_model` (binding, verified artifact, evaluation data, column checks) and
`run_model` (inference, metrics; the policy judges afterwards, once, in the graph's `judge` node). Problems with
a model's binding make that model INCOMPLETE; a plan that does not fit the data (e.g. a category mapping on a
numeric column) raises PlanError so the caller can refuse it before anything runs or is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from policies.engine import Decision, Reason, Verdict, incomplete, overall_verdict
from tools.catalog.discovery import AffectedFeature, AffectedModel, Discovery, LineageStep
from tools.evidence.schema import BindingRecord, ExperimentRecord, ModelEvidence, ModelTest, NotTested
from tools.experiment.binding import (
    BindingError,
    ModelBinding,
    expected_columns,
    load_eval_data,
    load_verified_pipeline,
    resolve_binding,
)
from tools.experiment.metrics import compute_metrics
from tools.experiment.runner import BaselineCache, BaselineFailure, run_experiment
from tools.mutations import (
    Kind,
    Mutation,
    MutationTypeError,
    PlanError,
    apply_mutation,
    check_compatible,
)

CATALOG_KINDS: dict[str, Kind] = {
    "NUMBER": "numeric",
    "STRING": "categorical",
    "ENUM": "categorical",
    "BOOLEAN": "boolean",
}


def validate_against_field(mutation: Mutation, discovery: Discovery) -> None:
    """Refuse a plan whose operator does not fit the field's catalog type, before any model is touched."""
    kind = CATALOG_KINDS.get(discovery.field_type.upper())
    if kind is not None and not mutation.fits(kind):
        empty = pd.Series(
            [], dtype=float if kind == "numeric" else bool if kind == "boolean" else object, name=discovery.field
        )
        check_compatible(mutation, empty)  # raises MutationTypeError listing the operators that fit


@dataclass
class PreparedModel:
    model: AffectedModel
    binding: ModelBinding
    pipeline: Any
    frame: pd.DataFrame
    eval_sha256: str
    input_columns: list[str]
    feature_columns: list[str]
    path: list[LineageStep]


def _incomplete(model: AffectedModel, code: str, message: str, **extra: Any) -> ModelEvidence:
    decision = incomplete(code, message)
    return ModelEvidence(
        urn=model.urn,
        name=model.name,
        verdict=decision.verdict,
        reasons=list(decision.reasons),
        owners=model.owners,
        production_marker=model.production_evidence,
        **extra,
    )


def _binding_record(binding: ModelBinding, eval_sha256: str | None = None) -> BindingRecord:
    return BindingRecord(
        artifact_path=str(binding.artifact_path),
        artifact_sha256_expected=binding.artifact_sha256,
        eval_data_path=str(binding.eval_data_path),
        eval_data_sha256=eval_sha256,
        label_column=binding.label_column,
        decision_threshold=binding.decision_threshold,
        artifact_uri=binding.artifact_uri,
        eval_data_uri=binding.eval_data_uri,
        mlflow_model=binding.mlflow_model,
        mlflow_version=binding.mlflow_version,
        mlflow_run_id=binding.mlflow_run_id,
    )


def prepare_model(model: AffectedModel, mutation: Mutation, base_dir: Path) -> PreparedModel | ModelEvidence:
    """Everything that can make a model untestable, checked before any inference.

    Feature links name their column; training-run links only say the model was trained on data holding the column,
    so for them the verified pipeline's own inputs decide whether the column is used (and only then do the
    transforms on its path matter)."""
    features = [f for f in model.features if f.link == "feature"]
    runs = [f for f in model.features if f.link == "training_run"]
    path = model.features[0].path if model.features else []
    if any(f.precision == "dataset" for f in features):
        return _incomplete(
            model,
            "dataset_level_lineage",
            "only dataset-level lineage reaches this model, so the feature column carrying the field "
            "is unknown; record column-level lineage (fineGrainedLineages) in DataHub",
            lineage_path=path,
        )
    untransformed = _non_identity(model, features)
    if untransformed is not None:
        return untransformed
    try:
        binding = resolve_binding(model.custom_properties, base_dir)
    except BindingError as exc:
        return _incomplete(model, exc.code, _binding_advice(str(exc), runs), lineage_path=path)
    record = _binding_record(binding)
    try:
        pipeline = load_verified_pipeline(binding)
        frame, eval_sha256 = load_eval_data(binding)
    except BindingError as exc:
        return _incomplete(model, exc.code, str(exc), lineage_path=path, binding=record)
    record = _binding_record(binding, eval_sha256)
    declared = expected_columns(pipeline)
    if runs and declared is None:
        return _incomplete(
            model,
            "inputs_unknown",
            "the model is linked to the field through its training run, but its pipeline records no input column "
            "names (feature_names_in_), so whether it reads the field is unknown; fit it on a pandas DataFrame",
            lineage_path=path,
            binding=record,
        )
    used_runs = [f for f in runs if declared is not None and f.column in declared]
    if runs and not features and not used_runs:
        columns = sorted({f.column for f in runs})
        reason = Reason(
            code="field_not_an_input",
            severity=Verdict.PASS,
            message=f"trained on data holding {', '.join(columns)}, but the verified pipeline's inputs "
            f"({', '.join(declared or [])}) do not include it: the change cannot reach this model",
        )
        return ModelEvidence(
            urn=model.urn,
            name=model.name,
            verdict=Verdict.PASS,
            reasons=[reason],
            lineage_path=path,
            binding=record,
            owners=model.owners,
            production_marker=model.production_evidence,
        )
    untransformed = _non_identity(model, used_runs)
    if untransformed is not None:
        return untransformed
    links = features + used_runs
    path = links[0].path
    feature_columns = sorted({f.column for f in links})
    input_columns = declared or [c for c in frame.columns if c != binding.label_column]
    missing = [c for c in set(input_columns) | set(feature_columns) if c not in frame.columns]
    if missing:
        return _incomplete(
            model,
            "columns_missing",
            f"evaluation data {binding.eval_data_path} lacks column(s) {sorted(missing)} "
            "that the model or the lineage needs",
            lineage_path=path,
            binding=record,
        )
    unused = [c for c in feature_columns if c not in input_columns]
    if unused:
        return _incomplete(
            model,
            "feature_not_used",
            f"lineage says the model consumes {unused}, but the pipeline's inputs are {input_columns}",
            lineage_path=path,
            binding=record,
        )
    for column in feature_columns:
        check_compatible(mutation, frame[column])  # PlanError here is the caller's to refuse
    return PreparedModel(
        model=model,
        binding=binding,
        pipeline=pipeline,
        frame=frame,
        eval_sha256=eval_sha256,
        input_columns=input_columns,
        feature_columns=feature_columns,
        path=path,
    )


def _non_identity(model: AffectedModel, links: list[AffectedFeature]) -> ModelEvidence | None:
    for link in links:
        if link.non_identity_transforms:
            return _incomplete(
                model,
                "non_identity_transform",
                f"the field reaches {link.column} ({_via(link)}) through transform(s) "
                f"{', '.join(link.non_identity_transforms)}; the mutation cannot be propagated "
                "faithfully, so this model was not tested",
                lineage_path=link.path,
            )
    return None


def _via(link: AffectedFeature) -> str:
    return f"feature {link.name}" if link.link == "feature" else f"training run {link.urn}"


def _binding_advice(message: str, runs: list[AffectedFeature]) -> str:
    if not runs:
        return message
    return (
        f"{message}. This model comes from DataHub's mlflow source, which rewrites its properties at every "
        "ingestion: set the keys as MLflow model-version tags (the source copies them into DataHub)"
    )


def run_model(prepared: PreparedModel, mutation: Mutation, cache: BaselineCache) -> ModelTest:
    """Inference and metrics. The verdict is left to the policy, applied once, in the graph's `judge` node: until
    then a measured model reads INCOMPLETE with no reasons."""
    model, binding = prepared.model, prepared.binding
    path = prepared.path
    record = _binding_record(binding, prepared.eval_sha256)
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
            cache_key=(binding.artifact_sha256, prepared.eval_sha256),
        )
    except BaselineFailure as exc:
        return ModelTest(_incomplete(model, "baseline_failure", str(exc), lineage_path=path, binding=record))
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


__all__ = ["ModelTest", "MutationTypeError", "PlanError", "prepare_model", "run_model", "validate_against_field"]
