"""What a tolerance scan records (`scan.json`): per production model, per dose axis of the scanned column, the
brackets where the policy's verdict reaches WARNING and BLOCK, and every dose tested on the way."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from policies import TaskName
from tools.catalog.coverage import Coverage
from tools.evidence.schema import NotTested, PolicyRecord
from tools.tolerance.bisection import LEVELS, Bracket, Level, Search

SCAN_SCHEMA: Literal["provenance.scan/1"] = "provenance.scan/1"


class AxisResult(BaseModel):
    axis: str  # scale_up, nulls, … (doses.py)
    op: str  # the operator the doses are given to
    unit: str
    search: Search
    labels: dict[float, str] = Field(description="each tested dose as people say it (×1.8, 3% nulls)")

    def levels_text(self, separator: str = "; ") -> str:
        """BLOCK's bracket, then WARNING's: "BLOCK from ×2 (×1.5 tolerated); WARNING from ×1.5 (×1.2 tolerated)"."""
        return separator.join(self.bracket_text(level) for level in reversed(LEVELS))

    def bracket_text(self, level: Level) -> str:
        """ "BLOCK from ×2 (×1.5 tolerated)", "no WARNING up to ×1000", or why the threshold is unknown."""
        if self.search.incomplete:
            return f"{level} unknown: {self.search.incomplete}"
        bracket: Bracket = self.search.brackets[level]
        if bracket.reached is None:
            return f"no {level} up to {self.labels[bracket.tolerated or 0.0]}"
        kept = (
            f" ({self.labels[bracket.tolerated]} tolerated)"
            if bracket.tolerated is not None
            else " (the smallest dose tested: the threshold may be lower)"
        )
        return f"{level} from {self.labels[bracket.reached]}{kept}"


class ModelScan(BaseModel):
    urn: str
    name: str
    task: TaskName | None = None
    column: str | None = None  # the model's input the scanned field lands in
    artifact_sha256: str | None = None
    eval_data_sha256: str | None = None
    rows: int | None = None
    not_scanned: str | None = None  # why no axis was scanned (binding, transforms, …): INCOMPLETE
    axes: list[AxisResult] = []

    def summary(self) -> str:
        if self.not_scanned:
            return f"{self.name}: not scanned — {self.not_scanned}"
        parts = [f"{a.axis}: {a.levels_text()}" for a in self.axes]
        return f"{self.name}: " + " | ".join(parts)


class ScanPublication(BaseModel):
    """What `scan --publish` wrote, after whose approval (tools/tolerance/publish.py)."""

    status: Literal["not_requested", "declined", "published", "failed"] = "not_requested"
    decided_by: str | None = None
    field_urn: str | None = None
    values: list[str] = []
    document_urn: str | None = None
    message: str = ""
    updated_at: str | None = None


class ScanResult(BaseModel):
    schema_version: Literal["provenance.scan/1"] = SCAN_SCHEMA
    scan_id: str
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    dataset_urn: str
    field: str
    field_type: str
    models: list[ModelScan]
    not_tested: list[NotTested] = []
    coverage: Coverage | None = None
    policy: PolicyRecord
    conventions_sha256: str
    experiments: int  # doses measured, over every model and axis
    seconds: float
    environment: dict[str, str] = {}
    plots: dict[str, str] = {}  # file name -> sha256, as written next to scan.json
    publication: ScanPublication = ScanPublication()

    def gaps(self) -> list[str]:
        """What the map could not say, each as INCOMPLETE: lineage not read completely (so "no production model"
        or a missing model is unknown, not none), models not scanned, axes whose thresholds are unknown."""
        found: list[str] = []
        if self.coverage is not None and not self.coverage.complete:
            found.append(
                "INCOMPLETE: the lineage could not be read completely, so models downstream may be missing: "
                + "; ".join(self.coverage.unreadable)
            )
        found += [f"INCOMPLETE: {m.name} not scanned: {m.not_scanned}" for m in self.models if m.not_scanned]
        found += [
            f"INCOMPLETE: {m.name} {a.axis}: {a.search.incomplete}"
            for m in self.models
            for a in m.axes
            if a.search.incomplete
        ]
        return found

    def empty_text(self) -> str:
        """What a scan that reached no production model says: none depends, or the lineage was not read whole."""
        if self.coverage is not None and not self.coverage.complete:
            return "No production model found, but the lineage could not be read completely: nothing was scanned."
        return "No production model depends on this field (the whole lineage graph was read): nothing to scan."
