"""evidence.json: what was asked, what lineage showed, what ran, what was measured, what the policy decided,
and what was (or was not) published. Schema-versioned; readers check `schema_version`."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, field_validator

from policies import ModelMetrics, Reason, TaskName, Verdict
from tools.catalog.coverage import Coverage
from tools.catalog.discovery import LineageStep
from tools.errors import FailureKind
from tools.mutations.operators import Mutation

if TYPE_CHECKING:
    import numpy as np

SCHEMA_VERSION = "provenance.evidence/2"
# /1 kept each paired metric as flat fields (auc_delta, mae_delta_ci_low…); its files are read into /2's shape
# (policies/metrics.py, legacy_flat), so a run written before the change stays readable and publishable.
READABLE_SCHEMAS = ("provenance.evidence/1", SCHEMA_VERSION)


def new_run_id(now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(3)}"


class ChangeRequest(BaseModel):
    dataset_urn: str
    field: str
    op: str
    params: dict[str, Any]
    fraction: float
    seed: int
    question: str | None = None  # the user's words, when the request came from a conversation


class PlanRecord(BaseModel):
    planner: Literal["chat_model", "cli", "deterministic", "gemini", "replay"]
    mutation: Mutation | None = Field(description="the validated mutation; None when no plan was made")
    description: str
    rationale: str = ""
    structural: Literal["dropped", "renamed"] | None = Field(
        default=None, description="a schema change judged by the policy's structural rule (mutation None)"
    )
    renamed_to: str | None = None
    confirmed_from: str | None = Field(
        default=None,
        description="the refused request whose suggestion the person chose to run (this plan's words are that "
        "suggestion's); None when the person asked for this change directly",
    )

    @field_validator("mutation", mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        # Run folders and traces written before the mutation was typed store "no plan" as {}.
        return None if value == {} else value


class BindingRecord(BaseModel):
    artifact_path: str  # the local file hashed and unpickled (a download's cache path for non-local URIs)
    artifact_sha256_expected: str
    eval_data_path: str
    eval_data_sha256: str | None = None
    label_column: str
    decision_threshold: float
    task: TaskName | None = None  # provenance.task as bound; None: the task was detected from the pipeline
    artifact_uri: str | None = None  # provenance.artifact_uri as recorded in the catalog
    eval_data_uri: str | None = None  # provenance.eval_data_uri as recorded in the catalog
    mlflow_model: str | None = None  # registered model name (`provenance bind` writes it)
    mlflow_version: str | None = None
    mlflow_run_id: str | None = None  # the MLflow run that trained the version


class SamplingRecord(BaseModel):
    """The evaluation data was larger than the precision needed: the rows the experiment ran on."""

    method: str  # e.g. "stratified by label, proportional allocation ..."
    rows_total: int  # rows in the evaluation file
    rows_used: int
    class_counts_total: dict[str, int] = {}  # label value -> rows in the file
    class_counts_used: dict[str, int] = {}  # label value -> rows in the sample
    seed: int
    min_per_class: int = 0
    confidence: float = 0.95
    target_flip_half_width: float  # the flip-rate interval half-width the sample size was chosen for
    achieved_flip_half_width: float | None = None  # of the measured flip rate's Wilson interval
    columns_read: list[str] = []  # the only columns read from the file


class ExperimentRecord(BaseModel):
    rows: int
    rows_changed: int
    feature_column: str
    mutation: str  # human description: what each changed column underwent
    derivation: list[str] = []  # how the planned change was carried through SQL to these columns, when it was
    baseline_cached: bool
    predict_calls: int
    value_class_rows: int = 0
    unisolated_rows: int = 0
    error_samples: list[str] = []
    seconds: dict[str, float] = {}
    sampling: SamplingRecord | None = None  # None: every row of the evaluation data was used


class ModelEvidence(BaseModel):
    urn: str
    name: str
    verdict: Verdict
    reasons: list[Reason]
    feature_column: str | None = None
    lineage_path: list[LineageStep] = []
    binding: BindingRecord | None = None
    task: TaskName | None = None  # what the model was measured as; None when it was not loaded
    task_basis: str | None = None  # how: "detected from XGBRegressor (…)" or "binding key provenance.task=…"
    metrics: ModelMetrics | None = None
    experiment: ExperimentRecord | None = None
    plots: dict[str, str] = {}  # name -> file name inside the run folder
    owners: list[str] = []
    production_marker: str | None = None  # the catalog marker that made it a production model

    @property
    def measured_task(self) -> TaskName | None:
        """The task its metrics were computed as, else the task it was loaded as (None when neither)."""
        return self.metrics.task if self.metrics is not None else self.task


@dataclass(frozen=True)
class ScoreArrays:
    """The arrays a model's metrics were computed from, which its plots are drawn from; n rows in evaluation order."""

    task: TaskName
    y: (
        np.ndarray
    )  # binary: 0/1 int8; multiclass: the label keys (str objects, see experiment/task.py); regression: float64
    baseline: np.ndarray  # binary: (n,) P(positive); multiclass: (n, k), columns in `classes` order; regression: (n,)
    mutated: np.ndarray  # same shape as baseline; NaN in a failed row
    failed: np.ndarray  # (n,) bool: inference failed on the mutated row
    classes: list[str] | None = None  # multiclass: the probability columns' classes; None otherwise
    tolerance: float | None = None  # regression: |mutated - baseline| beyond which a prediction moved

    def write_plots(self, folder: Path, model_slug: str) -> dict[str, str]:
        """The task's plots into `folder` (tools/evidence/plots.py); {plot name: file name}."""
        from tools.evidence.plots import write_plots

        return write_plots(
            folder,
            model_slug,
            self.y,
            self.baseline,
            self.mutated,
            self.failed,
            task=self.task,
            classes=self.classes,
            tolerance=self.tolerance,
        )


@dataclass
class ModelTest:
    """One tested model as the experiment hands it over: its evidence, plus the arrays its plots are drawn from
    (not part of evidence.json; None when the model was not measured)."""

    evidence: ModelEvidence
    arrays: ScoreArrays | None = None


class NotTested(BaseModel):
    urn: str
    name: str
    reason: str


class PolicyRecord(BaseModel):
    name: str
    version: int
    sha256: str
    path: str


class StageFailure(BaseModel):
    stage: str
    message: str
    kind: FailureKind = "error"  # tools/errors.py: input = the request cannot be served as asked (no run is made)
    service: str | None = None  # the service that failed ("catalog"), when one did
    suggestions: list[str] = []  # a refused change: requests that can run instead (agent/planning/suggest.py)


class PublicationRecord(BaseModel):
    status: Literal["not_requested", "pending_approval", "rejected", "published", "failed"] = "not_requested"
    decided_by: str | None = None
    tags: dict[str, str] = {}  # model urn -> status tag urn written
    document_urn: str | None = None
    message: str | None = None
    attempts: int = 0
    updated_at: str | None = None


class Evidence(BaseModel):
    schema_version: str = SCHEMA_VERSION
    run_id: str
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    request: ChangeRequest
    catalog: str
    dataset_owners: list[str] = []
    dataset_tags: list[str] = []
    lineage_precision: str = "none"
    datasets_searched: list[str] = []
    coverage: Coverage | None = None  # what discovery read, reached and could not read
    plan: PlanRecord
    models: list[ModelEvidence] = []
    not_tested: list[NotTested] = []
    verdict: Verdict
    verdict_reasons: list[str] = []
    policy: PolicyRecord
    mcp_calls: int | None = 0  # this run's catalog calls; None: not counted (a graph run with no call collector)
    timings: dict[str, float] = {}
    environment: dict[str, str] = {}
    failures: list[StageFailure] = []
    publication: PublicationRecord = PublicationRecord()
    # models whose published tolerance map (`provenance scan --publish`) the change reaches; the experiment decided
    tolerance_notes: list[str] = []
