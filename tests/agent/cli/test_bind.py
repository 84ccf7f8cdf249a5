"""`provenance bind` on the real world: a model registered in MLflow, ingested by DataHub's own mlflow source.

Bound, the Production model's tags are in MLflow, in DataHub at once (embedded catalog) and again after the next
mlflow ingestion, and `assess` on the feature table's income x100 BLOCKs — through a real subprocess, with no
hand-made mlFeature. Refusals write nothing; a tampered artifact is never unpickled; `--check` names what is
missing. Most runs go in-process (`agent.cli.main`) to stay fast.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli import main
from tests.realworld.world import RealWorld, ingest_mlflow, read_aspect
from tests.tools.registry.mlflow_helpers import LeavesMarker, bind_env, version_tags
from tests.warm_start import cleared
from tools.experiment.binding import (
    ARTIFACT_SHA256,
    ARTIFACT_URI,
    DECISION_THRESHOLD,
    EVAL_DATA_URI,
    LABEL_COLUMN,
    MLFLOW_MODEL,
    MLFLOW_RUN_ID,
    MLFLOW_VERSION,
    REQUIRED_KEYS,
)

pytestmark = pytest.mark.slow  # the real world is built once per session (~15 s)

BINDING = (*REQUIRED_KEYS, MLFLOW_RUN_ID, MLFLOW_MODEL, MLFLOW_VERSION)
ASSESS = ["assess", "--field", "income", "--op", "scale", "--param", "factor=100", "--no-publish", "--json"]


@pytest.fixture
def world(real_world_copy: RealWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RealWorld:
    """A private world, with the CLI's environment pointed at it (in-process runs)."""
    for key in [k for k in os.environ if cleared(k, ("DATAHUB_GMS", "PROVENANCE_", "MLFLOW_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", real_world_copy.mlflow_uri)
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROVENANCE_LITE_DB", str(real_world_copy.catalog_db))
    monkeypatch.chdir(tmp_path)
    return real_world_copy


def champion_tags(world: RealWorld) -> dict[str, str]:
    return version_tags(world, world.champion.name, world.champion.version)


def datahub_properties(world: RealWorld) -> dict[str, str]:
    aspect = read_aspect(world.catalog_db, world.champion.urn, "mlModelProperties")
    assert aspect is not None
    return dict(aspect.get("customProperties", {}))


def provenance() -> list[str]:
    script = Path(sys.executable).with_name("provenance")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agent.cli"]


def evidence_reasons(stdout: str) -> dict[str, list[str]]:
    summary = json.loads(stdout)
    evidence = json.loads(Path(summary["evidence"]["json"]).read_text())
    return {m["name"]: [r["code"] for r in m["reasons"]] for m in evidence["models"]}


# --- binding ---------------------------------------------------------------------------------------------------


def test_bind_writes_the_tags_and_merges_them_into_datahub(
    world: RealWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not any(k.startswith("provenance.") for k in datahub_properties(world))

    assert main(["bind", "credit_default", "--yes"]) == 0

    out = capsys.readouterr().out
    tags = champion_tags(world)
    assert set(BINDING) <= set(tags) and tags["team"] == "risk"  # the version's own tag is untouched
    assert tags[ARTIFACT_URI] == f"{world.champion.artifact_uri}/model"
    assert tags[EVAL_DATA_URI] == str(world.holdout_csv) and tags[LABEL_COLUMN] == "defaulted"
    assert tags[MLFLOW_RUN_ID] == world.champion.run_id
    for key in BINDING:  # it showed exactly what it wrote
        assert f"{key}={tags[key]}" in out
    assert "the version in stage Production" in out
    # Embedded catalog: DataHub's model carries the keys at once, the mlflow source's own properties kept.
    properties = datahub_properties(world)
    assert {k: properties[k] for k in BINDING} == {k: tags[k] for k in BINDING}
    assert properties["team"] == "risk"
    # The alias marks production in DataHub without MLflow access (conventions.yaml alias_properties).
    assert properties["provenance.aliases"] == tags["provenance.aliases"] == "champion"


def test_a_threshold_is_written_and_kept_on_rebinding(world: RealWorld) -> None:
    assert main(["bind", "credit_default_1", "--threshold", "0.35", "--yes"]) == 0
    assert champion_tags(world)[DECISION_THRESHOLD] == "0.35"
    assert main(["bind", world.champion.urn, "--yes"]) == 0
    assert champion_tags(world)[DECISION_THRESHOLD] == "0.35"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "pass --yes"),  # not a terminal, not confirmed
        (["--label", "nope", "--yes"], "label column 'nope' is not in"),
        (["--eval-data", "/nowhere/holdout.csv", "--yes"], "/nowhere/holdout.csv does not exist"),
        (["--version", "9", "--yes"], "has no version 9"),
    ],
)
def test_refusals_write_nothing(
    world: RealWorld, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    before = champion_tags(world)
    assert main(["bind", "credit_default", *extra]) == 2
    assert message in capsys.readouterr().err
    assert champion_tags(world) == before
    assert not any(k.startswith("provenance.") for k in datahub_properties(world))


def test_declined_on_a_terminal_writes_nothing(world: RealWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    answers: list[str] = []
    monkeypatch.setattr("builtins.input", lambda prompt: answers.append(prompt) or "n")
    before = champion_tags(world)
    assert main(["bind", "credit_default"]) == 1
    assert answers == ["Write these tags? [y/N] "]
    assert champion_tags(world) == before
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert main(["bind", "credit_default"]) == 0
    assert set(BINDING) <= set(champion_tags(world))


def test_without_a_tracking_uri(
    world: RealWorld, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    assert main(["bind", "credit_default", "--yes"]) == 2
    assert "MLFLOW_TRACKING_URI is not set" in capsys.readouterr().err


# --- checking --------------------------------------------------------------------------------------------------


def test_check_on_an_unbound_model_names_the_missing_keys(world: RealWorld, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bind", "--check", "credit_default"]) == 30
    out = capsys.readouterr().out
    assert f"missing keys: {', '.join(REQUIRED_KEYS)}" in out
    assert "missing_binding" in out


def test_check_after_binding_is_valid_in_mlflow_and_datahub(
    world: RealWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bind", "credit_default", "--yes"]) == 0
    capsys.readouterr()
    assert main(["bind", "--check", "credit_default"]) == 0
    out = capsys.readouterr().out
    assert "MLflow model-version tags" in out and ": valid" in out
    assert "carries the same provenance.* keys as MLflow" in out


def test_check_takes_no_binding_options(world: RealWorld, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bind", "--check", "credit_default", "--label", "x"]) == 2
    assert "--check only reads" in capsys.readouterr().err


# --- assess ----------------------------------------------------------------------------------------------------


def test_tampered_artifact_after_binding_is_incomplete_and_never_unpickled(
    world: RealWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bind", "credit_default", "--yes"]) == 0
    marker = world.dir / "unpickled"
    world.champion.artifact_path.write_bytes(pickle.dumps(LeavesMarker(marker)))
    capsys.readouterr()

    assert main(["bind", "--check", "credit_default"]) == 30
    assert "hash_mismatch" in capsys.readouterr().out
    code = main([*ASSESS, "--dataset", world.feature_table_urn])
    out = capsys.readouterr().out

    assert code == 30
    assert "hash_mismatch" in evidence_reasons(out)["credit_default_1"]
    assert not marker.exists(), "the tampered artifact was unpickled"


def test_end_to_end_unbound_bind_ingest_assess_blocks(real_world_copy: RealWorld, tmp_path: Path) -> None:
    """The docs/models.md walkthrough as subprocesses: INCOMPLETE missing_binding → bind → the mlflow source → BLOCK.
    `bind` runs with PROVENANCE_CATALOG=datahub and no token, so only the ingestion can bring the keys to DataHub."""
    world = real_world_copy
    env = bind_env(world, tmp_path / "home")
    assess = [*provenance(), *ASSESS, "--dataset", world.feature_table_urn]

    def run(args: list[str], **overrides: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, env=env | overrides, cwd=tmp_path, capture_output=True, text=True, timeout=300)

    unbound = run(assess)
    assert unbound.returncode == 30, unbound.stderr
    assert evidence_reasons(unbound.stdout)["credit_default_1"] == ["missing_binding"]

    bound = run([*provenance(), "bind", "credit_default", "--yes"], PROVENANCE_CATALOG="datahub")
    assert bound.returncode == 0, bound.stderr
    assert "at the next run of its mlflow ingestion source" in bound.stdout
    assert not any(k.startswith("provenance.") for k in datahub_properties(world))  # not written to DataHub

    ingest_mlflow(world)
    properties = datahub_properties(world)
    tags = champion_tags(world)
    assert {k: properties.get(k) for k in BINDING} == {k: tags[k] for k in BINDING}

    blocked = run(assess)
    assert blocked.returncode == 20, blocked.stderr
    summary = json.loads(blocked.stdout)
    assert summary["verdict"] == "BLOCK"
    [model] = summary["models"]
    assert (model["name"], model["verdict"]) == ("credit_default_1", "BLOCK")
    assert model["metrics"]["flip_rate"] >= 0.10
    evidence = json.loads(Path(summary["evidence"]["json"]).read_text())
    binding = evidence["models"][0]["binding"]
    assert binding["artifact_uri"] == tags[ARTIFACT_URI]
    assert binding["artifact_sha256_expected"] == tags[ARTIFACT_SHA256]
    assert (binding["mlflow_model"], binding["mlflow_version"], binding["mlflow_run_id"]) == (
        "credit_default",
        "1",
        world.champion.run_id,
    )
