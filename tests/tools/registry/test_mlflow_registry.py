"""Naming a model the ways people do, and reading what `mlflow.log_input` recorded (pure parts, no store)."""

from __future__ import annotations

import json

import pytest

from tools.experiment.trust import source_uri
from tools.registry.mlflow_registry import (
    LoggedInput,
    ModelRef,
    ModelVersionInfo,
    RegistryError,
    _schema_columns,
)


def test_plain_names_are_kept_whole() -> None:
    ref = ModelRef.parse("  credit_default_1 ")
    assert (ref.name, ref.urn, ref.env) == ("credit_default_1", None, "PROD")  # the registry decides name_version


def test_datahub_urns_give_their_name_part_and_env() -> None:
    ref = ModelRef.parse("urn:li:mlModel:(urn:li:dataPlatform:mlflow,credit_default_12,DEV)")
    assert (ref.name, ref.env) == ("credit_default_12", "DEV")
    assert ref.urn == "urn:li:mlModel:(urn:li:dataPlatform:mlflow,credit_default_12,DEV)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "name the model"),
        ("urn:li:dataset:(urn:li:dataPlatform:mlflow,x,PROD)", "not an mlModel URN"),
        ("urn:li:mlModel:(urn:li:dataPlatform:sagemaker,fraud,PROD)", "sagemaker model"),
    ],
)
def test_bad_references(text: str, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        ModelRef.parse(text)


def test_the_datahub_urn_of_a_version() -> None:
    version = ModelVersionInfo("credit_default", "3", "Production", "/m", "r", {}, "")
    assert version.datahub_urn() == "urn:li:mlModel:(urn:li:dataPlatform:mlflow,credit_default_3,PROD)"
    assert version.models_uri == "models:/credit_default/3"


@pytest.mark.parametrize(
    ("source", "uri"),
    [
        (json.dumps({"uri": "/data/holdout.csv"}), "/data/holdout.csv"),  # local files, artifact repositories
        (json.dumps({"url": "https://x/holdout.csv"}), "https://x/holdout.csv"),  # HTTP
        (json.dumps({"path": "s3://b/holdout.parquet"}), "s3://b/holdout.parquet"),  # delta, HF
        (json.dumps({"tags": {"mlflow.source.name": "train.py"}}), None),  # code: no location
        ("not json", None),
        (None, None),
        ("[1]", None),
    ],
)
def test_dataset_source_locations(source: str | None, uri: str | None) -> None:
    assert source_uri(source) == uri


def test_logged_schema_columns_and_contexts() -> None:
    schema = json.dumps({"mlflow_colspec": [{"type": "double", "name": "income"}, {"type": "long", "name": "y"}]})
    assert _schema_columns(schema) == ["income", "y"]
    assert _schema_columns(None) == []
    for context, held_out in [("eval", True), ("Validation", True), (" holdout ", True), ("training", False)]:
        assert LoggedInput("d", context, "local", None).held_out is held_out
    assert not LoggedInput("d", None, "local", None).held_out
