"""Reading the Feast registry as `feast registry-dump` prints it (tools/catalog/feast_registry.py). The dump's shape
is Feast 0.67's (a PostgreSQLSource's options are base64 JSON in customOptions.configuration); the end-to-end test
on a real Feast repository is tests/realworld/test_feast_world.py."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tools.catalog.feast_registry import (
    FEAST_ENV,
    REPO_ENV,
    FeastRegistryError,
    parse_registry,
    registry_from_environment,
)

POSTGRES = {"type": "postgres", "database": "rides", "db_schema": "public"}
CLASS = "feast.infra.offline_stores.contrib.postgres_offline_store.postgres_source.PostgreSQLSource"


def postgres_source(table: str = "", query: str = "", mapping: dict[str, str] | None = None) -> dict[str, Any]:
    options = json.dumps({"name": "src", "query": query, "table": table}).encode()
    source: dict[str, Any] = {
        "type": "CUSTOM_SOURCE",
        "dataSourceClassType": CLASS,
        "customOptions": {"configuration": base64.b64encode(options).decode()},
    }
    if mapping:
        source["fieldMapping"] = mapping
    return source


def dump(
    *views: tuple[str, dict[str, Any], list[str]], services: dict[str, list[tuple[str, str]]] | None = None
) -> dict[str, Any]:
    return {
        "featureViews": [
            {"spec": {"name": name, "batchSource": source, "features": [{"name": f} for f in features]}}
            for name, source, features in views
        ],
        "featureServices": [
            {
                "spec": {
                    "name": service,
                    "features": [
                        {"featureViewName": view, "featureColumns": [{"name": f} for v, f in pairs if v == view]}
                        for view in dict.fromkeys(v for v, _ in pairs)
                    ],
                }
            }
            for service, pairs in (services or {}).items()
        ],
    }


@pytest.mark.parametrize(
    ("table", "qualified"),
    [
        ("driver_hourly_stats", "rides.public.driver_hourly_stats"),
        ("public.driver_hourly_stats", "rides.public.driver_hourly_stats"),
        ("analytics.Driver_Stats", "rides.analytics.driver_stats"),
        ("other_db.s.t", "other_db.s.t"),
    ],
)
def test_a_postgres_views_table_becomes_the_catalogs_dataset(table: str, qualified: str) -> None:
    registry = parse_registry(
        dump(("stats", postgres_source(table), ["conv_rate"])), {"offline_store": POSTGRES}, where="r"
    )
    view = registry.view("driver_features.stats")
    assert view is not None and view.features == ("conv_rate",)
    assert view.table_urn == f"urn:li:dataset:(urn:li:dataPlatform:postgres,{qualified},PROD)"


def test_a_query_source_and_an_unknown_store_are_named_not_tied() -> None:
    registry = parse_registry(
        dump(("q", postgres_source(query="select a * 100 as conv_rate from t"), ["conv_rate"])),
        {"offline_store": POSTGRES},
        where="r",
    )
    view = registry.view("q")
    assert view is not None and view.table_urn is None and view.source.startswith("query select a * 100")
    registry = parse_registry(dump(("s", postgres_source("t"), ["x"])), {"offline_store": {"type": "spark"}}, where="r")
    assert registry.views["s"].table_urn is None and "offline store spark" in registry.views["s"].source


def test_services_and_field_mappings() -> None:
    registry = parse_registry(
        dump(
            ("stats", postgres_source("t", mapping={"conversion": "conv_rate"}), ["conv_rate", "acc_rate"]),
            ("profile", postgres_source("p"), ["rating"]),
            services={
                "driver_activity_v1": [("stats", "conv_rate"), ("profile", "rating")],
                "other": [("stats", "acc_rate")],
            },
        ),
        {"offline_store": POSTGRES},
        where="r",
    )
    assert registry.services_with("proj.stats", "conv_rate") == {"driver_activity_v1"}
    assert registry.services_with("stats", "acc_rate") == {"other"}
    assert registry.views["stats"].field_mapping == {"conv_rate": "conversion"}


def test_a_repository_without_feature_store_yaml_or_feast_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(REPO_ENV, str(tmp_path))
    with pytest.raises(FeastRegistryError, match="no feature_store.yaml"):
        registry_from_environment()
    (tmp_path / "feature_store.yaml").write_text("project: p\nregistry: data/registry.db\n")
    monkeypatch.setenv(FEAST_ENV, str(tmp_path / "no-such-feast"))
    with pytest.raises(FeastRegistryError, match=f"set {FEAST_ENV}"):
        registry_from_environment()
    monkeypatch.delenv(REPO_ENV)
    assert registry_from_environment() is None
