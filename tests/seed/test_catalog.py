"""The demo catalog, written into a real DataHub Lite file and read back the way Provenance reads it."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import datahub.metadata.schema_classes as m
import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.lite.lite_local import DataHubLiteLocal
from datahub.lite.lite_util import get_datahub_lite
from datahub.metadata.urns import SchemaFieldUrn

from seed.catalog import (
    CHALLENGER_MODEL_URN,
    CONTROL_MODEL_URN,
    FEATURE_NAMES,
    FEATURE_TABLE_DATASET_URN,
    FEATURE_TABLE_URN,
    FRAUD_MODEL_URN,
    KAFKA_TOPIC_URN,
    MODEL_GROUP_URN,
    POSTGRES_TABLE_URN,
    REVIEW_MODEL_GROUP_URN,
    REVIEW_MODEL_URN,
    STATUS_TAG_URNS,
    ModelBinding,
    demo_catalog_mcps,
    feature_urn,
    write_to_lite,
)

A = TypeVar("A", bound=m._Aspect)

# DataHub Lite's own reindex calls deprecated URN helpers; that is acryl-datahub's noise, not ours.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:datahub.lite.sql_backed_lite")

FRAUD_BINDING = ModelBinding(
    artifact_uri="models/fraud_detector.joblib",
    artifact_sha256=hashlib.sha256(b"fraud_detector").hexdigest(),
    eval_data_uri="data/eval.csv",
    label_column="is_fraud",
)
MERCHANT_BINDING = ModelBinding(
    artifact_uri="/abs/models/merchant_risk_scorer.joblib",
    artifact_sha256=hashlib.sha256(b"merchant_risk_scorer").hexdigest(),
    eval_data_uri="data/eval.parquet",
    label_column="is_fraud",
)
REVIEW_BINDING = ModelBinding(
    artifact_uri="models/review_time.joblib",
    artifact_sha256=hashlib.sha256(b"review_time").hexdigest(),
    eval_data_uri="data/review_eval.csv",
    label_column="review_minutes",
    task="regression",
)


def _catalog() -> list[MetadataChangeProposalWrapper]:
    return demo_catalog_mcps(FRAUD_BINDING, MERCHANT_BINDING, REVIEW_BINDING)


def _row_stats(db: Path) -> tuple[int, int]:
    with sqlite3.connect(db) as connection:
        count, max_version = connection.execute("SELECT count(*), max(version) FROM metadata_aspect_v2").fetchone()
    return count, max_version


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DataHubLiteLocal]:
    """One catalog file shared by the read-only tests (writing it is the slow part)."""
    db = tmp_path_factory.mktemp("catalog") / "catalog.db"
    write_to_lite(_catalog(), db)
    reader = get_datahub_lite({"type": "sqlite", "config": {"file": str(db), "read_only": True}})
    yield reader
    reader.close()


def _aspect(lite: DataHubLiteLocal, urn: str, aspect_class: type[A]) -> A:
    entity = lite.get(urn, aspects=[aspect_class.ASPECT_NAME], typed=True)
    assert entity is not None, f"{urn} has no {aspect_class.ASPECT_NAME}"
    aspect = entity[aspect_class.ASPECT_NAME]
    assert isinstance(aspect, aspect_class)
    return aspect


@pytest.mark.parametrize(
    "urn",
    [
        KAFKA_TOPIC_URN,
        POSTGRES_TABLE_URN,
        FEATURE_TABLE_DATASET_URN,
        FEATURE_TABLE_URN,
        FRAUD_MODEL_URN,
        CONTROL_MODEL_URN,
        CHALLENGER_MODEL_URN,
        REVIEW_MODEL_URN,
        MODEL_GROUP_URN,
        REVIEW_MODEL_GROUP_URN,
        *STATUS_TAG_URNS.values(),
        *(feature_urn(name) for name in FEATURE_NAMES),
    ],
)
def test_every_named_entity_exists(lite: DataHubLiteLocal, urn: str) -> None:
    assert lite.get(urn, aspects=None) is not None


def test_amount_reaches_txn_amount_through_an_identity_edge(lite: DataHubLiteLocal) -> None:
    lineage = _aspect(lite, FEATURE_TABLE_DATASET_URN, m.UpstreamLineageClass)
    amount = str(SchemaFieldUrn(POSTGRES_TABLE_URN, "amount"))
    txn_amount = str(SchemaFieldUrn(FEATURE_TABLE_DATASET_URN, "txn_amount"))

    edges = [edge for edge in lineage.fineGrainedLineages or [] if amount in (edge.upstreams or [])]

    assert [(edge.downstreams, edge.transformOperation) for edge in edges] == [([txn_amount], "IDENTITY")]
    assert [upstream.dataset for upstream in lineage.upstreams] == [POSTGRES_TABLE_URN]


def test_postgres_table_is_fed_column_for_column_by_kafka(lite: DataHubLiteLocal) -> None:
    lineage = _aspect(lite, POSTGRES_TABLE_URN, m.UpstreamLineageClass)
    schema = _aspect(lite, POSTGRES_TABLE_URN, m.SchemaMetadataClass)

    pairs = {
        (edge.upstreams[0], edge.downstreams[0], edge.transformOperation)
        for edge in lineage.fineGrainedLineages or []
        if edge.upstreams and edge.downstreams
    }

    assert pairs == {
        (
            str(SchemaFieldUrn(KAFKA_TOPIC_URN, f.fieldPath)),
            str(SchemaFieldUrn(POSTGRES_TABLE_URN, f.fieldPath)),
            "IDENTITY",
        )
        for f in schema.fields
    }
    amount = next(f for f in schema.fields if f.fieldPath == "amount")
    assert (amount.nativeDataType, amount.description) == ("numeric(12,2)", "Transaction amount in US dollars")


def test_fraud_detector_consumes_txn_amount_and_carries_its_binding(lite: DataHubLiteLocal) -> None:
    props = _aspect(lite, FRAUD_MODEL_URN, m.MLModelPropertiesClass)

    assert feature_urn("txn_amount") in (props.mlFeatures or [])
    assert props.groups == [MODEL_GROUP_URN]
    assert props.customProperties == {
        "provenance.artifact_uri": FRAUD_BINDING.artifact_uri,
        "provenance.artifact_sha256": FRAUD_BINDING.artifact_sha256,
        "provenance.eval_data_uri": FRAUD_BINDING.eval_data_uri,
        "provenance.label_column": FRAUD_BINDING.label_column,
        "mlflow.stage": "Production",
    }


def test_control_model_never_uses_the_amount(lite: DataHubLiteLocal) -> None:
    props = _aspect(lite, CONTROL_MODEL_URN, m.MLModelPropertiesClass)

    assert feature_urn("txn_amount") not in (props.mlFeatures or [])
    assert props.customProperties["provenance.artifact_uri"] == MERCHANT_BINDING.artifact_uri


def test_review_time_regressor_consumes_txn_amount_and_names_its_task(lite: DataHubLiteLocal) -> None:
    props = _aspect(lite, REVIEW_MODEL_URN, m.MLModelPropertiesClass)

    assert feature_urn("txn_amount") in (props.mlFeatures or [])
    assert props.groups == [REVIEW_MODEL_GROUP_URN]
    assert props.customProperties == {
        "provenance.artifact_uri": REVIEW_BINDING.artifact_uri,
        "provenance.artifact_sha256": REVIEW_BINDING.artifact_sha256,
        "provenance.eval_data_uri": REVIEW_BINDING.eval_data_uri,
        "provenance.label_column": "review_minutes",
        "provenance.task": "regression",
        "mlflow.stage": "Production",
    }


def test_only_the_three_bound_models_are_production(lite: DataHubLiteLocal) -> None:
    def tags(urn: str) -> list[str]:
        return _aspect(lite, urn, m.MLModelPropertiesClass).tags or []

    assert "production" in tags(FRAUD_MODEL_URN)
    assert "production" in tags(CONTROL_MODEL_URN)
    assert "production" in tags(REVIEW_MODEL_URN)
    assert "production" not in tags(CHALLENGER_MODEL_URN)
    challenger = _aspect(lite, CHALLENGER_MODEL_URN, m.MLModelPropertiesClass)
    assert feature_urn("txn_amount") in (challenger.mlFeatures or [])
    assert not any(key.startswith("provenance.") for key in challenger.customProperties)


def test_status_tag_entities_exist_with_their_names(lite: DataHubLiteLocal) -> None:
    names = {verdict: _aspect(lite, urn, m.TagPropertiesClass).name for verdict, urn in STATUS_TAG_URNS.items()}

    assert names == {verdict: f"provenance:{verdict}" for verdict in ("PASS", "WARNING", "BLOCK", "INCOMPLETE")}


def test_writing_the_catalog_again_adds_no_rows_or_versions(tmp_path: Path) -> None:
    catalog_db = tmp_path / "catalog.db"
    write_to_lite(_catalog(), catalog_db)
    before = _row_stats(catalog_db)

    write_to_lite(_catalog(), catalog_db)

    assert _row_stats(catalog_db) == before
    assert before[1] == 1  # one version per aspect: nothing in the catalog was written twice


def test_write_to_lite_leaves_the_callers_mcps_untouched(tmp_path: Path) -> None:
    mcps = _catalog()

    write_to_lite(mcps, tmp_path / "nested" / "catalog.db")

    assert mcps == _catalog()


def test_demo_catalog_is_deterministic() -> None:
    assert _catalog() == _catalog()


def test_catalog_is_upserts_with_referenced_entities_first() -> None:
    mcps = _catalog()
    seen: set[str] = set()
    for mcp in mcps:
        assert mcp.changeType == m.ChangeTypeClass.UPSERT
        assert mcp.entityUrn is not None
        for reference in _references(mcp.aspect):
            assert reference in seen or reference == mcp.entityUrn, f"{mcp.entityUrn} refers to {reference} first"
        seen.add(mcp.entityUrn)


def _references(aspect: m._Aspect | None) -> list[str]:
    """Entity URNs an aspect points at (owners, tags, lineage, features, groups)."""
    if isinstance(aspect, m.OwnershipClass):
        return [owner.owner for owner in aspect.owners]
    if isinstance(aspect, m.GlobalTagsClass):
        return [association.tag for association in aspect.tags]
    if isinstance(aspect, m.UpstreamLineageClass):
        return [upstream.dataset for upstream in aspect.upstreams]
    if isinstance(aspect, m.MLFeaturePropertiesClass):
        return list(aspect.sources or [])
    if isinstance(aspect, m.MLFeatureTablePropertiesClass):
        return list(aspect.mlFeatures or [])
    if isinstance(aspect, m.MLModelPropertiesClass):
        return [*(aspect.mlFeatures or []), *(aspect.groups or [])]
    return []


@pytest.mark.parametrize(
    "changes",
    [{"artifact_sha256": "deadbeef"}, {"artifact_sha256": "A" * 64}, {"artifact_uri": ""}, {"label_column": ""}],
)
def test_model_binding_rejects_malformed_values(changes: dict[str, str]) -> None:
    values = {**vars(FRAUD_BINDING), **changes}

    with pytest.raises(ValueError, match="ModelBinding"):
        ModelBinding(**values)
