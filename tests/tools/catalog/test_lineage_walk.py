"""Column-precise discovery over the real MCP server and the seeded demo catalog."""

from __future__ import annotations

import pytest

from seed.catalog import (
    CHALLENGER_MODEL_URN,
    CONTROL_MODEL_URN,
    FEATURE_TABLE_DATASET_URN,
    FRAUD_MODEL_URN,
    KAFKA_TOPIC_URN,
    POSTGRES_TABLE_URN,
    REVIEW_MODEL_URN,
    feature_urn,
)
from tests.shared_catalog import SharedCatalog
from tools.catalog.conventions import load_conventions
from tools.catalog.discovery import Discovery
from tools.catalog.entity import EntitySummary
from tools.catalog.lineage_walk import Discoverer
from tools.catalog.production import AspectMarkers, production_marker
from tools.catalog.resolve import CatalogInputError


def _discover(catalog: SharedCatalog, dataset: str, field: str) -> Discovery:
    return catalog.run(lambda reader: Discoverer(reader).discover(dataset, field))


def test_postgres_amount_reaches_both_amount_models_but_never_the_control(shared_catalog: SharedCatalog) -> None:
    found = _discover(shared_catalog, POSTGRES_TABLE_URN, "amount")
    assert found.precision == "column"
    assert [m.urn for m in found.production_models] == [FRAUD_MODEL_URN, REVIEW_MODEL_URN]
    assert [m.urn for m in found.other_models] == [CHALLENGER_MODEL_URN]
    assert CONTROL_MODEL_URN not in [m.urn for m in found.models]
    for model in found.production_models:  # the classifier and the regressor share the renamed feature
        feature = model.features[0]
        assert feature.urn == feature_urn("txn_amount")
        assert [(s.dataset_urn, s.column, s.transform) for s in feature.path] == [
            (POSTGRES_TABLE_URN, "amount", None),
            (FEATURE_TABLE_DATASET_URN, "txn_amount", "IDENTITY"),
        ]
        assert feature.non_identity_transforms == []
    # 10 as before, plus one search that finds no dbt node (so no sibling is looked for), plus one search per column
    # reached (amount, txn_amount) for mlFeatures of its name whose source the catalog may record as unknown, plus
    # one read of the SQL of the datasets one hop downstream (a WHERE or JOIN on amount reaches columns no edge names)
    assert found.mcp_calls <= 14


def test_kafka_amount_reaches_the_same_model_over_more_hops(shared_catalog: SharedCatalog) -> None:
    found = _discover(shared_catalog, KAFKA_TOPIC_URN, "amount")
    assert [m.urn for m in found.production_models] == [FRAUD_MODEL_URN, REVIEW_MODEL_URN]
    for model in found.production_models:
        path = model.features[0].path
        assert [s.dataset_urn for s in path] == [KAFKA_TOPIC_URN, POSTGRES_TABLE_URN, FEATURE_TABLE_DATASET_URN]


def test_a_field_used_by_the_control_finds_both_production_models(shared_catalog: SharedCatalog) -> None:
    found = _discover(shared_catalog, POSTGRES_TABLE_URN, "account_age_days")
    assert {m.urn for m in found.production_models} == {FRAUD_MODEL_URN, CONTROL_MODEL_URN}


def test_unknown_field_names_the_closest_matches(shared_catalog: SharedCatalog) -> None:
    with pytest.raises(CatalogInputError, match="Closest matches: amount"):
        _discover(shared_catalog, POSTGRES_TABLE_URN, "amout")


def test_unknown_dataset_names_the_closest_matches(shared_catalog: SharedCatalog) -> None:
    with pytest.raises(CatalogInputError, match=r"payments\.public\.transactions"):
        _discover(shared_catalog, POSTGRES_TABLE_URN.replace("transactions", "transaction"), "amount")


@pytest.mark.parametrize(
    ("tags", "props", "expected"),
    [
        (["urn:li:tag:production"], {}, True),
        (["urn:li:tag:Production"], {}, True),
        ([], {"mlflow.stage": "Production"}, True),
        ([], {"mlflow.aliases": "champion, production"}, True),
        ([], {"provenance.aliases": "champion"}, True),  # written by `provenance bind` as a version tag
        ([], {"provenance.aliases": "challenger"}, False),
        ([], {"mlflow.stage": "champion"}, False),  # an alias name is not a stage
        (["urn:li:tag:mlflow_none"], {}, False),  # an alias-only model as DataHub's mlflow source tags it
        ([], {"mlflow.stage": "Staging"}, False),
        (["urn:li:tag:provenance:PASS"], {}, False),
        (["urn:li:tag:mlflow_production"], {}, True),  # DataHub's mlflow source: <platform>_<stage>
        (["urn:li:tag:mlflow_staging"], {}, False),
        (["urn:li:tag:feast_production"], {}, False),  # another platform's stage tag
    ],
)
def test_production_status(tags: list[str], props: dict[str, str], expected: bool) -> None:
    entity = EntitySummary(
        urn="urn:li:mlModel:(urn:li:dataPlatform:mlflow,x,PROD)", type="MLMODEL", tags=tags, custom_properties=props
    )
    marker = production_marker(entity, load_conventions().production)
    assert (marker is not None) is expected


MLFLOW_MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,claims_fraud_1,PROD)"


@pytest.mark.parametrize(
    ("read", "expected"),
    [
        (AspectMarkers(aliases=["champion"]), "versionProperties.aliases contains champion"),
        (AspectMarkers(aliases=["Challenger"]), None),
        (AspectMarkers(property_tags=["production"]), "mlModelProperties.tags contains 'production'"),
        (
            AspectMarkers(registry_where="MLflow registry at x: claims_fraud version 1", registry_aliases=["champion"]),
            "MLflow registry at x: claims_fraud version 1 has alias champion",
        ),
        (
            AspectMarkers(registry_where="MLflow registry at x: m version 1", registry_stage="Production"),
            "MLflow registry at x: m version 1 is in stage Production",
        ),
        # the registry says nothing that marks it, and the catalog says nothing either
        (AspectMarkers(registry_where="MLflow registry at x: m version 1", registry_stage="None"), None),
    ],
)
def test_aliases_and_the_registry_mark_production(read: AspectMarkers, expected: str | None) -> None:
    entity = EntitySummary(urn=MLFLOW_MODEL, type="MLMODEL", tags=["urn:li:tag:mlflow_none"])
    assert production_marker(entity, load_conventions().production, read) == expected


def test_a_stale_catalog_marker_still_counts_when_the_registry_is_silent() -> None:
    entity = EntitySummary(urn=MLFLOW_MODEL, type="MLMODEL", tags=["urn:li:tag:mlflow_production"])
    read = AspectMarkers(registry_where="MLflow registry at x: m version 1", registry_stage="Archived")
    assert production_marker(entity, load_conventions().production, read) == "global tag urn:li:tag:mlflow_production"
