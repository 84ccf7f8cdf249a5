"""Feast as DataHub's own feast source writes it (tests/realworld/feast_world.py builds the world): PostgreSQL tables,
a Feast repository with the PostgreSQL offline store applied by Feast, models trained on Feast's point-in-time join
and registered in MLflow; the catalog filled with `provenance catalog ingest` of DataHub's postgres source, the feast
source's output (read back by DataHub's `file` source: the feast source runs where Feast is installed) and the
mlflow source, after `provenance bind`.

The feast source records every PostgreSQL feature's source as `unknown`: with PROVENANCE_FEAST_REPO the registry
ties each feature view to its table and the production model is tested (BLOCK, with the flip rate the world computed
by hand); without it the answer is INCOMPLETE naming the features and the fix — never PASS.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

from agent.cli.app import main
from tests.postgres import Cluster
from tests.realworld.feast_world import FeastWorld, build_feast_world, feast_executable

pytestmark = pytest.mark.slow

FEAST_ENV = ("PROVENANCE_FEAST_REPO", "PROVENANCE_FEAST")


@dataclass(frozen=True)
class FeastCatalog:
    world: FeastWorld
    home: Path
    feast: Path  # the feast executable of the world's venv
    ingest_output: str


@pytest.fixture(scope="module")
def feast_world(postgres_cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> FeastWorld:
    return build_feast_world(tmp_path_factory.mktemp("feast-world"), postgres_cluster.create_database())


def _recipes(world: FeastWorld, folder: Path) -> list[Path]:
    url = urlparse(world.postgres_url)
    postgres: dict[str, Any] = {
        "host_port": f"{url.hostname}:{url.port or 5432}",
        "database": world.database,
        "username": url.username or "postgres",
    }
    if url.password:
        postgres["password"] = url.password
    recipes = {
        "postgres": {"source": {"type": "postgres", "config": postgres}},
        # DataHub's feast source ran in the Feast environment with a file sink; its records are ingested as written
        "feast": {"source": {"type": "file", "config": {"path": str(world.postgres.mcps)}}},
        "feast-files": {"source": {"type": "file", "config": {"path": str(world.file.mcps)}}},
        "mlflow": {"source": {"type": "mlflow", "config": {"tracking_uri": world.mlflow_uri}}},
    }
    paths = []
    for name, recipe in recipes.items():
        path = folder / f"{name}.yml"
        path.write_text(yaml.safe_dump(recipe))
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def feast_catalog(feast_world: FeastWorld, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FeastCatalog]:
    folder = tmp_path_factory.mktemp("feast-catalog")
    home = folder / "home"
    saved = {k: os.environ.get(k) for k in ("PROVENANCE_HOME", "MLFLOW_TRACKING_URI", *FEAST_ENV)}
    os.environ.update({"PROVENANCE_HOME": str(home), "MLFLOW_TRACKING_URI": feast_world.mlflow_uri})
    for key in FEAST_ENV:
        os.environ.pop(key, None)
    cwd = Path.cwd()
    os.chdir(folder)  # MLflow's client makes ./mlruns in the current folder
    try:
        postgres, feast, feast_files, mlflow = _recipes(feast_world, folder)
        from contextlib import redirect_stdout
        from io import StringIO

        out = StringIO()
        with redirect_stdout(out):
            assert main(["catalog", "ingest", str(postgres), str(feast), str(feast_files)]) == 0, out.getvalue()
            for model in (
                feast_world.champion,
                feast_world.challenger,
                feast_world.files_model,
                feast_world.files_challenger,
            ):
                assert main(["bind", model.name, "--yes"]) == 0, out.getvalue()
            assert main(["catalog", "ingest", str(mlflow)]) == 0, out.getvalue()
        yield FeastCatalog(feast_world, home, feast_executable(), out.getvalue())
    finally:
        os.chdir(cwd)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run(
    catalog: FeastCatalog,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    *,
    registry: bool,
    repo: Path | None = None,
) -> tuple[int, str]:
    monkeypatch.setenv("PROVENANCE_HOME", str(catalog.home))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", catalog.world.mlflow_uri)
    if registry:
        monkeypatch.setenv("PROVENANCE_FEAST_REPO", str(repo or catalog.world.postgres.path))
        monkeypatch.setenv("PROVENANCE_FEAST", str(catalog.feast))
    else:
        for key in FEAST_ENV:
            monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(catalog.home.parent)
    capsys.readouterr()
    code = main(args)
    out, err = capsys.readouterr()
    return code, out + err


def _assess(world: FeastWorld, field: str) -> list[str]:
    return [
        "assess",
        "--dataset",
        world.stats_table_urn,
        "--field",
        field,
        "--op",
        "scale",
        "--param",
        "factor=100",
        "--no-publish",
        "--json",
    ]


def test_the_feast_source_records_postgres_sources_as_unknown(feast_catalog: FeastCatalog) -> None:
    """The fact the rest rests on (if DataHub starts linking them, these tests must change)."""
    records = json.loads(feast_catalog.world.postgres.mcps.read_text())
    sources = {
        aspect["com.linkedin.pegasus2avro.ml.metadata.MLFeatureProperties"]["sources"][0]
        for record in records
        for aspect in record.get("proposedSnapshot", {})
        .get("com.linkedin.pegasus2avro.metadata.snapshot.MLFeatureSnapshot", {})
        .get("aspects", [])
        if "com.linkedin.pegasus2avro.ml.metadata.MLFeatureProperties" in aspect
    }
    assert sources == {"urn:li:dataset:(urn:li:dataPlatform:unknown,unknown,PROD)"}


def test_with_the_registry_the_production_model_is_tested_and_blocks(
    feast_catalog: FeastCatalog, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = feast_catalog.world
    code, out = run(feast_catalog, monkeypatch, capsys, _assess(world, world.scaled_feature), registry=True)
    assert code == 20, out  # BLOCK
    result = json.loads(out[out.index("{") :])
    models = {m["name"]: m for m in result["models"]}
    champion = next(
        m for name, m in models.items() if name.startswith(world.champion.name) and "challenger" not in name
    )
    assert champion["verdict"] == "BLOCK", champion
    flip = champion["metrics"]["flip_rate"]
    assert abs(flip - world.flip_rate) < 0.02, (flip, world.flip_rate)
    assert result["coverage"]["complete"] is True, result["coverage"]
    # the Staging challenger is listed, not tested
    listed = json.dumps(result)
    assert world.challenger.name in listed, listed


def test_lineage_names_the_feature_view_and_both_models(
    feast_catalog: FeastCatalog, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = feast_catalog.world
    args = ["lineage", "--dataset", world.stats_table_urn, "--field", world.scaled_feature]
    code, out = run(feast_catalog, monkeypatch, capsys, args, registry=True)
    assert code == 0, out
    assert "feature view driver_hourly_stats reads table" in out, out
    assert f"{world.champion.name}_1  [PRODUCTION" in out and f"{world.challenger.name}_1  [not in production" in out
    code, out = run(feast_catalog, monkeypatch, capsys, [*args, "--json"], registry=True)
    found = json.loads(out[out.index("{") :])
    feature = world.postgres.feature_urn("driver_hourly_stats", world.scaled_feature)
    assert feature in [f["urn"] for f in found["features"]], found["features"]
    assert found["coverage"]["complete"] is True


def test_without_the_registry_the_answer_is_incomplete_never_pass(
    feast_catalog: FeastCatalog, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = feast_catalog.world
    code, out = run(feast_catalog, monkeypatch, capsys, _assess(world, world.scaled_feature), registry=False)
    assert code == 30, out  # INCOMPLETE
    result = json.loads(out[out.index("{") :])
    assert result["verdict"] == "INCOMPLETE"
    unreadable = " ".join(result["coverage"]["unreadable"])
    assert world.postgres.feature_urn("driver_hourly_stats", world.scaled_feature) in unreadable, unreadable
    assert "PROVENANCE_FEAST_REPO" in unreadable


def test_a_column_no_feature_reads_passes_with_complete_coverage(
    feast_catalog: FeastCatalog, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = feast_catalog.world
    code, out = run(feast_catalog, monkeypatch, capsys, _assess(world, "created"), registry=False)
    assert code == 0, out
    result = json.loads(out[out.index("{") :])
    assert result["verdict"] == "PASS" and result["coverage"]["complete"] is True, result


def test_the_other_feature_view_reaches_the_model_too(
    feast_catalog: FeastCatalog, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = feast_catalog.world
    args = [
        "assess",
        "--dataset",
        world.profile_table_urn,
        "--field",
        "rating",
        "--op",
        "null_inject",
        "--no-publish",
        "--json",
    ]
    code, out = run(feast_catalog, monkeypatch, capsys, args, registry=True)
    result = json.loads(out[out.index("{") :])
    champion = next(m for m in result["models"] if m["name"] == f"{world.champion.name}_1")
    assert champion["verdict"] in ("PASS", "WARNING", "BLOCK"), champion  # tested, not INCOMPLETE


def test_ask_names_the_feature_view_and_the_models(
    feast_catalog: FeastCatalog, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = feast_catalog.world
    question = f"What depends on {world.database}.public.driver_hourly_stats.conv_rate?"
    code, out = run(feast_catalog, monkeypatch, capsys, ["ask", question], registry=True)
    assert code == 0, out
    assert "feature view driver_hourly_stats reads table" in out, out
    assert world.champion.name in out and world.challenger.name in out, out


def test_a_feature_names_the_subject(
    feast_catalog: FeastCatalog, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = feast_catalog.world
    ambiguous = ["assess", "--feature", "driver_hourly_stats.conv_rate", "--op", "scale", "--param", "factor=100"]
    code, out = run(feast_catalog, monkeypatch, capsys, [*ambiguous, "--no-publish"], registry=True)
    assert code == 2 and "reads 2 columns; assess one of them" in out and FILE_DATASET in out, out  # two projects
    args = ["assess", "--feature", "driver_features.driver_hourly_stats.conv_rate", "--op", "scale", "--param"]
    args.append("factor=100")
    code, out = run(feast_catalog, monkeypatch, capsys, [*args, "--no-publish", "--json"], registry=True)
    assert code == 20, out  # the same BLOCK as by its table's column
    assert f"reads {world.stats_table_urn} conv_rate (the Feast registry" in out, out
    code, out = run(feast_catalog, monkeypatch, capsys, ["lineage", "--feature", "driver_profile"], registry=True)
    assert code == 0 and out.count("Lineage searched:") == 2, out  # the view's two features, each from its column
    code, out = run(feast_catalog, monkeypatch, capsys, ["lineage", "--feature", world.feature_service], registry=True)
    assert code == 0 and out.count("Lineage searched:") == 5, out
    code, out = run(
        feast_catalog, monkeypatch, capsys, [*args[:2], world.feature_service, *args[3:], "--no-publish"], registry=True
    )
    assert code == 2 and "reads 5 columns; assess one of them" in out, out
    code, out = run(feast_catalog, monkeypatch, capsys, ["lineage", "--feature", "conv_rate"], registry=False)
    assert code == 2 and "set PROVENANCE_FEAST_REPO" in out, out  # never a guess at the column
    code, out = run(feast_catalog, monkeypatch, capsys, ["lineage", "--feature", "conversion_rate"], registry=True)
    assert code == 2 and "no mlFeature, feature view or feature service named 'conversion_rate'" in out, out


FILE_DATASET = "urn:li:dataset:(urn:li:dataPlatform:file,data.driver_hourly_stats.parquet,PROD)"


def test_the_file_world_a_file_source_the_feast_source_links(
    feast_catalog: FeastCatalog, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FileSource view: the feast source records the parquet as the features' source, a dataset no source
    ingested (no schema): its columns are its features' names. The registry names the service the model was trained
    on, so only that model is reached, and tested at the flip rate computed by hand."""
    world = feast_catalog.world
    args = ["assess", "--dataset", FILE_DATASET, "--field", "conv_rate", "--op", "scale", "--param", "factor=100"]
    code, out = run(
        feast_catalog, monkeypatch, capsys, [*args, "--no-publish", "--json"], registry=True, repo=world.file.path
    )
    assert code == 20, out
    result = json.loads(out[out.index("{") :])
    assert [m["name"] for m in result["models"]] == [f"{world.files_model.name}_1"], result["models"]
    flip = result["models"][0]["metrics"]["flip_rate"]
    assert abs(flip - world.files_flip_rate) < 0.02, (flip, world.files_flip_rate)
    # the Staging challenger on the same service is reached too: listed, not tested
    assert world.files_challenger.urn in [n["urn"] for n in result["not_tested"]], result["not_tested"]
    # without the registry the logged schemas decide, by name: said so, and the PostgreSQL-trained models join in
    code, out = run(
        feast_catalog,
        monkeypatch,
        capsys,
        ["lineage", "--dataset", FILE_DATASET, "--field", "conv_rate"],
        registry=False,
    )
    assert (
        code == 0 and "matched by name: the logged training data driver_activity_file has a column conv_rate" in out
    ), out


def test_ask_and_scan_take_a_feature_view_or_a_feature(
    feast_catalog: FeastCatalog, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = feast_catalog.world
    code, out = run(feast_catalog, monkeypatch, capsys, ["ask", "What depends on driver_profile?"], registry=True)
    assert code == 0 and out.count("Lineage searched:") == 2, out  # the view's two features, each from its column
    assert world.profile_table_urn.split(",")[1] in out and world.champion.name in out, out
    feature = "driver_features.driver_hourly_stats.conv_rate"
    args = ["scan", "--feature", feature, "--axes", "scale_up", "--json"]
    code, out = run(feast_catalog, monkeypatch, capsys, args, registry=True)
    assert code == 0, out
    [scanned] = json.JSONDecoder().raw_decode(out[out.index("[") :])[0]  # one column: one scan
    assert scanned["field"] == world.scaled_feature and scanned["dataset_urn"] == world.stats_table_urn, scanned
    assert [m["name"] for m in scanned["models"]] == [f"{world.champion.name}_1"], scanned["models"]


def test_a_registry_that_cannot_be_read_is_incomplete_naming_why(
    feast_catalog: FeastCatalog, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    world = feast_catalog.world
    broken = tmp_path / "feast"
    broken.write_text("#!/bin/sh\necho 'cannot reach the registry' >&2\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setenv("PROVENANCE_FEAST", str(broken))
    monkeypatch.setenv("PROVENANCE_FEAST_REPO", str(world.postgres.path))
    monkeypatch.setenv("PROVENANCE_HOME", str(feast_catalog.home))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", world.mlflow_uri)
    monkeypatch.chdir(feast_catalog.home.parent)
    capsys.readouterr()
    code = main(_assess(world, world.scaled_feature))
    out = capsys.readouterr().out
    assert code == 30, out
    unreadable = " ".join(json.loads(out[out.index("{") :])["coverage"]["unreadable"])
    assert "`feast registry-dump`" in unreadable and "exit 3" in unreadable, unreadable
