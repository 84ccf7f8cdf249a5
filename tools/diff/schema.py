"""What `provenance diff` records, written before anything is shown: per changed dataset its relations and row
counts, per production model its verdict, reasons, paired metrics, rows gone and new, and the data diff of the
columns it reads; the overall verdict and the coverage (k of n production models measured)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from policies import ModelMetrics, Reason, TaskName, Verdict
from tools.diff.columns import ColumnDiff
from tools.diff.crosscheck import ColumnReading


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Sides(Frozen):
    dataset_urn: str
    base: str  # the relation as the warehouse names it
    head: str
    key: list[str]
    key_basis: str  # "--key", "the catalog's primary key", "a dbt unique test"…
    base_rows: int | None = None
    head_rows: int | None = None
    both: int | None = None
    only_base: int | None = None  # rows gone
    only_head: int | None = None  # rows new
    sampled: int | None = None  # rows present on both sides that were scored
    sample_bytes: int | None = None  # the sampled rows' size in memory


class ModelDiff(Frozen):
    urn: str
    name: str
    verdict: Verdict
    reasons: list[Reason]
    reads: str | None = None  # the dataset whose relations the model was scored on
    task: TaskName | None = None
    metrics: ModelMetrics | None = None
    rows_gone: int | None = None  # of the rows it scores today
    rows_new: int | None = None
    columns: list[ColumnDiff] = []
    plots: dict[str, str] = {}


class DiffEvidence(Frozen):
    run_id: str
    created_at: str
    warehouse: str  # the URL without its password
    dialect: str
    base_label: str  # e.g. "schema analytics" or "base manifest target/prod/manifest.json"
    head_label: str
    policy_name: str
    policy_version: int
    policy_sha256: str
    rows_limit: int
    seed: int
    datasets: list[Sides]
    models: list[ModelDiff]
    verdict: Verdict
    coverage_complete: bool
    coverage_lines: list[str]
    # Each changed column of the changed datasets as the data shows it, beside a CHANGES file's reading of the SQL
    readings: list[ColumnReading] = []

    @property
    def measured(self) -> int:
        return sum(1 for m in self.models if m.metrics is not None)
