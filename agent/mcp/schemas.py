"""The typed outputs of Provenance's MCP tools (FastMCP turns each into the tool's output schema and structured
content)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from policies import Verdict
from tools.changes.schema import ChangeSet


class ModelReached(BaseModel):
    urn: str
    name: str
    production: bool
    production_marker: str = Field(description="why it counts as production, or why not")
    paths: list[str] = Field(
        description="each lineage path from the field to the model, one line each: platform:dataset.column steps "
        "with the transform on each edge ([IDENTITY], [SQL: ...]), the feature or training run, then the model"
    )


class AffectedModels(BaseModel):
    dataset: str
    field: str
    models: list[ModelReached]
    lineage_complete: bool = Field(description="false: part of the lineage could not be read; see unreadable")
    unreadable: list[str] = []
    coverage: list[str] = Field(description="what discovery read, reached and could not read, one line each")


class ModelVerdict(BaseModel):
    urn: str
    name: str
    verdict: Verdict
    task: str | None = None
    reasons: list[str]
    metrics: dict[str, object] | None = Field(default=None, description="the measured numbers with 95% intervals")
    plots: dict[str, str] = Field(
        default={}, description="plot name -> its PNG as the resource provenance://runs/<id>/plots/<file>"
    )


class Assessment(BaseModel):
    run_id: str
    verdict: Verdict
    change_tested: str
    reasons: list[str]
    models: list[ModelVerdict]
    tolerance_notes: list[str] = []
    evidence_json: str = Field(description="path of evidence.json; also the resource provenance://runs/<id>/evidence")
    report_md: str = Field(description="path of report.md; also the resource provenance://runs/<id>/report")
    published: bool = Field(default=False, description="always false: publishing needs a person's approval")


class LatestVerdict(BaseModel):
    model: str
    found: bool
    run_id: str | None = None
    created_at: str | None = None
    verdict: Verdict | None = None
    change_tested: str | None = None
    reasons: list[str] = []
    publication: str | None = None
    unreadable_runs: list[str] = Field(
        default=[], description="newer run folders whose evidence could not be read: a later verdict may be there"
    )


class SqlFileChanged(BaseModel):
    file: str
    status: str = Field(description="added, modified, deleted or renamed")
    table: str = Field(description="the table the model builds, as the catalog is searched for it")
    changed: bool = Field(description="an existing column changed (or a version could not be parsed)")


class InferredChanges(BaseModel):
    base: str
    head: str
    repo: str = Field(description="the git checkout read, as an absolute path")
    changes_yaml: str = Field(description="the CHANGES.yml text, ready for check_changes once reviewed")
    change_set: ChangeSet = Field(description="the same entries as structured data")
    files: list[SqlFileChanged] = Field(description="every .sql file changed between base and head")
    unresolved: dict[str, str] = Field(
        default={}, description="table name -> why its dataset was not found in the catalog, and how to fix it"
    )
    summary: list[str] = Field(description="one line per entry, file:line first, as `provenance infer-changes`")
