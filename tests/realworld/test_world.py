"""The real world is what DataHub's own ingestion sources write: these tests pin the facts discovery relies on."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from tests.realworld.world import (
    CHALLENGER_FEATURES,
    CHAMPION_FEATURES,
    RealWorld,
    catalog_contents,
    ingest_mlflow,
    mlflow_client,
    read_aspect,
)

pytestmark = pytest.mark.slow


def aspect(world: RealWorld, urn: str, name: str) -> dict[str, Any]:
    found = read_aspect(world.catalog_db, urn, name)
    assert found is not None, f"{name} of {urn} is missing"
    return found


def field_urn(dataset: str, field: str) -> str:
    return f"urn:li:schemaField:({dataset},{field})"


def test_sqlalchemy_source_wrote_both_tables_with_their_columns(real_world: RealWorld) -> None:
    fields = {
        urn: [f["fieldPath"] for f in aspect(real_world, urn, "schemaMetadata")["fields"]]
        for urn in (real_world.raw_table_urn, real_world.feature_table_urn)
    }
    assert fields[real_world.raw_table_urn] == [
        "applicant_id",
        "income",
        "loan_amount",
        "debt",
        "employment_years",
        "region",
        "defaulted",
    ]
    assert fields[real_world.feature_table_urn] == [
        "applicant_id",
        "income",
        "loan_amount",
        "debt_to_income",
        "employment_years",
        "region",
        "defaulted",
    ]


def test_sql_queries_source_wrote_column_lineage_with_copy_and_sql_transforms(real_world: RealWorld) -> None:
    lineage = aspect(real_world, real_world.feature_table_urn, "upstreamLineage")
    assert [u["dataset"] for u in lineage["upstreams"]] == [real_world.raw_table_urn]
    by_downstream = {
        edge["downstreams"][0].rsplit(",", 1)[1].rstrip(")"): edge for edge in lineage["fineGrainedLineages"]
    }
    raw, features = real_world.raw_table_urn, real_world.feature_table_urn
    for column in ("income", "loan_amount", "employment_years", "region"):
        edge = by_downstream[column]
        assert edge["upstreams"] == [field_urn(raw, column)]
        assert edge["downstreams"] == [field_urn(features, column)]
        assert edge["transformOperation"] == f'COPY: "loan_applications"."{column}" AS "{column}"'
    computed = by_downstream["debt_to_income"]
    assert sorted(computed["upstreams"]) == [field_urn(raw, "debt"), field_urn(raw, "income")]
    assert computed["transformOperation"] == (
        'SQL: "loan_applications"."debt" / "loan_applications"."income" AS "debt_to_income"'
    )


def test_mlflow_source_tags_models_by_stage(real_world: RealWorld) -> None:
    for model, tag in (
        (real_world.champion, "urn:li:tag:mlflow_production"),
        (real_world.challenger, "urn:li:tag:mlflow_staging"),
    ):
        assert model.stage_tag_urn == tag
        assert aspect(real_world, model.urn, "globalTags") == {"tags": [{"tag": tag}]}
    assert aspect(real_world, "urn:li:tag:mlflow_production", "tagProperties")["name"] == "mlflow_production"


def test_model_properties_carry_version_tags_group_and_training_run(real_world: RealWorld) -> None:
    champion = aspect(real_world, real_world.champion.urn, "mlModelProperties")
    assert champion["customProperties"] == {"team": "risk"}
    assert champion["tags"] == ["team:risk"]
    assert champion["groups"] == [real_world.champion.group_urn]
    assert champion["trainingJobs"] == [real_world.champion.run_urn]
    assert "mlFeatures" not in champion
    challenger = aspect(real_world, real_world.challenger.urn, "mlModelProperties")
    assert challenger["customProperties"] == {}
    assert challenger["trainingJobs"] == [real_world.challenger.run_urn]


def test_training_run_links_logged_datasets_to_the_model(real_world: RealWorld) -> None:
    for model in real_world.models:
        inputs = aspect(real_world, model.run_urn, "dataProcessInstanceInput")
        assert [e["destinationUrn"] for e in inputs["inputEdges"]] == [
            real_world.mlflow_dataset_urn,
            real_world.holdout_dataset_urn,
        ]
        outputs = aspect(real_world, model.run_urn, "dataProcessInstanceOutput")
        assert [e["destinationUrn"] for e in outputs["outputEdges"]] == [model.urn]
        run = aspect(real_world, model.run_urn, "mlTrainingRunProperties")
        assert run["id"] == model.run_id
        assert run["outputUrls"] == [model.artifact_uri]
        assert model.artifact_path.parent.parent.as_uri() == model.artifact_uri


def test_mlflow_dataset_has_the_logged_frame_schema_and_no_warehouse_link(real_world: RealWorld) -> None:
    urn = real_world.mlflow_dataset_urn
    assert urn == "urn:li:dataset:(urn:li:dataPlatform:mlflow,main.applicant_features,PROD)"
    schema = aspect(real_world, urn, "schemaMetadata")
    assert [(f["fieldPath"], f["nativeDataType"]) for f in schema["fields"]] == [
        ("applicant_id", "long"),
        ("income", "double"),
        ("loan_amount", "double"),
        ("debt_to_income", "double"),
        ("employment_years", "double"),
        ("region", "string"),
        ("defaulted", "long"),
    ]
    assert aspect(real_world, urn, "datasetProperties")["customProperties"] == {"mlflow.data.context": "training"}
    assert read_aspect(real_world.catalog_db, urn, "upstreamLineage") is None  # a local CSV source: no lineage


def test_what_the_sources_do_not_write(real_world: RealWorld) -> None:
    contents = catalog_contents(real_world.catalog_db)
    assert not [urn for urn in contents if urn.startswith("urn:li:mlFeature")]
    # MLflow knows the alias, DataHub's source (MLflow 2.20, search_model_versions) does not carry it over.
    client = mlflow_client(real_world)
    assert str(client.get_model_version_by_alias(real_world.champion.name, "champion").version) == "1"
    assert aspect(real_world, real_world.champion.urn, "versionProperties")["aliases"] == []
    # The MLflow signature stays in the artifact's MLmodel file; no aspect mentions it.
    assert "signature:" in real_world.champion.mlmodel_path.read_text()
    with sqlite3.connect(real_world.catalog_db) as conn:
        assert conn.execute("SELECT count(*) FROM metadata_aspect_v2 WHERE metadata LIKE '%signature%'").fetchone() == (
            0,
        )
    conn.close()


def test_pickles_load_and_name_their_columns(real_world: RealWorld) -> None:
    champion = joblib.load(real_world.champion.artifact_path)
    challenger = joblib.load(real_world.challenger.artifact_path)
    assert hasattr(champion, "predict_proba")
    assert tuple(champion.feature_names_in_) == CHAMPION_FEATURES
    assert "debt_to_income" not in champion.feature_names_in_
    assert tuple(challenger.feature_names_in_) == CHALLENGER_FEATURES


def test_income_in_cents_wrecks_the_production_model(real_world: RealWorld) -> None:
    holdout = pd.read_csv(real_world.holdout_csv)
    assert len(holdout) == 1800
    model = joblib.load(real_world.champion.artifact_path)
    features = list(CHAMPION_FEATURES)
    baseline = model.predict_proba(holdout[features])[:, 1]
    mutated_frame = holdout[features].copy()
    mutated_frame["income"] = mutated_frame["income"] * 100
    mutated = model.predict_proba(mutated_frame)[:, 1]
    label = holdout[real_world.label_column]
    flip_rate = float(np.mean((baseline >= 0.5) != (mutated >= 0.5)))
    auc, auc_mutated = roc_auc_score(label, baseline), roc_auc_score(label, mutated)
    assert auc == pytest.approx(real_world.champion.holdout_auc)
    assert auc > 0.8
    assert flip_rate > 0.2
    assert auc - auc_mutated > 0.1


def test_copy_is_independent_and_reingestion_reads_new_mlflow_tags(
    real_world: RealWorld, real_world_copy: RealWorld
) -> None:
    copy = real_world_copy
    assert copy.dir != real_world.dir
    assert copy.champion.artifact_path.is_file() and copy.champion.artifact_path.is_relative_to(copy.dir)
    client = mlflow_client(copy)
    version = client.get_model_version(copy.champion.name, copy.champion.version)
    assert version.source.startswith(copy.artifact_root.as_uri())
    client.set_model_version_tag(copy.champion.name, copy.champion.version, "provenance.label_column", "defaulted")

    ingest_mlflow(copy)

    props = aspect(copy, copy.champion.urn, "mlModelProperties")
    assert props["customProperties"] == {"team": "risk", "provenance.label_column": "defaulted"}
    assert aspect(copy, copy.champion.run_urn, "mlTrainingRunProperties")["outputUrls"] == [copy.champion.artifact_uri]
    assert aspect(real_world, real_world.champion.urn, "mlModelProperties")["customProperties"] == {"team": "risk"}
    assert not (copy.dir.parent / "mlruns").exists()  # MLflow's default ./mlruns went into the world's folder


def test_world_files_are_where_the_world_says(real_world: RealWorld) -> None:
    for path in (real_world.catalog_db, real_world.warehouse_db, real_world.mlflow_db, real_world.query_file):
        assert path.is_file() and path.is_relative_to(real_world.dir)
    queries = [json.loads(line) for line in real_world.query_file.read_text().splitlines()]
    assert [q["query"].split(" SELECT ")[0] for q in queries] == ["INSERT INTO applicant_features"]
    train, holdout = pd.read_csv(real_world.train_csv), pd.read_csv(real_world.holdout_csv)
    assert len(train) + len(holdout) == 6000
    assert set(train["applicant_id"]).isdisjoint(holdout["applicant_id"])
    assert set(holdout[real_world.label_column]) == {0, 1}


def test_embedded_endpoint_serves_the_world(real_world_copy: RealWorld) -> None:
    from urllib.parse import quote

    from tools.embedded.server import embedded_catalog

    world = real_world_copy
    with embedded_catalog(world.catalog_db) as running:
        income = field_urn(world.raw_table_urn, "income")
        assert field_urn(world.feature_table_urn, "income") in running.gms.store.index.neighbours(
            income, "DOWNSTREAM", "field"
        )
        found = running.gms.get(f"/aspects/{quote(world.champion.urn)}", {"aspect": ["mlModelProperties"]})
        assert found["aspect"]["com.linkedin.ml.metadata.MLModelProperties"]["trainingJobs"] == [world.champion.run_urn]
