"""What a discovery found: the models that depend on a dataset field, each with the links (mlFeatures or training
runs) and the column path that reach it, and the coverage of what was read.

These are the result types only; `lineage_walk.py` walks the catalog to build them. They keep this module as their
home because checkpoints name them by module (agent/checkpoints.py).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from tools.catalog.coverage import Coverage
from tools.catalog.entity import EntitySummary


class RerunPlan(BaseModel):
    """The SQL that builds a downstream dataset from the changed table, every dataset in between inlined as a CTE
    and the changed table read as `__provenance_changed` (tools/catalog/rerun_plan.py): the warehouse runs it with
    that CTE unchanged and changed, and the rows are compared by `key` (tools/experiment/rerun.py)."""

    sql: str
    dialect: str | None
    source_table: str  # the changed table, as the warehouse names it
    source_columns: list[str]
    key: list[str]  # columns known to be unique in the dataset (a primary key or a dbt `unique` test)
    inlined: list[str]  # the datasets whose SQL was inlined, in order


class LineageStep(BaseModel):
    dataset_urn: str
    column: str
    transform: str | None = None  # the transform on the edge INTO this column (None for the source)
    note: str | None = None  # how this step was established when it is not a lineage edge ("matched by name")
    # When the transform is not a recorded copy: this column's SQL expression over base-table columns, read from the
    # transform itself ('SQL: …') or from the SQL that built the dataset (sql_source.py), and which of its columns
    # is the previous step's column. No expression and no copy: the transform is unknown (`unknown` says why).
    expression: str | None = None
    expression_input: tuple[str, str] | None = None  # (table, column) as the expression names it
    expression_from: str | None = None  # where the SQL was read
    dialect: str | None = None
    unknown: str | None = None
    # How the statement maps the input's rows, for the input's table: ("picks", why) when the SQL also selects or
    # matches rows by the input column; ("repeats" | "matched", the join) when a JOIN repeats them or reaches only
    # the matched rows (tools/transforms/joins.py). Kept with the expression: derivation needs both.
    row_notes: list[tuple[str, str]] = []
    # Base columns of the expression the catalog types as integers: NUMERIC(p, s) of one keeps every value.
    integer_inputs: list[tuple[str, str]] = []
    # The share of this dataset's rows whose LEFT JOIN found a match on the input's side, counted in the warehouse
    # (matched_counts.py): a change that is not NULL-preserving reaches that share of the rows.
    matched_share: float | None = None
    # On a path's last step: how the warehouse can re-run its dataset with the change applied, when it can.
    rerun: RerunPlan | None = None


class AffectedFeature(BaseModel):
    """One link from the changed field to a model: an mlFeature, or a training run that read the column."""

    urn: str  # the mlFeature, or the training run (dataProcessInstance)
    name: str
    dataset_urn: str
    column: str
    path: list[LineageStep]
    # inputs: the model's own inputs (the bound pipeline's feature_names_in_) decide whether the column is used
    precision: Literal["column", "dataset", "inputs"]
    link: Literal["feature", "training_run"] = "feature"
    non_identity_transforms: list[str] = []  # transforms on the path that do not carry the value unchanged


class AffectedModel(BaseModel):
    urn: str
    name: str
    production: bool
    production_evidence: str
    features: list[AffectedFeature]
    owners: list[str]
    tags: list[str]
    custom_properties: dict[str, str]
    related_documents: list[str]


class Discovery(BaseModel):
    dataset_urn: str
    field: str
    field_type: str
    field_native_type: str | None
    dataset: EntitySummary
    precision: Literal["column", "dataset", "none"]
    datasets_searched: list[str]
    features: list[AffectedFeature]
    models: list[AffectedModel]
    mcp_calls: int
    duration_ms: float
    coverage: Coverage = Coverage()

    @property
    def production_models(self) -> list[AffectedModel]:
        return [m for m in self.models if m.production]

    @property
    def other_models(self) -> list[AffectedModel]:
        return [m for m in self.models if not m.production]
