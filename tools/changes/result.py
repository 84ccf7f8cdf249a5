"""What `provenance check` reports: one verdict per CHANGES.yml entry (per model, with the key numbers), the
combined verdict and where the evidence is. The `--json` output and the input of the Markdown summary.

The key numbers are read from the evidence defensively: a binary classifier has a flip rate and an AUC, other
tasks carry their own primary metric (MAE, accuracy) and may have neither; whatever is None stays None.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from policies import Reason, Verdict, overall_verdict
from tools.catalog.resolve import dataset_name
from tools.changes.schema import Approval, ParamValue, SourceRef
from tools.evidence.schema import ModelEvidence
from tools.evidence.task_views import MetricChange, task_view

EntryKind = Literal["change", "structural", "unmapped"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Interval(_Frozen):
    value: float
    low: float | None = None
    high: float | None = None


class ModelOutcome(_Frozen):
    urn: str
    name: str
    verdict: Verdict
    reasons: list[str]
    task: str | None = None  # binary, multiclass, regression; None when nothing was measured
    flip_rate: Interval | None = None
    performance: MetricChange | None = None
    failures: int | None = None
    failure_rate: float | None = None
    rows: int | None = None


class EntryResult(_Frozen):
    """One CHANGES.yml entry: a proposed change (assessed), a structural change (judged by lineage) or an
    unmapped one (not judged: INCOMPLETE, review by hand)."""

    kind: EntryKind
    index: int  # position within its section of the file
    dataset: str | None
    field: str
    op: str | None = None
    params: dict[str, ParamValue] = Field(default_factory=dict)
    fraction: float | None = None
    seed: int | None = None
    change: Literal["dropped", "renamed"] | None = None
    renamed_to: str | None = None
    note: str = ""
    source: SourceRef | None = None
    confidence: str | None = None
    verdict: Verdict
    reasons: list[str]
    models: list[ModelOutcome] = Field(default_factory=list)
    not_tested: list[str] = Field(default_factory=list)  # reached models that are not in production, and why
    coverage_complete: bool | None = None
    run_id: str | None = None
    evidence_dir: str | None = None
    report: str | None = None
    publication: str | None = None  # the run's publication status after the check

    @property
    def label(self) -> str:
        """A short name for the entry, e.g. `payments.public.transactions.amount: scale(factor=100)`."""
        where = f"{dataset_name(self.dataset)}.{self.field}" if self.dataset else self.field
        if self.kind == "change":
            params = ", ".join(f"{k}={v}" for k, v in self.params.items())
            share = f" on {self.fraction * 100:g}% of rows" if self.fraction not in (None, 1.0) else ""
            return f"{where}: {self.op}({params}){share}"
        if self.kind == "structural":
            renamed = f" to {self.renamed_to}" if self.renamed_to else ""
            return f"{where}: column {self.change}{renamed}"
        at = f" ({self.source.file}:{self.source.line})" if self.source else ""
        return f"{where}{at}: not mappable"


class PolicyRef(_Frozen):
    name: str
    version: int
    sha256: str


class CheckResult(_Frozen):
    file: str
    verdict: Verdict
    exit_code: int
    entries: list[EntryResult]
    policy: PolicyRef
    provenance_version: str
    approval: Approval | None = None  # the approval used for --publish (file or command line); None otherwise
    published: bool = False


def combined_verdict(entries: list[EntryResult]) -> Verdict:
    """The worst entry's verdict (BLOCK > INCOMPLETE > WARNING > PASS); an empty file is PASS: nothing changes."""
    return overall_verdict([e.verdict for e in entries])


def outcome_of(model: ModelEvidence) -> ModelOutcome:
    """The key numbers of one model's evidence, whatever its task."""
    m = model.metrics
    base = ModelOutcome(
        urn=model.urn, name=model.name, verdict=model.verdict, reasons=[r.message for r in _worst_first(model)]
    )
    if m is None:
        return base
    flip = None
    if m.flip_rate is not None:
        flip = Interval(value=m.flip_rate, low=m.flip_rate_ci_low, high=m.flip_rate_ci_high)
    return base.model_copy(
        update={
            "task": m.task,
            "flip_rate": flip,
            "performance": task_view(m).performance(),
            "failures": m.failures,
            "failure_rate": m.failure_rate,
            "rows": m.n,
        }
    )


def _worst_first(model: ModelEvidence) -> list[Reason]:
    """The reasons that set the verdict; all of them when none did. A PASS lists why nothing fired, the measured
    change first: "0 of 7200 rows failed inference" says nothing about the change, so it comes last."""
    top = [r for r in model.reasons if r.severity == model.verdict]
    if model.verdict == Verdict.PASS:
        return sorted(top, key=lambda r: r.code.startswith("inference_failures"))
    return top or list(model.reasons)
