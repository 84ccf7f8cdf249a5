"""The overall verdict's silence: PASS only when the whole graph was read and nothing depends."""

from __future__ import annotations

from policies import Verdict
from tools.catalog.coverage import Coverage, ModelReach
from tools.catalog.discovery import AffectedModel, Discovery
from tools.catalog.entity import EntitySummary
from tools.experiment.measure import every_production_model, overall

SOURCE = "urn:li:dataset:(urn:li:dataPlatform:sqlite,main.applicant_features,PROD)"


def _discovery(coverage: Coverage) -> Discovery:
    return Discovery(
        dataset_urn=SOURCE,
        field="income",
        field_type="NUMBER",
        field_native_type="REAL",
        dataset=EntitySummary(urn=SOURCE, type="DATASET"),
        precision="column",
        datasets_searched=[SOURCE],
        features=[],
        models=[],
        mcp_calls=0,
        duration_ms=0.0,
        coverage=coverage,
    )


def test_nothing_found_after_reading_everything_is_pass_and_says_so() -> None:
    verdict, reasons = overall(_discovery(Coverage(datasets_searched=[SOURCE])), [])
    assert verdict is Verdict.PASS
    assert "no production model depends on this field" in reasons[0] and "whole lineage graph was read" in reasons[0]


def test_nothing_found_with_unread_lineage_is_incomplete_never_pass() -> None:
    coverage = Coverage(datasets_searched=[SOURCE], unreadable=["downstream lineage of X: more than 200 results"])
    verdict, reasons = overall(_discovery(coverage), [])
    assert verdict is Verdict.INCOMPLETE
    assert "more than 200 results" in reasons[0]
    assert not coverage.complete and "coverage: INCOMPLETE (see 'could not read')" in coverage.lines()


def test_models_reached_but_none_in_production_are_counted_in_the_pass_reason() -> None:
    reach = ModelReach(urn="urn:li:mlModel:(x)", name="m", production=False, marker="no marker", links=["feature f"])
    verdict, reasons = overall(_discovery(Coverage(datasets_searched=[SOURCE], models_reached=[reach])), [])
    assert verdict is Verdict.PASS and "1 model(s) reached, none in production" in reasons[0]


def test_a_production_model_without_a_result_is_incomplete_never_absent() -> None:
    model = AffectedModel(
        urn="urn:li:mlModel:(urn:li:dataPlatform:mlflow,claims_severity_1,PROD)",
        name="claims_severity_1",
        production=True,
        production_evidence="global tag urn:li:tag:mlflow_production",
        features=[],
        owners=[],
        tags=[],
        custom_properties={},
        related_documents=[],
    )
    found = _discovery(Coverage(datasets_searched=[SOURCE])).model_copy(update={"models": [model]})
    models = every_production_model(found, [])
    assert [(m.urn, m.verdict, [r.code for r in m.reasons]) for m in models] == [
        (model.urn, Verdict.INCOMPLETE, ["not_measured"])
    ]
    verdict, reasons = overall(found, models)
    assert verdict is Verdict.INCOMPLETE and "claims_severity_1: INCOMPLETE" in reasons[0]
    assert every_production_model(found, models) == models  # already answered: nothing added
