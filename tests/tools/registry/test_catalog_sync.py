"""Merging binding keys into the DataHub model's customProperties in a DataHub Lite file: everything else kept."""

from __future__ import annotations

from pathlib import Path

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.lite.lite_util import get_datahub_lite
from datahub.metadata import schema_classes as m

from tools.registry.catalog_sync import lite_properties, merge_into_lite

URN = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,credit_default_1,PROD)"


def write_model(db: Path) -> None:
    lite = get_datahub_lite({"type": "sqlite", "config": {"file": str(db)}})
    lite.write(
        MetadataChangeProposalWrapper(
            entityUrn=URN,
            aspect=m.MLModelPropertiesClass(
                customProperties={"team": "risk", "provenance.label_column": "old"},
                tags=["team:risk"],
                trainingJobs=["urn:li:dataProcessInstance:abc"],
                description="the champion",
            ),
        )
    )
    lite.close()


def read_aspect(db: Path) -> m.MLModelPropertiesClass:
    lite = get_datahub_lite({"type": "sqlite", "config": {"file": str(db), "read_only": True}})
    found = lite.get(URN, aspects=["mlModelProperties"], typed=True)
    lite.close()
    assert found is not None
    aspect = found["mlModelProperties"]
    assert isinstance(aspect, m.MLModelPropertiesClass)
    return aspect


def test_keys_are_merged_and_the_rest_of_the_aspect_kept(tmp_path: Path) -> None:
    db = tmp_path / "catalog.db"
    write_model(db)
    outcome = merge_into_lite(db, URN, {"provenance.label_column": "defaulted", "provenance.artifact_uri": "/m"})
    assert outcome.written and URN in outcome.message
    aspect = read_aspect(db)
    assert aspect.customProperties == {
        "team": "risk",
        "provenance.label_column": "defaulted",
        "provenance.artifact_uri": "/m",
    }
    assert (aspect.tags, aspect.trainingJobs, aspect.description) == (
        ["team:risk"],
        ["urn:li:dataProcessInstance:abc"],
        "the champion",
    )
    assert lite_properties(db, URN) == aspect.customProperties


def test_merging_the_same_keys_twice_writes_once(tmp_path: Path) -> None:
    db = tmp_path / "catalog.db"
    write_model(db)
    assert merge_into_lite(db, URN, {"provenance.label_column": "defaulted"}).written
    again = merge_into_lite(db, URN, {"provenance.label_column": "defaulted"})
    assert not again.written and "already" in again.message


def test_a_model_not_ingested_yet_is_left_to_the_ingestion(tmp_path: Path) -> None:
    db = tmp_path / "catalog.db"
    write_model(db)
    other = URN.replace("credit_default_1", "credit_default_2")
    outcome = merge_into_lite(db, other, {"provenance.label_column": "defaulted"})
    assert not outcome.written and "ingestion" in outcome.message
    assert lite_properties(db, other) is None


def test_no_catalog_file_is_not_created(tmp_path: Path) -> None:
    db = tmp_path / "absent.db"
    outcome = merge_into_lite(db, URN, {"provenance.label_column": "defaulted"})
    assert not outcome.written and not db.exists()
    assert lite_properties(db, URN) is None
