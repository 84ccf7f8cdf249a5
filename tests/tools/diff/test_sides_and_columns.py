"""Naming each side's relation (explicit, dbt manifests, schema swap) and the data diff of a column."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tools.diff.columns import column_diff
from tools.diff.sides import RelationMap, SidesError, parse_relations, read_manifest

URN = "urn:li:dataset:(urn:li:dataPlatform:postgres,warehouse.analytics.claim_features,PROD)"


def test_the_schema_swap_keeps_the_table_and_defaults_the_base_to_the_catalogs_schema() -> None:
    assert RelationMap("postgres", head_schema="ci_pr_7").sides(URN) == (
        "analytics.claim_features", "ci_pr_7.claim_features",
    )  # fmt: skip
    assert RelationMap("postgres", base_schema="prod", head_schema="ci").sides(URN) == (
        "prod.claim_features", "ci.claim_features",
    )  # fmt: skip
    assert RelationMap("snowflake", head_schema="ci").sides(URN) == (
        "warehouse.analytics.claim_features", "warehouse.ci.claim_features",
    )  # fmt: skip
    assert RelationMap("postgres").sides(URN) is None


def test_explicit_relations_win_and_are_parsed_strictly() -> None:
    pairs = parse_relations(["claim_features=a.cf:b.cf"])
    assert RelationMap("postgres", head_schema="ci", explicit=pairs).sides(URN) == ("a.cf", "b.cf")
    for bad in ("claim_features", "claim_features=a.cf", "=a:b", "x=:b"):
        with pytest.raises(SidesError, match="NAME=BASE:HEAD"):
            parse_relations([bad])


def test_manifests_name_each_models_relation(tmp_path: Path) -> None:
    def manifest(schema: str) -> Path:
        path = tmp_path / f"{schema}.json"
        node = {"resource_type": "model", "name": "claim_features",
                "relation_name": f'"warehouse"."{schema}"."claim_features"'}  # fmt: skip
        test = {"resource_type": "test", "name": "unique_x", "relation_name": None}
        path.write_text(json.dumps({"nodes": {"model.p.claim_features": node, "test.p.u": test}}))
        return path

    relations = RelationMap(
        "postgres", base_manifest=read_manifest(manifest("analytics"), "postgres"),
        head_manifest=read_manifest(manifest("ci_pr_9"), "postgres"),
    )  # fmt: skip
    assert relations.sides(URN) == ("analytics.claim_features", "ci_pr_9.claim_features")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(SidesError, match="not a readable dbt manifest"):
        read_manifest(tmp_path / "broken.json", "postgres")


def test_a_numeric_columns_diff_counts_changes_and_nulls() -> None:
    before = pd.Series([1.0, 2.0, np.nan, 4.0, np.nan])
    after = pd.Series([1.0, 20.0, 3.0, 4.0, np.nan])
    diff = column_diff("x", before, after)
    assert (diff.rows, diff.changed, diff.nulls_before, diff.nulls_after) == (5, 2, 2, 1)
    assert diff.mean_before == pytest.approx(7 / 3) and diff.mean_after == pytest.approx(7.0)
    assert "40.0% of 5 rows changed" in diff.line()


def test_a_categorys_diff_names_its_most_frequent_changes() -> None:
    before = pd.Series(["a", "c", "c", "c", "b"])
    after = pd.Series(["a", "low", "low", "c", "b"])
    diff = column_diff("bucket", before, after)
    assert diff.changed == 2 and diff.top_changes == ["c → low: 2 rows"]
