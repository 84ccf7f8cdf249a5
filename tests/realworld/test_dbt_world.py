"""The dbt world is what PostgreSQL, the dbt CLI, MLflow and DataHub's own postgres, dbt and mlflow sources write:
these tests pin the facts discovery on a dbt stack relies on, in both catalog variants (lite sink, rest sink)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import joblib
import numpy as np
import pandas as pd
import psycopg
import pytest

from tests.realworld.dbt_world import (
    BUCKETS,
    DBT_SCHEMA,
    FEATURE_COLUMNS,
    FEATURES,
    PROJECT_SOURCE,
    RAW_COLUMNS,
    ROWS,
    STAGING,
    STAGING_COLUMNS,
    CatalogVariant,
    DbtWorld,
    field_urn,
    mlflow_client,
)
from tests.realworld.world import catalog_contents, read_aspect

pytestmark = pytest.mark.slow

LITE_PATCH_REFUSAL = (
    "datahub-local does not support <class 'datahub.metadata._internal_schema_classes.MetadataChangeProposalClass'>"
)


def aspect(variant: CatalogVariant, urn: str, name: str) -> dict[str, Any]:
    found = read_aspect(variant.catalog_db, urn, name)
    assert found is not None, f"{name} of {urn} is missing in the {variant.name} catalog"
    return found


def column(field: str) -> str:
    return field.rsplit(",", 1)[1].rstrip(")")


def edges_by_downstream(lineage: dict[str, Any], upstream_platform: str | None = None) -> dict[str, dict[str, Any]]:
    """The fine-grained edges by downstream column (only those from ``upstream_platform``, when given)."""
    found: dict[str, dict[str, Any]] = {}
    for edge in lineage["fineGrainedLineages"]:
        if upstream_platform and f"dataPlatform:{upstream_platform}," not in edge["upstreams"][0]:
            continue
        (downstream,) = edge["downstreams"]
        assert column(downstream) not in found, f"two edges into {downstream}"
        found[column(downstream)] = edge
    return found


def fields(variant: CatalogVariant, urn: str) -> list[str]:
    return [f["fieldPath"] for f in aspect(variant, urn, "schemaMetadata")["fields"]]


@pytest.fixture(params=["lite", "rest"])
def variant(request: pytest.FixtureRequest, dbt_world: DbtWorld) -> CatalogVariant:
    chosen: CatalogVariant = getattr(dbt_world, request.param)
    return chosen


# ---------------------------------------------------------------------------------------------------- the warehouse
def test_dbt_built_the_view_and_table_the_sql_says(dbt_world: DbtWorld) -> None:
    with psycopg.connect(dbt_world.postgres_url) as conn:
        kinds = dict(
            conn.execute(
                "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = %s",
                (DBT_SCHEMA,),
            ).fetchall()
        )
        buckets = dict(
            conn.execute(
                f"SELECT category_bucket, string_agg(DISTINCT category, ',' ORDER BY category) "
                f"FROM {DBT_SCHEMA}.{FEATURES} GROUP BY 1"
            ).fetchall()
        )
        regions = dict(conn.execute(f"SELECT region, count(*) FROM {DBT_SCHEMA}.{FEATURES} GROUP BY 1").fetchall())
        bad_rounding = conn.execute(
            f"SELECT count(*) FROM {DBT_SCHEMA}.{FEATURES} WHERE amount_rounded <> round(claim_amount, -2) "
            "OR abs(amount_ratio - claim_amount / insured_value) > 1e-12 OR abs(log_amount - ln(claim_amount)) > 1e-12"
        ).fetchone()
        raw_nulls = conn.execute("SELECT count(*) FROM raw.claims WHERE region IS NULL").fetchone()
    assert kinds == {STAGING: "VIEW", FEATURES: "BASE TABLE"}
    # 'c' is alone in its bucket (a remap c -> x maps mid -> bucket(x) exactly); 'a' shares 'low' with 'b' (a remap
    # a -> c moves only part of 'low': no remap of whole buckets expresses it).
    assert buckets == {"low": "a,b", "mid": "c", "high": "d,e,f"}
    assert {c for c, b in BUCKETS.items() if b == "mid"} == {"c"}
    assert set(regions) == {"north", "south", "east", "west", "unknown"}
    assert raw_nulls is not None and regions["unknown"] == raw_nulls[0] > 0  # the COALESCE did something
    assert bad_rounding == (0,)
    manifest = json.loads(dbt_world.manifest_path.read_text())
    assert manifest["metadata"]["dbt_version"] == dbt_world.dbt_version
    assert dbt_world.dbt_version.startswith("1.10.")
    catalog = json.loads(dbt_world.catalog_path.read_text())
    assert set(catalog["nodes"]) == {"model.claims.stg_claims", "model.claims.claim_features"}
    assert set(catalog["sources"]) == {"source.claims.raw.claims"}


# ---------------------------------------------------------------------------------------------------- entities
def test_dbt_nodes_and_postgres_tables_share_names(dbt_world: DbtWorld, variant: CatalogVariant) -> None:
    db = dbt_world.database
    pairs = (
        (dbt_world.dbt_source_urn, dbt_world.raw_table_urn, f"{db}.raw.claims", "Source", "Table", RAW_COLUMNS),
        (dbt_world.dbt_staging_urn, dbt_world.staging_view_urn, f"{db}.{DBT_SCHEMA}.{STAGING}", "Model", "View")
        + (STAGING_COLUMNS,),
        (dbt_world.dbt_features_urn, dbt_world.feature_table_urn, f"{db}.{DBT_SCHEMA}.{FEATURES}", "Model", "Table")
        + (FEATURE_COLUMNS,),
    )
    for dbt_urn, table_urn, name, dbt_type, table_type, columns in pairs:
        assert dbt_urn == f"urn:li:dataset:(urn:li:dataPlatform:dbt,{name},PROD)"
        assert table_urn == f"urn:li:dataset:(urn:li:dataPlatform:postgres,{name},PROD)"
        assert aspect(variant, dbt_urn, "dataPlatformInstance")["platform"] == "urn:li:dataPlatform:dbt"
        assert aspect(variant, dbt_urn, "subTypes") == {"typeNames": [dbt_type]}
        assert aspect(variant, table_urn, "subTypes") == {"typeNames": [table_type]}
        assert fields(variant, dbt_urn) == fields(variant, table_urn) == list(columns)
    contents = catalog_contents(variant.catalog_db)
    datasets = {urn for urn in contents if urn.startswith("urn:li:dataset:")}
    assert datasets == {
        dbt_world.raw_table_urn,
        dbt_world.staging_view_urn,
        dbt_world.feature_table_urn,
        dbt_world.dbt_source_urn,
        dbt_world.dbt_staging_urn,
        dbt_world.dbt_features_urn,
        dbt_world.mlflow_dataset_urn,
        dbt_world.holdout_dataset_urn,
    }


def test_dbt_nodes_hold_raw_sql_in_view_logic_and_compiled_sql_formatted(
    dbt_world: DbtWorld, variant: CatalogVariant
) -> None:
    from datahub.sql_parsing.sqlglot_utils import try_format_query

    manifest = json.loads(dbt_world.manifest_path.read_text())
    for urn, unique_id, path, materialized in (
        (dbt_world.dbt_staging_urn, "model.claims.stg_claims", "models/staging/stg_claims.sql", False),
        (dbt_world.dbt_features_urn, "model.claims.claim_features", "models/features/claim_features.sql", True),
    ):
        node = manifest["nodes"][unique_id]
        view = aspect(variant, urn, "viewProperties")
        assert set(view) == {"materialized", "viewLogic", "formattedViewLogic", "viewLanguage"}
        assert view["materialized"] is materialized and view["viewLanguage"] == "SQL"
        # viewLogic: the model file as written (Jinja and all); formattedViewLogic: the compiled SQL, re-formatted
        assert view["viewLogic"] == node["raw_code"] == (PROJECT_SOURCE / path).read_text().rstrip("\n")
        assert "{{" in view["viewLogic"]
        assert view["formattedViewLogic"] == try_format_query(node["compiled_code"], platform="postgres")
        assert view["formattedViewLogic"] != node["compiled_code"]
        assert "{{" not in view["formattedViewLogic"]
        props = aspect(variant, urn, "datasetProperties")["customProperties"]
        assert props["dbt_file_path"] == path and props["dbt_unique_id"] == unique_id
        assert not [k for k, v in props.items() if "select" in v.lower()], "no SQL in customProperties"
    features_sql = aspect(variant, dbt_world.dbt_features_urn, "viewProperties")["formattedViewLogic"]
    assert 'FROM "dbt_warehouse"."analytics"."stg_claims"' in features_sql
    assert "ROUND(claim_amount, -2) AS amount_rounded" in features_sql
    assert "COALESCE(region, 'unknown') AS region" in features_sql
    assert "WHEN category IN ('a', 'b')\n    THEN 'low'" in features_sql
    staging_props = aspect(variant, dbt_world.dbt_staging_urn, "datasetProperties")["customProperties"]
    assert staging_props["materialization"] == "view" and staging_props["node_type"] == "model"
    source_props = aspect(variant, dbt_world.dbt_source_urn, "datasetProperties")["customProperties"]
    assert source_props["node_type"] == "source" and "materialization" not in source_props
    assert read_aspect(variant.catalog_db, dbt_world.dbt_source_urn, "viewProperties") is None


def test_postgres_view_holds_its_definition_and_the_table_none(dbt_world: DbtWorld, variant: CatalogVariant) -> None:
    with psycopg.connect(dbt_world.postgres_url) as conn:
        row = conn.execute(f"SELECT pg_get_viewdef('{DBT_SCHEMA}.{STAGING}'::regclass)").fetchone()
    assert row is not None
    definition = row[0]
    view = aspect(variant, dbt_world.staging_view_urn, "viewProperties")
    assert view == {"materialized": False, "viewLogic": definition, "viewLanguage": "SQL"}
    assert "(claims.insured_value)::double precision AS insured_value" in definition
    props = aspect(variant, dbt_world.staging_view_urn, "datasetProperties")["customProperties"]
    assert props == {"is_view": "True", "view_definition": definition}
    for table in (dbt_world.raw_table_urn, dbt_world.feature_table_urn):
        assert read_aspect(variant.catalog_db, table, "viewProperties") is None
        assert aspect(variant, table, "datasetProperties")["customProperties"] == {}
    # the view's parsed statement is a query entity of its own
    queries = [urn for urn in catalog_contents(variant.catalog_db) if urn.startswith("urn:li:query:view_")]
    assert len(queries) == 1
    statement = aspect(variant, queries[0], "queryProperties")["statement"]
    assert statement["language"] == "SQL"
    assert "CAST((\n    claims.insured_value\n  ) AS DOUBLE PRECISION) AS insured_value" in statement["value"]


# ---------------------------------------------------------------------------------------------------- lineage
def test_dbt_feature_node_lineage_reads_the_built_view_and_carries_no_transforms(
    dbt_world: DbtWorld, variant: CatalogVariant
) -> None:
    lineage = aspect(variant, dbt_world.dbt_features_urn, "upstreamLineage")
    assert [(u["dataset"], u["type"]) for u in lineage["upstreams"]] == [(dbt_world.staging_view_urn, "TRANSFORMED")]
    edges = edges_by_downstream(lineage)
    expected = {c: [c] for c in FEATURE_COLUMNS}
    expected.update(
        amount_ratio=["claim_amount", "insured_value"],
        log_amount=["claim_amount"],
        amount_rounded=["claim_amount"],
        category_bucket=["category"],
    )
    assert {c: sorted(column(u) for u in e["upstreams"]) for c, e in edges.items()} == expected
    for name, edge in edges.items():
        assert edge["downstreams"] == [field_urn(dbt_world.dbt_features_urn, name)]
        assert all(u.startswith(f"urn:li:schemaField:({dbt_world.staging_view_urn},") for u in edge["upstreams"])
        assert "transformOperation" not in edge, edge  # not even for a / b, ln, round, CASE or COALESCE
        assert edge["confidenceScore"] == 0.9


def test_dbt_staging_node_reads_the_dbt_source_node_which_copies_the_raw_table(
    dbt_world: DbtWorld, variant: CatalogVariant
) -> None:
    staging = aspect(variant, dbt_world.dbt_staging_urn, "upstreamLineage")
    assert [(u["dataset"], u["type"]) for u in staging["upstreams"]] == [(dbt_world.dbt_source_urn, "TRANSFORMED")]
    edges = edges_by_downstream(staging)
    renamed = {"claim_amount": "amount"}
    assert {c: [column(u) for u in e["upstreams"]] for c, e in edges.items()} == {
        c: [renamed.get(c, c)] for c in STAGING_COLUMNS
    }
    assert all("transformOperation" not in e for e in edges.values())  # a rename and a cast: no transform either
    source = aspect(variant, dbt_world.dbt_source_urn, "upstreamLineage")
    assert [(u["dataset"], u["type"]) for u in source["upstreams"]] == [(dbt_world.raw_table_urn, "COPY")]
    for name, edge in edges_by_downstream(source).items():
        assert edge["upstreams"] == [field_urn(dbt_world.raw_table_urn, name)]
        assert "transformOperation" not in edge and edge["confidenceScore"] == 1.0


def test_postgres_view_lineage_carries_real_transforms(dbt_world: DbtWorld, variant: CatalogVariant) -> None:
    lineage = aspect(variant, dbt_world.staging_view_urn, "upstreamLineage")
    from_raw = [u for u in lineage["upstreams"] if u["dataset"] == dbt_world.raw_table_urn]
    assert [u["type"] for u in from_raw] == ["VIEW"]
    assert from_raw[0]["query"].startswith("urn:li:query:view_")
    edges = edges_by_downstream(lineage, upstream_platform="postgres")
    transforms = {c: e["transformOperation"] for c, e in edges.items()}
    assert transforms == {
        "claim_id": 'COPY: "claims"."claim_id" AS "claim_id"',
        "claim_amount": 'COPY: "claims"."amount" AS "claim_amount"',
        "insured_value": 'SQL: CAST(("claims"."insured_value") AS DOUBLE PRECISION) AS "insured_value"',
        "category": 'COPY: "claims"."category" AS "category"',
        "region": 'COPY: "claims"."region" AS "region"',
        "is_fraud": 'COPY: "claims"."is_fraud" AS "is_fraud"',
        "severity": 'COPY: "claims"."severity" AS "severity"',
    }
    assert edges["claim_amount"]["upstreams"] == [field_urn(dbt_world.raw_table_urn, "amount")]


def test_no_siblings_in_either_variant(dbt_world: DbtWorld, variant: CatalogVariant) -> None:
    # dbt_is_primary_sibling (default true) leaves siblings to GMS's hook, which nothing here runs
    contents = catalog_contents(variant.catalog_db)
    assert not [urn for urn, aspects in contents.items() if "siblings" in aspects]
    assert read_aspect(variant.catalog_db, dbt_world.feature_table_urn, "siblings") is None


def test_lite_variant_drops_the_dbt_to_table_patches(dbt_world: DbtWorld) -> None:
    lite = dbt_world.lite
    dbt = lite.ingestion("dbt")
    # incremental_lineage (default true): dbt node -> warehouse table edges as PATCH proposals, one per model;
    # the datahub-lite sink refuses them with a warning
    assert dbt.sink_warnings == (LITE_PATCH_REFUSAL, LITE_PATCH_REFUSAL)
    assert dbt.sink_failures == () and dbt.source_failures == () and dbt.error is None
    assert lite.ingestion("postgres").clean and lite.ingestion("mlflow").clean
    assert read_aspect(lite.catalog_db, dbt_world.feature_table_urn, "upstreamLineage") is None
    view = aspect(lite, dbt_world.staging_view_urn, "upstreamLineage")
    assert [u["dataset"] for u in view["upstreams"]] == [dbt_world.raw_table_urn]


def test_rest_variant_lands_the_dbt_to_table_patches(dbt_world: DbtWorld) -> None:
    rest = dbt_world.rest
    assert [(i.source, i.sink) for i in rest.ingestions] == [
        ("postgres", "datahub-rest"),
        ("dbt", "datahub-rest"),
        ("mlflow", "datahub-rest"),
    ]
    for ingestion in rest.ingestions:
        assert ingestion.clean, ingestion
    # two more records than the lite sink wrote: the two PATCH proposals
    assert rest.ingestion("dbt").records_written == dbt_world.lite.ingestion("dbt").records_written + 2
    table = aspect(rest, dbt_world.feature_table_urn, "upstreamLineage")
    assert [(u["dataset"], u["type"]) for u in table["upstreams"]] == [(dbt_world.dbt_features_urn, "COPY")]
    edges = edges_by_downstream(table)
    assert list(edges) == list(FEATURE_COLUMNS)
    for name, edge in edges.items():
        assert edge["upstreams"] == [field_urn(dbt_world.dbt_features_urn, name)]
        assert edge["transformOperation"] == "NONE" and edge["confidenceScore"] == 1.0
    view = aspect(rest, dbt_world.staging_view_urn, "upstreamLineage")
    assert [(u["dataset"], u["type"]) for u in view["upstreams"]] == [
        (dbt_world.raw_table_urn, "VIEW"),
        (dbt_world.dbt_staging_urn, "COPY"),
    ]
    from_dbt = edges_by_downstream(view, upstream_platform="dbt")
    assert {c: e["transformOperation"] for c, e in from_dbt.items()} == dict.fromkeys(STAGING_COLUMNS, "NONE")
    # the view's own, parsed edges survive the patch
    assert len(edges_by_downstream(view, upstream_platform="postgres")) == len(STAGING_COLUMNS)


# ---------------------------------------------------------------------------------------------------- MLflow
def test_mlflow_source_tags_stages_and_drops_aliases(dbt_world: DbtWorld, variant: CatalogVariant) -> None:
    expected = {
        dbt_world.fraud: "urn:li:tag:mlflow_none",
        dbt_world.severity: "urn:li:tag:mlflow_production",
        dbt_world.pricing: "urn:li:tag:mlflow_none",
        dbt_world.challenger: "urn:li:tag:mlflow_staging",
    }
    for model, tag in expected.items():
        assert model.stage_tag_urn == tag
        assert aspect(variant, model.urn, "globalTags") == {"tags": [{"tag": tag}]}
        assert aspect(variant, model.urn, "versionProperties")["aliases"] == []
        props = aspect(variant, model.urn, "mlModelProperties")
        assert props["customProperties"] == {}
        assert props["trainingJobs"] == [model.run_urn]
        assert props["groups"] == [model.group_urn]
    assert dbt_world.fraud.stage == dbt_world.pricing.stage == "None"
    with sqlite3.connect(f"file:{variant.catalog_db}?mode=ro", uri=True) as conn:
        mentions = conn.execute("SELECT count(*) FROM metadata_aspect_v2 WHERE metadata LIKE '%champion%'").fetchone()
    conn.close()
    assert mentions == (0,)  # the alias is nowhere in the catalog


def test_mlflow_registry_knows_the_aliases(dbt_world: DbtWorld) -> None:
    client = mlflow_client(dbt_world)
    for model, alias in ((dbt_world.fraud, "champion"), (dbt_world.pricing, "production")):
        assert model.aliases == (alias,)
        version = client.get_model_version(model.name, model.version)
        assert list(version.aliases) == [alias]
        assert str(version.current_stage) == "None"
        assert str(client.get_model_version_by_alias(model.name, alias).version) == model.version
    assert list(client.get_model_version(dbt_world.severity.name, "1").aliases) == []
    assert client.get_model_version(dbt_world.severity.name, "1").current_stage == "Production"
    assert client.get_model_version(dbt_world.challenger.name, "1").current_stage == "Staging"


def test_training_runs_link_the_logged_datasets(dbt_world: DbtWorld, variant: CatalogVariant) -> None:
    assert dbt_world.mlflow_dataset_urn == (
        "urn:li:dataset:(urn:li:dataPlatform:mlflow,dbt_warehouse.analytics.claim_features,PROD)"
    )
    for model in dbt_world.models:
        inputs = aspect(variant, model.run_urn, "dataProcessInstanceInput")
        assert [e["destinationUrn"] for e in inputs["inputEdges"]] == [
            dbt_world.mlflow_dataset_urn,
            dbt_world.holdout_dataset_urn,
        ]
        outputs = aspect(variant, model.run_urn, "dataProcessInstanceOutput")
        assert [e["destinationUrn"] for e in outputs["outputEdges"]] == [model.urn]
    schema = aspect(variant, dbt_world.mlflow_dataset_urn, "schemaMetadata")
    assert [f["fieldPath"] for f in schema["fields"]] == list(FEATURE_COLUMNS)
    # tied to the warehouse only by name: the same qualified name as the postgres table and the dbt model
    assert read_aspect(variant.catalog_db, dbt_world.mlflow_dataset_urn, "upstreamLineage") is None


# ---------------------------------------------------------------------------------------------------- the models
def test_models_read_their_columns_and_depend_on_them(dbt_world: DbtWorld) -> None:
    from sklearn.metrics import roc_auc_score

    holdout = pd.read_csv(dbt_world.holdout_csv, keep_default_na=False)
    for model in dbt_world.models:
        pipeline = joblib.load(model.artifact_path)
        assert tuple(pipeline.feature_names_in_) == model.features
        assert "signature:" in model.mlmodel_path.read_text()
    fraud = joblib.load(dbt_world.fraud.artifact_path)
    x = holdout[list(dbt_world.fraud.features)]
    auc = roc_auc_score(holdout["is_fraud"], fraud.predict_proba(x)[:, 1])
    assert auc == pytest.approx(dbt_world.fraud.holdout_score) and auc > 0.8
    scaled = x.assign(claim_amount=x["claim_amount"] * 100)
    assert np.mean(fraud.predict(scaled) != fraud.predict(x)) > 0.3

    severity = joblib.load(dbt_world.severity.artifact_path)
    assert list(severity.classes_) == ["minor", "moderate", "severe"]
    assert dbt_world.severity.holdout_score > 0.85
    x = holdout[list(dbt_world.severity.features)]
    swapped = x.assign(category_bucket=x["category_bucket"].map({"low": "high", "high": "low", "mid": "mid"}))
    assert np.mean(severity.predict(swapped) != severity.predict(x)) > 0.3

    pricing = joblib.load(dbt_world.pricing.artifact_path)
    x = holdout[list(dbt_world.pricing.features)]
    assert dbt_world.pricing.holdout_score > 0.7
    assert np.mean(pricing.predict(x.assign(amount_rounded=x["amount_rounded"] * 100)) != pricing.predict(x)) > 0.3


def test_world_files_are_where_the_world_says(dbt_world: DbtWorld) -> None:
    for path in (
        dbt_world.lite.catalog_db,
        dbt_world.rest.catalog_db,
        dbt_world.mlflow_db,
        dbt_world.manifest_path,
        dbt_world.catalog_path,
        dbt_world.profiles_dir / "profiles.yml",
    ):
        assert path.is_file() and path.is_relative_to(dbt_world.dir)
    assert dbt_world.lite.home / "catalog.db" == dbt_world.lite.catalog_db
    assert not (dbt_world.lite.home / "catalog-serve.json").exists()  # the serve processes stopped
    assert not (PROJECT_SOURCE / "target").exists()  # dbt ran in the world's copy of the project
    train = pd.read_csv(dbt_world.train_csv, keep_default_na=False)
    holdout = pd.read_csv(dbt_world.holdout_csv, keep_default_na=False)
    assert len(train) + len(holdout) == ROWS and len(holdout) == ROWS * 3 // 10
    assert set(train["claim_id"]).isdisjoint(holdout["claim_id"])
    assert list(holdout.columns) == list(FEATURE_COLUMNS)
    assert set(holdout["is_fraud"]) == {0, 1}
    assert set(holdout["severity"]) == {"minor", "moderate", "severe"}
    assert "unknown" in set(holdout["region"])
    recorded = json.loads((dbt_world.dir / "ingestion.json").read_text())
    assert [i["source"] for i in recorded["lite"]] == ["postgres", "dbt", "mlflow"]


def test_copy_is_independent(dbt_world: DbtWorld, dbt_world_copy: DbtWorld) -> None:
    copy = dbt_world_copy
    assert copy.dir != dbt_world.dir and copy.lite.catalog_db.is_relative_to(copy.dir)
    client = mlflow_client(copy)
    version = client.get_model_version(copy.fraud.name, copy.fraud.version)
    assert version.source.startswith(copy.artifact_root.as_uri())
    assert copy.fraud.artifact_path.is_file() and copy.fraud.artifact_path.is_relative_to(copy.dir)
    with sqlite3.connect(copy.lite.catalog_db) as conn:
        conn.execute("DELETE FROM metadata_aspect_v2 WHERE urn = ?", (copy.fraud.urn,))
    conn.close()
    assert read_aspect(copy.lite.catalog_db, copy.fraud.urn, "globalTags") is None
    assert read_aspect(dbt_world.lite.catalog_db, dbt_world.fraud.urn, "globalTags") is not None


def test_embedded_endpoint_follows_column_lineage_through_the_dbt_stack(dbt_world_copy: DbtWorld) -> None:
    from tools.embedded.server import embedded_catalog

    world = dbt_world_copy
    for variant in world.variants:
        with embedded_catalog(variant.catalog_db) as running:
            index = running.gms.store.index
            amount = field_urn(world.raw_table_urn, "amount")
            assert field_urn(world.staging_view_urn, "claim_amount") in index.neighbours(amount, "DOWNSTREAM", "field")
            staged = field_urn(world.staging_view_urn, "claim_amount")
            assert field_urn(world.dbt_features_urn, "amount_ratio") in index.neighbours(staged, "DOWNSTREAM", "field")
