"""Structural and unmapped entries: the policy's structural verdict per production model, coverage respected (no
model found + unread lineage is INCOMPLETE, never PASS), unmapped entries always INCOMPLETE. The end-to-end run on
the demo catalog is in tests/agent/cli/test_check.py."""

from __future__ import annotations

import pytest

from policies import Policy, StructuralRule, Verdict, load_policy
from tools.catalog.coverage import Coverage
from tools.catalog.discovery import AffectedModel, Discovery
from tools.catalog.entity import EntitySummary
from tools.changes.result import EntryResult
from tools.changes.schema import UnmappedChange
from tools.changes.structural import UNMAPPED_REASON, judge_unmapped, judged

SOURCE = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"
POLICY = load_policy().policy


def model(name: str, production: bool) -> AffectedModel:
    return AffectedModel(
        urn=f"urn:li:mlModel:(urn:li:dataPlatform:mlflow,{name},PROD)",
        name=name,
        production=production,
        production_evidence="stage Production" if production else "no production marker",
        features=[],
        owners=[],
        tags=[],
        custom_properties={},
        related_documents=[],
    )


def discovery(models: list[AffectedModel], unreadable: list[str]) -> Discovery:
    return Discovery(
        dataset_urn=SOURCE,
        field="amount",
        field_type="NUMBER",
        field_native_type="NUMERIC",
        dataset=EntitySummary(urn=SOURCE, type="DATASET"),
        precision="column",
        datasets_searched=[SOURCE],
        features=[],
        models=models,
        mcp_calls=0,
        duration_ms=0.0,
        coverage=Coverage(datasets_searched=[SOURCE], unreadable=unreadable),
    )


def entry(change: str = "dropped") -> EntryResult:
    return EntryResult(
        kind="structural",
        index=0,
        dataset=SOURCE,
        field="amount",
        change=change,  # type: ignore[arg-type]
        verdict=Verdict.INCOMPLETE,
        reasons=[],
    )


def test_every_production_model_gets_the_structural_verdict() -> None:
    found = discovery([model("fraud_detector", True), model("challenger", False)], [])
    result = judged(entry(), found, POLICY)
    assert result.verdict == Verdict.BLOCK
    (only,) = result.models
    assert [(m.name, m.verdict) for m in result.models] == [("fraud_detector", Verdict.BLOCK)]
    assert "input column amount is dropped" in only.reasons[0]
    assert result.not_tested == ["challenger: not in production (no production marker)"]
    assert result.coverage_complete is True


def test_the_policy_decides_the_verdict() -> None:
    lenient = Policy.model_validate(
        {**POLICY.model_dump(), "structural": StructuralRule(dropped=Verdict.BLOCK, renamed=Verdict.WARNING)}
    )
    found = discovery([model("fraud_detector", True)], [])
    assert judged(entry("renamed"), found, lenient).verdict == Verdict.WARNING
    assert judged(entry("dropped"), found, lenient).verdict == Verdict.BLOCK


@pytest.mark.parametrize(
    ("models", "unreadable", "verdict"),
    [
        ([], [], Verdict.PASS),  # the whole graph was read: nothing reads the column
        ([], ["lineage of X: timed out"], Verdict.INCOMPLETE),  # silence with unread lineage is never a PASS
        ([model("fraud_detector", True)], ["lineage of X: timed out"], Verdict.BLOCK),
    ],
    ids=["nothing-downstream", "unread-lineage", "blocked-and-unread"],
)
def test_coverage_counts_as_in_an_assessment(
    models: list[AffectedModel], unreadable: list[str], verdict: Verdict
) -> None:
    result = judged(entry(), discovery(models, unreadable), POLICY)
    assert result.verdict == verdict
    assert result.coverage_complete is (not unreadable)
    if unreadable:
        assert any("timed out" in reason for reason in result.reasons)


def test_unmapped_entries_are_incomplete_and_say_why() -> None:
    unmapped = UnmappedChange(file="models/t.sql", line=7, column="risk_band", reason="CASE changed; no operator fits")
    result = judge_unmapped(unmapped, 2)
    assert (result.kind, result.index, result.verdict) == ("unmapped", 2, Verdict.INCOMPLETE)
    assert result.reasons == [f"{UNMAPPED_REASON}: CASE changed; no operator fits"]
    assert result.source is not None and (result.source.file, result.source.line) == ("models/t.sql", 7)
    assert result.label == "risk_band (models/t.sql:7): not mappable"
