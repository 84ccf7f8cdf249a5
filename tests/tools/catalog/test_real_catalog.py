"""Discovery on a catalog filled by DataHub's own ingestion sources (tests/realworld), through the official MCP
server: no mlFeature entities, models linked by their training runs, Production marked by `mlflow_production`.

The gate must never be silent: as ingested (no binding) the production model is INCOMPLETE `missing_binding`,
never PASS; bound, the same command BLOCKs; the Staging model is listed, not tested; a COPY column is an identity.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent.cli import main
from tests.realworld.world import RealWorld
from tests.warm_start import cleared
from tools.catalog.connection import open_catalog
from tools.catalog.datahub import CatalogReader
from tools.catalog.discovery import Discovery
from tools.catalog.lineage_walk import Discoverer
from tools.catalog.resolve import resolve_field
from tools.experiment.binding import ARTIFACT_SHA256, ARTIFACT_URI, EVAL_DATA_URI, LABEL_COLUMN
from tools.registry.catalog_sync import merge_into_lite
from tools.settings import ProvenanceSettings

pytestmark = pytest.mark.slow


@pytest.fixture
def world(real_world_copy: RealWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RealWorld:
    for key in [k for k in os.environ if cleared(k, ("DATAHUB_GMS", "PROVENANCE_", "MLFLOW_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROVENANCE_LITE_DB", str(real_world_copy.catalog_db))
    return real_world_copy


def _settings(world: RealWorld, home: Path) -> ProvenanceSettings:
    return ProvenanceSettings(provenance_home=home, provenance_lite_db=world.catalog_db)


def _discover(world: RealWorld, home: Path, dataset: str, field: str) -> Discovery:
    async def run() -> Discovery:
        async with open_catalog(_settings(world, home)) as catalog:
            return await Discoverer(CatalogReader(catalog.session)).discover(dataset, field)

    return asyncio.run(run())


def _assess(world: RealWorld, dataset: str, field: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    code = main(
        ["assess", "--dataset", dataset, "--field", field, "--op", "scale", "--param", "factor=100"]
        + ["--no-publish", "--json"]
    )
    return code, json.loads(capsys.readouterr().out)


def _bind_in_datahub(world: RealWorld) -> None:
    """Custom properties as today's contract has them (the `bind` command is tested in tests/agent)."""
    model = world.champion
    keys = {
        ARTIFACT_URI: str(model.artifact_path),
        ARTIFACT_SHA256: hashlib.sha256(model.artifact_path.read_bytes()).hexdigest(),
        EVAL_DATA_URI: str(world.holdout_csv),
        LABEL_COLUMN: world.label_column,
    }
    assert merge_into_lite(world.catalog_db, model.urn, keys).written


def test_as_ingested_the_production_model_is_incomplete_missing_binding_never_pass(
    world: RealWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    for dataset in (world.feature_table_urn, world.raw_table_urn):
        code, out = _assess(world, dataset, "income", capsys)
        assert (code, out["verdict"]) == (30, "INCOMPLETE"), out["reasons"]
        [model] = out["models"]
        assert model["urn"] == world.champion.urn
        assert model["reason_codes"] == ["missing_binding"]
        assert "MLflow model-version tags" in model["reasons"][0]
        assert model["production_marker"] == "global tag urn:li:tag:mlflow_production"
        assert [n["urn"] for n in out["not_tested"]] == [world.challenger.urn]
        assert "not in production" in out["not_tested"][0]["reason"]
        coverage = out["coverage"]
        assert coverage["complete"] is True
        assert {r["urn"] for r in coverage["models_reached"]} == {world.champion.urn, world.challenger.urn}
        assert any(world.mlflow_dataset_urn in m and "(name)" in m for m in coverage["mirrors"])
        links = next(r["links"] for r in coverage["models_reached"] if r["urn"] == world.champion.urn)
        assert any(world.champion.run_urn in link and "matched by name" in link for link in links)


def test_bound_the_same_command_blocks_and_the_staging_model_stays_untested(
    world: RealWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    _bind_in_datahub(world)
    for dataset in (world.feature_table_urn, world.raw_table_urn):
        code, out = _assess(world, dataset, "income", capsys)
        assert (code, out["verdict"]) == (20, "BLOCK"), out["reasons"]
        [model] = out["models"]
        assert model["verdict"] == "BLOCK" and model["metrics"]["flip_rate"] > 0.2
        assert [n["urn"] for n in out["not_tested"]] == [world.challenger.urn]


def test_a_field_the_bound_model_does_not_read_passes_with_the_reason(
    world: RealWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    """debt_to_income is in the logged training data but not among the champion's inputs."""
    _bind_in_datahub(world)
    code, out = _assess(world, world.feature_table_urn, "debt_to_income", capsys)
    assert (code, out["verdict"]) == (0, "PASS"), out["reasons"]
    [model] = out["models"]
    assert model["reason_codes"] == ["field_not_an_input"] and model["metrics"] is None


def test_copy_reaches_the_model_as_identity_and_sql_does_not(world: RealWorld, tmp_path: Path) -> None:
    found = _discover(world, tmp_path / "home", world.raw_table_urn, "loan_amount")
    champion = next(m for m in found.models if m.urn == world.champion.urn)
    assert champion.production and not next(m for m in found.models if m.urn == world.challenger.urn).production
    [link] = champion.features
    assert (link.link, link.column, link.precision) == ("training_run", "loan_amount", "column")
    assert link.non_identity_transforms == []
    assert link.path[1].transform is not None and link.path[1].transform.startswith("COPY:")
    assert link.path[-1].dataset_urn == world.mlflow_dataset_urn and "matched by name" in (link.path[-1].note or "")

    found = _discover(world, tmp_path / "home", world.raw_table_urn, "debt")
    links = {(m.urn, f.column): f for m in found.models for f in m.features}
    sql = links[(world.champion.urn, "debt_to_income")]
    # A computed column is not a copy: its expression is read from the transform, for the change to be carried
    # through it (tools/transforms), and nothing on the path is left unknown.
    assert sql.non_identity_transforms == []
    step = sql.path[1]
    assert step.transform is not None and step.transform.startswith("SQL:")
    assert step.expression == '"loan_applications"."debt" / "loan_applications"."income"'
    assert step.expression_input == ("loan_applications", "debt")
    assert step.expression_from == "the edge's transformOperation"


def test_the_short_name_resolves_to_the_table_not_its_mlflow_mirror(world: RealWorld, tmp_path: Path) -> None:
    async def run() -> list[tuple[str, str]]:
        async with open_catalog(_settings(world, tmp_path / "home")) as catalog:
            reader = CatalogReader(catalog.session)
            return [
                await resolve_field(reader, "main.applicant_features.income"),
                await resolve_field(reader, "sqlite:main.applicant_features.income"),
                await resolve_field(reader, "mlflow:main.applicant_features.income"),
            ]

    table, explicit, mirror = asyncio.run(run())
    assert table == explicit == (world.feature_table_urn, "income")
    assert mirror == (world.mlflow_dataset_urn, "income")


def test_ask_what_depends_answers_with_the_table_and_its_coverage(
    world: RealWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["ask", "What depends on main.applicant_features.income?"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "sqlite:main.applicant_features.income" in out
    assert "credit_default_1" in out and "mlflow_production" in out
    assert "training run" in out and "matched by name" in out
    assert "coverage: complete" in out
