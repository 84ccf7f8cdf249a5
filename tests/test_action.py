"""The GitHub Action (action.yml): valid composite-action metadata, and its `run:` steps executed as the runner
would (tests/action_runner.py) in a temporary git repository against the demo catalog, committed as an embedded
DataHub Lite file.

Not run here: the `uses: actions/setup-python` step, and the `Install Provenance` step (`pip install` of this
checkout), replaced by this environment's virtualenv on PATH: the commands after it are the action's own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from seed.catalog import POSTGRES_TABLE_URN
from tests.action_runner import EXPRESSION, ActionRun, Contexts, run_action
from tests.warm_start import cleared
from tools.changes.markdown import MARKER

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
SCHEMA = json.loads((ROOT / "tests" / "data" / "composite_action.schema.json").read_text())
VENV_BIN = str(Path(sys.executable).parent)

BASE_SQL = "select\n    id,\n    amount,\n    merchant_category\nfrom raw.transactions\n"
CENTS_SQL = BASE_SQL.replace("    amount,", "    amount * 100 as amount,")
ROUND_CHANGES = f"""\
version: 1
changes:
  - dataset: {POSTGRES_TABLE_URN}
    field: amount
    op: round
    params: {{decimals: 2}}
"""


def test_action_yml_is_a_valid_composite_action() -> None:
    jsonschema.validate(ACTION, SCHEMA)
    steps = ACTION["runs"]["steps"]
    ids = [s["id"] for s in steps if "id" in s]
    assert len(ids) == len(set(ids))
    assert [s["uses"] for s in steps if "uses" in s] == ["actions/setup-python@v5"]
    for index, step in enumerate(steps):
        # Inputs reach scripts through env only (no expression inside `run:`: no script injection).
        assert "run" not in step or not EXPRESSION.search(step["run"]), step["name"]
        for expression in EXPRESSION.findall(json.dumps(step)):
            for name in re.findall(r"inputs\.([\w-]+)", expression):
                assert name in ACTION["inputs"], (step["name"], name)
            for step_id in re.findall(r"steps\.([\w-]+)\.outputs", expression):
                assert step_id in [s.get("id") for s in steps[:index]], (step["name"], step_id)
    for output in ACTION["outputs"].values():
        for step_id, key in re.findall(r"steps\.([\w-]+)\.outputs\.([\w-]+)", output["value"]):
            script = next(s["run"] for s in steps if s.get("id") == step_id)
            assert f"{key}=" in script, (step_id, key)  # the step writes that output
    assert ACTION["inputs"]["fail-on"]["default"] == "BLOCK,INCOMPLETE"


def test_the_example_workflow_uses_the_actions_inputs_and_outputs() -> None:
    workflow = yaml.safe_load((ROOT / "examples" / "github" / "provenance-gate.yml").read_text())
    steps = workflow["jobs"]["provenance"]["steps"]
    gate = next(s for s in steps if s.get("id") == "provenance")
    assert set(gate["with"]) <= set(ACTION["inputs"])
    # the runs are uploaded as an artifact (a zip): name paths in it, never per-file URLs under the run's page
    assert "evidence-url-base" not in gate["with"] and "actions/runs" in gate["with"]["evidence-artifact"]
    for step in steps:
        for output in re.findall(r"steps\.provenance\.outputs\.([\w-]+)", json.dumps(step)):
            assert output in ACTION["outputs"]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def init_repo(repo: Path) -> Path:
    """Commit what `repo` holds as the base commit of a new repository."""
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.com")
    git(repo, "config", "user.name", "ci")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    return repo


@pytest.fixture
def repo(seeded_template: Path, tmp_path: Path) -> Path:
    """A checkout with a SQL model (base commit) and the demo catalog committed as a Lite file with its models."""
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    shutil.copytree(seeded_template, repo / "catalog", ignore=shutil.ignore_patterns("logs", "mcp-home", "runs"))
    (repo / "models" / "transactions.sql").write_text(BASE_SQL)
    return init_repo(repo)


@pytest.fixture
def plain_repo(tmp_path: Path) -> Path:
    """A checkout with a SQL model and no catalog, for the steps that need none."""
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    (repo / "models" / "transactions.sql").write_text(BASE_SQL)
    return init_repo(repo)


def run_in(repo: Path, tmp_path: Path, given: dict[str, str], **options: Any) -> ActionRun:
    temp = tmp_path / "runner-temp"
    temp.mkdir(exist_ok=True)
    contexts = Contexts(
        github={
            "action_path": str(ROOT),
            "workspace": str(repo),
            "sha": git(repo, "rev-parse", "HEAD"),
            "event": {
                "pull_request": {
                    "base": {"sha": options.pop("base", None) or git(repo, "rev-list", "--max-parents=0", "HEAD")}
                }
            },
        }
        if options.pop("pull_request", True)
        else {"action_path": str(ROOT), "workspace": str(repo)},
        runner={"temp": str(temp)},
        steps=options.pop("preset", {}),  # outputs of earlier steps, when only a later one runs
    )
    keep = {k: v for k, v in os.environ.items() if not cleared(k, ("GITHUB_", "PROVENANCE_", "DATAHUB_"))}
    base_env = {**keep, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    return run_action(ACTION, given, contexts, workspace=repo, base_env=base_env, skip=("install",), **options)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_inferred_cents_change_blocks_the_job(repo: Path, tmp_path: Path) -> None:
    (repo / "models" / "transactions.sql").write_text(CENTS_SQL)
    git(repo, "commit", "-qam", "amounts in cents")
    catalog_before = digest(repo / "catalog" / "catalog.db")

    run = run_in(repo, tmp_path, {"lite-file": "catalog/catalog.db", "paths": "models"})

    statuses = {s.name: s.status for s in run.steps}
    assert statuses == {
        "Set up Python": "skipped",
        "Install Provenance": "skipped",
        "Choose the catalog": "success",
        "Find the changes": "success",
        "Check the changes": "success",
        "Gate": "failure",
    }, [(s.name, s.stdout, s.stderr) for s in run.steps]
    assert run.env["PROVENANCE_CATALOG"] == "embedded"
    # a pull request: the catalog comes from the base commit, never from the head's checkout
    assert run.env["PROVENANCE_LITE_DB"] == str(tmp_path / "runner-temp" / "provenance-base" / "catalog" / "catalog.db")
    inferred = Path(run.outputs["changes-file"]).read_text()
    assert "op: scale" in inferred and "factor: 100" in inferred and "file: models/transactions.sql" in inferred
    assert (run.outputs["verdict"], run.outputs["exit-code"]) == ("BLOCK", "20")
    gate = run.step("Gate")
    assert gate.returncode == 1 and "::error::Provenance verdict BLOCK (fail-on: BLOCK,INCOMPLETE)" in gate.stdout

    summary = Path(run.outputs["summary-file"]).read_text()
    assert summary.startswith("**BLOCK** ") and summary.rstrip().endswith(MARKER)
    assert "`payments.public.transactions.amount: scale(factor=100)`" in summary
    assert "from `models/transactions.sql:3`" in summary
    assert run.step("Check the changes").summary == summary  # appended to the job summary
    result = json.loads(Path(run.outputs["result-file"]).read_text())
    assert result["verdict"] == "BLOCK" and result["entries"][0]["run_id"]
    assert (Path(run.outputs["runs-dir"]) / result["entries"][0]["run_id"] / "evidence.json").is_file()
    assert digest(repo / "catalog" / "catalog.db") == catalog_before  # a gate never writes to the catalog


@pytest.mark.slow
def test_a_given_changes_file_that_passes_passes_the_gate(repo: Path, tmp_path: Path) -> None:
    (repo / "CHANGES.yml").write_text(ROUND_CHANGES)
    run = run_in(repo, tmp_path, {"lite-file": "catalog/catalog.db", "changes": "CHANGES.yml"}, pull_request=False)
    assert run.succeeded, [(s.name, s.stdout, s.stderr) for s in run.steps]
    assert run.outputs["changes-file"] == "CHANGES.yml"
    assert (run.outputs["verdict"], run.outputs["exit-code"]) == ("PASS", "0")
    assert "passes the gate" in run.step("Gate").stdout
    assert Path(run.outputs["summary-file"]).read_text().startswith("**PASS** ")


@pytest.mark.parametrize(
    ("code", "verdict", "fail_on", "passes"),
    [
        ("0", "PASS", None, True),
        ("10", "WARNING", None, True),
        ("20", "BLOCK", None, False),
        ("30", "INCOMPLETE", None, False),
        ("30", "INCOMPLETE", "BLOCK", True),
        ("10", "WARNING", "BLOCK,INCOMPLETE,WARNING", False),
        ("20", "BLOCK", " block , incomplete", False),
        ("2", "ERROR", "BLOCK", False),
        ("1", "ERROR", "", False),
    ],
)
def test_the_gate_maps_the_exit_code_by_fail_on(
    plain_repo: Path, tmp_path: Path, code: str, verdict: str, fail_on: str | None, passes: bool
) -> None:
    given = {} if fail_on is None else {"fail-on": fail_on}
    contexts_steps = {"check": {"outputs": {"exit-code": code, "verdict": verdict}}}
    run = run_in(plain_repo, tmp_path, given, only=("Gate",), preset=contexts_steps)
    gate = run.step("Gate")
    assert (gate.status == "success") is passes, gate.stdout
    if not passes:
        assert "::error::" in gate.stdout


@pytest.mark.slow
def test_a_pull_request_cannot_swap_the_catalog_or_the_policy(repo: Path, tmp_path: Path) -> None:
    """The head commit replaces the committed catalog with a file of its own and loosens the policy: the gate reads
    both from the base commit, so the ×100 change still BLOCKs."""
    (repo / "policy.yml").write_text((ROOT / "policies" / "default-v2.yaml").read_text())
    git(repo, "add", "policy.yml")
    git(repo, "commit", "-qm", "the team's policy")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "models" / "transactions.sql").write_text(CENTS_SQL)
    (repo / "catalog" / "catalog.db").write_bytes(b"a catalog the pull request brought")
    (repo / "policy.yml").write_text("this: is not the team's policy\n")
    git(repo, "commit", "-qam", "amounts in cents, and a catalog and a policy of my own")

    run = run_in(
        repo, tmp_path, {"lite-file": "catalog/catalog.db", "policy": "policy.yml", "paths": "models"}, base=base
    )

    assert (run.outputs["verdict"], run.outputs["exit-code"]) == ("BLOCK", "20"), [
        (s.name, s.stdout, s.stderr) for s in run.steps
    ]
    assert "from the base commit" in run.step("Choose the catalog").stdout
    assert Path(run.env["PROVENANCE_LITE_DB"]).read_bytes() != (repo / "catalog" / "catalog.db").read_bytes()


def test_a_catalog_only_the_head_has_is_refused(plain_repo: Path, tmp_path: Path) -> None:
    (plain_repo / "catalog.db").write_bytes(b"brought by the pull request")
    git(plain_repo, "add", "catalog.db")
    git(plain_repo, "commit", "-qm", "my own catalog")
    run = run_in(plain_repo, tmp_path, {"lite-file": "catalog.db"}, only=("Choose the catalog",))
    step = run.step("Choose the catalog")
    assert step.returncode == 2 and "is not in the pull request's base commit" in step.stderr


def test_no_catalog_fails_with_advice(plain_repo: Path, tmp_path: Path) -> None:
    run = run_in(plain_repo, tmp_path, {}, only=("Choose the catalog",))
    step = run.step("Choose the catalog")
    assert step.returncode == 2 and "set datahub-gms-url (or DATAHUB_GMS_URL) or lite-file" in step.stderr


def test_a_gms_url_selects_datahub_and_masks_the_token(plain_repo: Path, tmp_path: Path) -> None:
    given = {"datahub-gms-url": "https://datahub.example:8080", "datahub-gms-token": "s3cret"}
    run = run_in(plain_repo, tmp_path, given, only=("Choose the catalog",))
    assert run.step("Choose the catalog").status == "success"
    assert run.env["PROVENANCE_CATALOG"] == "datahub"
    assert (run.env["DATAHUB_GMS_URL"], run.env["DATAHUB_GMS_TOKEN"]) == ("https://datahub.example:8080", "s3cret")
    assert "::add-mask::s3cret" in run.step("Choose the catalog").stdout


@pytest.mark.slow
def test_diff_mode_runs_the_models_on_the_pull_requests_relations(repo: Path, tmp_path: Path) -> None:
    from seed.diff_warehouse import HEAD_SCHEMA, build_demo_warehouse

    warehouse = build_demo_warehouse(tmp_path / "warehouse")
    given = {
        "mode": "diff", "lite-file": "catalog/catalog.db", "warehouse-url": f"duckdb:///{warehouse}",
        "datasets": POSTGRES_TABLE_URN, "head-schema": HEAD_SCHEMA,
    }  # fmt: skip
    run = run_in(repo, tmp_path, given)
    statuses = {s.name: s.status for s in run.steps}
    assert statuses["Check the changes"] == "success" and statuses["Gate"] == "failure", [
        (s.name, s.stdout, s.stderr) for s in run.steps
    ]
    assert (run.outputs["verdict"], run.outputs["exit-code"]) == ("BLOCK", "20")
    summary = Path(run.outputs["summary-file"]).read_text()
    assert summary.startswith("**Provenance diff: BLOCK** — 3 of 3 production models measured")
    evidence = json.loads(Path(run.outputs["result-file"]).read_text())
    assert (Path(run.outputs["runs-dir"]).parent / "diffs" / evidence["run_id"] / "diff.json").is_file()
    assert "Find the changes" in statuses and "diff mode" in run.step("Find the changes").stdout

    missing = run_in(repo, tmp_path, {**given, "warehouse-url": ""})
    assert "diff mode needs warehouse-url" in missing.step("Check the changes").stderr
