"""Judging CHANGES.yml entries no experiment can measure: a column dropped or renamed (every production model
downstream of it gets the policy's structural verdict) and a changed column no operator fits (INCOMPLETE: a gate's
silence is never a PASS).

The models are found by the same lineage discovery as `provenance lineage` and `assess`, and the verdict over them
by the same `overall` as an assessment, so coverage counts the same way: no production model found while part of
the lineage could not be read is INCOMPLETE, never PASS.
"""

from __future__ import annotations

from typing import Literal

from policies import Policy, Verdict, structural_reason
from tools.catalog.discovery import Discovery
from tools.catalog.lineage_walk import Discoverer
from tools.catalog.resolve import CatalogInputError
from tools.changes.result import EntryResult, outcome_of
from tools.changes.schema import SourceRef, StructuralChange, UnmappedChange
from tools.evidence.schema import ModelEvidence
from tools.experiment.measure import not_tested, overall

UNMAPPED_REASON = "not mappable, review by hand"


async def judge_structural(discoverer: Discoverer, entry: StructuralChange, index: int, policy: Policy) -> EntryResult:
    """The structural rule applied to every production model downstream of the column."""
    result = EntryResult(
        kind="structural",
        index=index,
        dataset=entry.dataset,
        field=entry.field,
        change=entry.change,
        renamed_to=entry.renamed_to,
        note=entry.note,
        source=entry.source,
        verdict=Verdict.INCOMPLETE,
        reasons=[],
    )
    try:
        found = await discoverer.discover(entry.dataset, entry.field)
    except CatalogInputError as exc:  # the column is not in the catalog: nothing can be said about its readers
        return result.model_copy(update={"reasons": [f"not judged: {exc}"]})
    return judged(result, found, policy)


def judged(result: EntryResult, found: Discovery, policy: Policy) -> EntryResult:
    """`result` with the verdict of the models `found` (split from judge_structural to test without a catalog)."""
    assert result.change is not None
    models = structural_evidence(found, result.change, result.field, policy)
    verdict, reasons = overall(found, models)
    return result.model_copy(
        update={
            "verdict": verdict,
            "reasons": reasons,
            "models": [outcome_of(m) for m in models],
            "not_tested": [f"{n.name}: {n.reason}" for n in not_tested(found)],
            "coverage_complete": found.coverage.complete,
        }
    )


def structural_evidence(
    found: Discovery, change: Literal["dropped", "renamed"], field: str, policy: Policy
) -> list[ModelEvidence]:
    """Each production model downstream of the column, judged by the policy's structural rule (`check` and `ask`)."""
    reason = structural_reason(change, field, policy)
    return [
        ModelEvidence(
            urn=m.urn, name=m.name, verdict=reason.severity, reasons=[reason], production_marker=m.production_evidence
        )
        for m in found.production_models
    ]


def judge_unmapped(entry: UnmappedChange, index: int) -> EntryResult:
    return EntryResult(
        kind="unmapped",
        index=index,
        dataset=entry.dataset,
        field=entry.column,
        source=SourceRef(file=entry.file, line=entry.line, column=entry.column),
        verdict=Verdict.INCOMPLETE,
        reasons=[f"{UNMAPPED_REASON}: {entry.reason}"],
    )
