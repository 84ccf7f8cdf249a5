"""Preparing a model for the experiment: everything that can make it untestable, checked before any inference.

The plan is first checked against the field's catalog type (`validate_against_field`); then, per model,
`prepare_model` reads the binding, loads the verified artifact and the evaluation data (only the columns the model
and the lineage need, sampled when larger than the precision needs: `sampling.py`) and checks the columns.
Problems with a model's binding make that model INCOMPLETE; a plan that does not fit the data (e.g. a category
mapping on a numeric column) raises PlanError so the caller can refuse it before anything runs or is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from policies import Reason, Verdict
from tools.catalog.discovery import AffectedFeature, AffectedModel, Discovery, LineageStep
from tools.evidence.schema import ModelEvidence, SamplingRecord
from tools.experiment.binding import BindingError, ModelBinding
from tools.experiment.carry import carry, reaching_links, unfit_column
from tools.experiment.loading import EXTRA_SEGMENT_COLUMNS, expected_columns, load_eval_sample, load_verified_pipeline
from tools.experiment.locate import resolve_binding
from tools.experiment.model_evidence import binding_record, incomplete_evidence
from tools.experiment.sampling import SampleSpec
from tools.experiment.task import TaskDecision, decide_task
from tools.mutations import Kind, Mutation, check_compatible
from tools.settings import load_settings

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
    task: TaskDecision
    sampling: SamplingRecord | None = None  # None: `frame` holds every row of the evaluation data
    # What each feature column undergoes: the plan's mutation carried along its lineage path (carry.py), and how.
    mutations: dict[str, Mutation] = field(default_factory=dict)
    derivations: list[str] = field(default_factory=list)

    @property
    def segment_columns(self) -> list[str]:
        """What the segment analysis may split the rows by: the model's inputs, then the other columns `frame`
        holds besides the label (the file's categorical columns `load_eval_sample` added)."""
        extra = [c for c in self.frame.columns if c not in self.input_columns and c != self.binding.label_column]
        return [*self.input_columns, *extra]

    @property
    def data_key(self) -> str:
        """The rows `frame` holds, for the baseline cache: the file's hash, plus the sample's seed and size."""
        if self.sampling is None:
            return self.eval_sha256
        return f"{self.eval_sha256}:sample:{self.sampling.seed}:{self.sampling.rows_used}"


def sample_spec() -> SampleSpec:
    """The sampling the environment asks for (PROVENANCE_SAMPLE_HALF_WIDTH, PROVENANCE_SAMPLE_SEED)."""
    settings = load_settings()
    return SampleSpec(half_width=settings.provenance_sample_half_width, seed=settings.provenance_sample_seed)


def prepare_model(
    model: AffectedModel, mutation: Mutation, base_dir: Path, *, sampling: SampleSpec | None = None
) -> PreparedModel | ModelEvidence:
    """Everything that can make a model untestable, checked before any inference.

    Feature links name their column; training-run links only say the model was trained on data holding the column,
    so for them the verified pipeline's own inputs decide whether the column is used (and only then do the
    transforms on its path matter). `sampling` defaults to the environment's (`sample_spec`)."""
    features = [f for f in model.features if f.link == "feature"]
    runs = [f for f in model.features if f.link == "training_run"]
    path = model.features[0].path if model.features else []
    if any(f.precision == "dataset" for f in features):
        return incomplete_evidence(
            model,
            "dataset_level_lineage",
            "only dataset-level lineage reaches this model, so the feature column carrying the field "
            "is unknown; record column-level lineage (fineGrainedLineages) in DataHub",
            lineage_path=path,
        )
    carried_features = carry(mutation, features)
    if carried_features.refusal is not None:
        return _not_carried(model, carried_features.refusal, features)
    try:
        binding = resolve_binding(model.custom_properties, base_dir)
    except BindingError as exc:
        return incomplete_evidence(model, exc.code, _binding_advice(str(exc), runs), lineage_path=path)
    record = binding_record(binding)
    try:
        pipeline = load_verified_pipeline(binding)
        task = decide_task(pipeline, binding.task)
    except BindingError as exc:
        return incomplete_evidence(model, exc.code, str(exc), lineage_path=path, binding=record)
    known: dict[str, Any] = {"task": task.task, "task_basis": task.basis}  # later records say what it was taken for
    declared = expected_columns(pipeline)
    # Only what the model reads and the lineage names (all columns when the pipeline records no names), plus a few
    # categorical columns for the segment analysis.
    needed = None if declared is None else sorted({*declared, *(f.column for f in model.features)})
    try:
        data = load_eval_sample(binding, needed, sampling or sample_spec(), task, EXTRA_SEGMENT_COLUMNS)
    except BindingError as exc:
        return incomplete_evidence(model, exc.code, str(exc), lineage_path=path, binding=record, **known)
    frame, eval_sha256 = data.frame, data.sha256
    record = binding_record(binding, eval_sha256)
    if runs and declared is None:
        return incomplete_evidence(
            model,
            "inputs_unknown",
            "the model is linked to the field through its training run, but its pipeline records no input column "
            "names (feature_names_in_), so whether it reads the field is unknown; fit it on a pandas DataFrame",
            lineage_path=path,
            binding=record,
            **known,
        )
    links = reaching_links(model.features, declared)
    if runs and not links:
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
            task=task.task,
            task_basis=task.basis,
        )
    carried = carry(mutation, links)
    if carried.refusal is not None:
        return _not_carried(model, carried.refusal, links[len(features) :])
    path = links[0].path
    if not carried.mutations:
        reason = Reason(
            code="change_not_carried",
            severity=Verdict.PASS,
            message=f"the change cannot alter what this model reads ({'; '.join(carried.explanations)})",
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
            task=task.task,
            task_basis=task.basis,
        )
    feature_columns = sorted(carried.mutations)
    input_columns = declared or [c for c in frame.columns if c != binding.label_column]
    missing = [c for c in set(input_columns) | set(feature_columns) if c not in frame.columns]
    if missing:
        return incomplete_evidence(
            model,
            "columns_missing",
            f"evaluation data {binding.eval_data_path} lacks column(s) {sorted(missing)} "
            "that the model or the lineage needs",
            lineage_path=path,
            binding=record,
            **known,
        )
    unused = [c for c in feature_columns if c not in input_columns]
    if unused:
        return incomplete_evidence(
            model,
            "feature_not_used",
            f"lineage says the model consumes {unused}, but the pipeline's inputs are {input_columns}",
            lineage_path=path,
            binding=record,
            **known,
        )
    if misfit := unfit_column(carried.mutations, frame):
        column, unfit = misfit
        if carried.mutations[column] == mutation:
            raise unfit  # the plan itself does not fit the data: the caller refuses it
        return incomplete_evidence(  # a change derived through SQL that does not fit: this model only, not the plan
            model,
            "derived_change_unfit",
            f"{'; '.join(carried.explanations)}; but {unfit}",
            lineage_path=path,
            binding=record,
            **known,
        )
    return PreparedModel(
        model=model,
        binding=binding,
        pipeline=pipeline,
        frame=frame,
        eval_sha256=eval_sha256,
        input_columns=input_columns,
        feature_columns=feature_columns,
        path=path,
        task=task,
        sampling=data.sampling,
        mutations=carried.mutations,
        derivations=carried.explanations,
    )


def _not_carried(model: AffectedModel, refusal: str, links: list[AffectedFeature]) -> ModelEvidence:
    return incomplete_evidence(
        model,
        "non_identity_transform",
        f"{refusal}; so this model was not tested",
        lineage_path=links[0].path if links else [],
    )


def _binding_advice(message: str, runs: list[AffectedFeature]) -> str:
    if not runs:
        return message
    return (
        f"{message}. This model comes from DataHub's mlflow source, which rewrites its properties at every "
        "ingestion: set the keys as MLflow model-version tags (the source copies them into DataHub)"
    )
