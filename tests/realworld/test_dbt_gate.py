"""The pull-request gate end to end on the dbt stack (tests/realworld/dbt_world.py): PostgreSQL, the dbt CLI, MLflow and
DataHub's own postgres, dbt and mlflow sources, read through the official MCP server, in both catalog variants
(`lite`: the datahub-lite sink, which refuses the dbt source's PATCH proposals; `rest`: the REST emitter into
`provenance catalog serve`, which applies them).

The models are bound the way a user binds them (`provenance bind`, which also records the registry's aliases);
after that the assessments run with no MLflow access, so the alias-only model is production by what the catalog
holds. Every assessment is checked against the invariant of the issue: each model reached with a production
marker appears in the answer, tested or INCOMPLETE with its reason — never silently absent.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import mcp.client.stdio  # noqa: F401  (see below)
import pytest

from agent.cli import main
from tests.realworld.dbt_world import CatalogVariant, DbtModel, DbtWorld
from tests.warm_start import cleared

pytestmark = pytest.mark.slow
# mcp's stdio_client binds `errlog=sys.stderr` when it is first imported. Imported here, at collection, it binds
# pytest's session-long capture file; imported lazily inside a test, it would bind that test's capture, closed
# by the time a later test starts the MCP server.

EXIT = {"PASS": 0, "WARNING": 10, "BLOCK": 20, "INCOMPLETE": 30}
# A PASS for a production model is an answer only with one of these reasons (or metrics that were measured).
PASS_WITHOUT_MEASURING = {"field_not_an_input", "change_not_carried"}


class Gate:
    """One variant of the dbt world, its models bound, and the CLI pointed at its catalog."""

    def __init__(self, world: DbtWorld, variant: CatalogVariant, capfd: pytest.CaptureFixture[str]) -> None:
        self.world, self.variant, self.capfd = world, variant, capfd

    def cli(self, *args: str) -> tuple[int, str]:
        """The exit code and stdout (stderr joins it when the command fails, for the assertion message)."""
        code = main(list(args))
        captured = self.capfd.readouterr()
        return code, captured.out if code in EXIT.values() else captured.out + captured.err

    def assess(self, dataset: str, field: str, op: str, *params: str, fraction: float = 1.0) -> dict[str, Any]:
        args = ["assess", "--dataset", dataset, "--field", field, "--op", op, "--fraction", str(fraction)]
        for param in params:
            args += ["--param", param]
        code, out = self.cli(*args, "--no-publish", "--json")
        answer: dict[str, Any] = json.loads(out)
        assert code == EXIT[answer["verdict"]], answer["reasons"]
        assert_every_production_model_answered(answer)
        return answer

    def model(self, answer: dict[str, Any], model: DbtModel) -> dict[str, Any]:
        found = [m for m in answer["models"] if m["urn"] == model.urn]
        assert len(found) == 1, f"{model.name} is not in the answer: {answer['models']} {answer['not_tested']}"
        return found[0]


def assert_every_production_model_answered(answer: dict[str, Any]) -> None:
    """Each model the discovery reached with a production marker is in the answer, tested or INCOMPLETE."""
    answered = {m["urn"]: m for m in answer["models"]}
    production = [r for r in answer["coverage"]["models_reached"] if r["production"]]
    for reach in production:
        assert reach["urn"] in answered, f"{reach['name']} ({reach['marker']}) was reached but is not in the answer"
        model = answered[reach["urn"]]
        if model["verdict"] == "INCOMPLETE":
            assert model["reason_codes"], f"{reach['name']} is INCOMPLETE without a reason"
        elif model["metrics"] is None:
            assert model["verdict"] == "PASS" and set(model["reason_codes"]) <= PASS_WITHOUT_MEASURING, model
    assert not {n["urn"] for n in answer["not_tested"]} & {r["urn"] for r in production}


def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if cleared(k, ("DATAHUB_GMS", "PROVENANCE_", "MLFLOW_", "GOOGLE_"))]:
        monkeypatch.delenv(key)


def _bind(gate: Gate, monkeypatch: pytest.MonkeyPatch, model: DbtModel) -> str:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", gate.world.mlflow_uri)
    try:
        args = ["bind", model.name, "--version", model.version, "--label", model.label, "--yes"]
        code, out = gate.cli(*args)
    finally:
        monkeypatch.delenv("MLFLOW_TRACKING_URI")
    assert code == 0, out
    return out


@pytest.fixture(params=["lite", "rest"])
def gate(
    request: pytest.FixtureRequest,
    dbt_world_copy: DbtWorld,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> Gate:
    _clean_environment(monkeypatch)
    variant: CatalogVariant = getattr(dbt_world_copy, request.param)
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROVENANCE_LITE_DB", str(variant.catalog_db))
    # The gate assesses without MLFLOW_TRACKING_URI (production by the alias `bind` recorded), so the registry does
    # not vouch for the model files: the operator lists the world's folder (MLflow store, evaluation data) as a root.
    monkeypatch.setenv("PROVENANCE_ARTIFACT_ROOTS", str(dbt_world_copy.dir))
    monkeypatch.chdir(dbt_world_copy.dir)  # MLflow's client may create ./mlruns
    chosen = Gate(dbt_world_copy, variant, capfd)
    for model in (chosen.world.fraud, chosen.world.severity, chosen.world.pricing):
        out = _bind(chosen, monkeypatch, model)
        if model.aliases:
            assert f"provenance.aliases={','.join(model.aliases)}" in out
    return chosen


def test_a_scale_at_the_dbt_source_node_blocks_and_carries_through_each_expression(gate: Gate) -> None:
    world = gate.world
    baselines = set()
    for dataset in (world.dbt_source_urn, world.raw_table_urn):
        answer = gate.assess(dataset, "amount", "scale", "factor=100")
        assert answer["verdict"] == "BLOCK", answer["reasons"]
        fraud = gate.model(answer, world.fraud)
        # production by the alias `bind` recorded from the registry: DataHub's mlflow source tags it mlflow_none
        assert "champion" in (fraud["production_marker"] or "")
        assert fraud["verdict"] == "BLOCK" and fraud["metrics"] is not None
        baselines.add(fraud["metrics"]["binary"]["auc"]["baseline"])
        severity = gate.model(answer, world.severity)
        assert severity["metrics"] is not None, severity  # ln(amount ×100) = log_amount + ln 100: a shift
        pricing = gate.model(answer, world.pricing)
        assert (pricing["verdict"], pricing["reason_codes"]) == ("INCOMPLETE", ["non_identity_transform"])
        assert "round(" in " ".join(pricing["reasons"]).lower(), pricing["reasons"]
        assert [n["urn"] for n in answer["not_tested"]] == [world.challenger.urn]
        evidence = json.loads(Path(answer["evidence"]["json"]).read_text())
        [record] = [m for m in evidence["models"] if m["urn"] == world.fraud.urn]
        derivation = " ".join(record["experiment"]["derivation"])
        assert "amount_ratio" in derivation and "×100" in derivation.replace("x100", "×100"), derivation
        log = [m for m in evidence["models"] if m["urn"] == world.severity.urn][0]["experiment"]["derivation"]
        assert any("log_amount" in line and "shift" in line for line in log), log
    # The change reaches two of fraud's inputs (claim_amount, amount_ratio); its baseline is still the model on
    # unchanged rows, the same as for a change that reaches one input.
    one_input = gate.assess(world.raw_table_urn, "region", "null_inject", fraction=0.3)
    assert baselines == {gate.model(one_input, world.fraud)["metrics"]["binary"]["auc"]["baseline"]}


def test_a_dbt_node_whose_table_is_missing_is_incomplete_never_a_pass(gate: Gate) -> None:
    """The recipe forgot the warehouse source: the dbt source node has no table to walk on from."""
    world = gate.world
    missing = f"dbt node {world.dbt_source_urn}: the table it materialises cannot be found"

    def forget(urn: str) -> None:
        with sqlite3.connect(gate.variant.catalog_db) as conn:
            conn.execute("DELETE FROM metadata_aspect_v2 WHERE urn = ?", (urn,))
        conn.close()

    forget(world.raw_table_urn)
    # dbt's own lineage (source node -> staging node) still reaches the models: the BLOCK found stands, and the
    # coverage says what could not be read
    answer = gate.assess(world.dbt_source_urn, "amount", "scale", "factor=100")
    assert answer["verdict"] == "BLOCK" and not answer["coverage"]["complete"]
    assert any(missing in line for line in answer["coverage"]["unreadable"]), answer["coverage"]["unreadable"]

    forget(world.dbt_staging_urn)  # now the walk from the source node dead-ends: no model is found
    answer = gate.assess(world.dbt_source_urn, "amount", "scale", "factor=100")
    assert answer["verdict"] == "INCOMPLETE", answer["reasons"]
    reasons = " ".join(answer["reasons"])
    assert missing in reasons and "provenance catalog ingest" in reasons, reasons


def test_a_category_rename_reaches_the_multiclass_model_through_its_case_bucket(gate: Gate) -> None:
    world = gate.world
    answer = gate.assess(world.raw_table_urn, "category", "category_remap", 'mapping={"c": "d"}')
    severity = gate.model(answer, world.severity)
    assert severity["production_marker"] and severity["metrics"] is not None, severity
    evidence = json.loads(Path(answer["evidence"]["json"]).read_text())
    [record] = [m for m in evidence["models"] if m["urn"] == world.severity.urn]
    assert any("category_bucket" in line and "mid" in line and "high" in line
               for line in record["experiment"]["derivation"]), record["experiment"]  # fmt: skip

    # `a` shares its bucket with `b`: renaming it is not a rename of the bucket, so it is not guessed
    answer = gate.assess(world.raw_table_urn, "category", "category_remap", 'mapping={"a": "z"}')
    severity = gate.model(answer, world.severity)
    assert (severity["verdict"], severity["reason_codes"]) == ("INCOMPLETE", ["non_identity_transform"])
    assert "case" in " ".join(severity["reasons"]).lower(), severity["reasons"]


def test_nulls_at_the_source_arrive_as_the_coalesce_default(gate: Gate) -> None:
    world = gate.world
    answer = gate.assess(world.dbt_source_urn, "region", "null_inject", fraction=0.3)
    for model in (world.fraud, world.severity):
        assert gate.model(answer, model)["metrics"] is not None
    evidence = json.loads(Path(answer["evidence"]["json"]).read_text())
    [record] = [m for m in evidence["models"] if m["urn"] == world.fraud.urn]
    assert any("unknown" in line for line in record["experiment"]["derivation"]), record["experiment"]


def test_ask_treats_the_dbt_model_and_its_table_as_one(gate: Gate) -> None:
    code, out = gate.cli("ask", f"What depends on {gate.world.database}.analytics.claim_features.claim_amount?")
    assert code == 0, out
    assert "several datasets" not in out
    for model in (gate.world.fraud, gate.world.challenger):
        assert model.name in out
    assert "sibling" in out


def test_the_pr_gate_maps_a_dbt_model_file_to_one_dataset(gate: Gate, tmp_path: Path) -> None:
    repo = tmp_path / "warehouse"
    subprocess.run(["cp", "-r", str(gate.world.project_dir), str(repo)], check=True)
    for junk in ("target", "logs", "dbt_packages"):
        subprocess.run(["rm", "-rf", str(repo / junk)], check=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], check=True)
    model = repo / "models" / "features" / "claim_features.sql"
    model.write_text(model.read_text().replace("    claim_amount,\n", "    claim_amount * 100 as claim_amount,\n"))
    subprocess.run([*git, "commit", "-q", "-am", "cents"], check=True)

    out_file = tmp_path / "CHANGES.yml"
    code, out = gate.cli("infer-changes", "--repo", str(repo), "--base", "HEAD~1", "--output", str(out_file), "--json")
    assert code == 0, out
    changes = json.loads(out)
    [change] = changes["changes"]
    assert change["field"] == "claim_amount" and change["op"] == "scale", change
    assert change["dataset"] in (gate.world.feature_table_urn, gate.world.dbt_features_urn), change
    assert not changes.get("unmapped"), changes["unmapped"]
