"""The typed outputs of Provenance's MCP tools (FastMCP turns each into the tool's output schema and structured
content)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from policies import Verdict


class ModelReached(BaseModel):
    urn: str
    name: str
    production: bool
    production_marker: str = Field(description="why it counts as production, or why not")
    paths: list[str] = Field(description="each lineage path from the field to the model, one line each")


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
