"""`provenance diff` on the dbt stack: the dbt world's project (tests/realworld/dbt_world.py) built again by the real
dbt CLI into one schema per pull request, each an edit no mutation operator expresses, and the production models
(bound with `provenance bind`, as a user would) scored on base and head by the CLI. Each diff is checked against
this test's own computation: the model's predictions on the two relations read with pandas and joined by key.

- join: claim_amount read through a join on the wrong key (the next claim's amount);
- macro: an edited macro (`money`) multiplies every amount by 1.5 — base and head both built from the macro;
- case: category_bucket's CASE rewritten ('c' joins 'low');
- filter: claims of 2,500 or more dropped;
- unrelated: a new column no model reads.
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp.client.stdio  # noqa: F401  (bound to the session's capture at collection: see test_dbt_gate.py)
import numpy as np
import pandas as pd
import pytest
from sqlalchemy import create_engine

from agent.cli import main
from tests.realworld.dbt_world import (
    DBT_DRIVER,
    FEATURES,
    DbtModel,
    DbtWorld,
    _dbt_env,
    copy_dbt_world,
    dbt_executable,
)
from tests.realworld.test_dbt_gate import EXIT, _clean_environment

pytestmark = pytest.mark.slow

FEATURE_SQL = "models/features/claim_features.sql"
MACRO = "{% macro money(column) %}{{ column }}{% endmacro %}\n"


def _edit(old: str, new: str) -> Any:
    def apply(project: Path) -> None:
        path = project / FEATURE_SQL
        text = path.read_text()
        assert old in text, f"{old!r} not in {path}"
        path.write_text(text.replace(old, new))

    return apply


def _with_macro(body: str) -> Any:
    """The project with the `money` macro (its body given) applied to claim_amount."""

    def apply(project: Path) -> None:
        (project / "macros").mkdir(exist_ok=True)
        (project / "macros" / "money.sql").write_text(MACRO.replace("{{ column }}", body))
        _edit("    claim_amount,\n", "    {{ money('claim_amount') }} as claim_amount,\n")(project)
        for name in ("claim_amount / insured_value", "ln(claim_amount)", "round(claim_amount, -2)"):
            _edit(name, name.replace("claim_amount", "{{ money('claim_amount') }}"))(project)

    return apply


JOIN = (
    "from {{ ref('stg_claims') }}",
    "from {{ ref('stg_claims') }} as s\nleft join {{ ref('stg_claims') }} as nxt on nxt.claim_id = s.claim_id + 1",
)
PULL_REQUESTS = {
    "diff_base": _with_macro("{{ column }}"),
    "pr_macro": _with_macro("round(({{ column }}) * 1.5, 2)"),
    "pr_case": _edit("when category in ('a', 'b') then 'low'", "when category in ('a', 'b', 'c') then 'low'"),
    "pr_filter": _edit("from {{ ref('stg_claims') }}", "from {{ ref('stg_claims') }}\nwhere claim_amount < 2500"),
    "pr_unrelated": _edit("    severity\n", "    severity,\n    'v2' as feature_set\n"),
}


def _join(project: Path) -> None:
    path = project / FEATURE_SQL
    text = path.read_text().replace(*JOIN)
    columns = ("claim_id", "insured_value", "category", "is_fraud", "severity", "region")
    for column in columns:  # every column from the claim itself, but the amount from the joined row
        text = text.replace(f"    {column},", f"    s.{column},").replace(f"({column},", f"(s.{column},")
    text = text.replace("    severity\n", "    s.severity\n").replace("in ('a', 'b')", "in ('a', 'b')")
    text = text.replace("case when category", "case when s.category").replace("when category =", "when s.category =")
    text = text.replace("    claim_amount,\n", "    coalesce(nxt.claim_amount, s.claim_amount) as claim_amount,\n")
    for expression in ("claim_amount / insured_value", "ln(claim_amount)", "round(claim_amount, -2)"):
        fixed = expression.replace("claim_amount", "coalesce(nxt.claim_amount, s.claim_amount)")
        text = text.replace(expression, fixed.replace("insured_value", "s.insured_value"))
    text = text.replace("coalesce(region,", "coalesce(s.region,")
    path.write_text(text)


PULL_REQUESTS["pr_join"] = _join


@dataclass(frozen=True)
class Built:
    world: DbtWorld
    projects: dict[str, Path]  # schema -> its project dir (target/manifest.json inside)


def _profiles(world: DbtWorld, target: Path, schemas: list[str]) -> Path:
    profile = json.loads((world.profiles_dir / "profiles.yml").read_text())
    name = next(iter(profile))
    test = profile[name]["outputs"]["test"]
    profile[name]["outputs"] = {schema: {**test, "schema": schema} for schema in schemas}
    profile[name]["target"] = schemas[0]
    target.mkdir(parents=True, exist_ok=True)
    (target / "profiles.yml").write_text(json.dumps(profile, indent=2))
    return target


@pytest.fixture(scope="session")  # not module: `make test` showed it built twice in one run (setups 76 s, 65 s)
def built(dbt_world: DbtWorld, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """Every pull request built by the real dbt CLI into its own schema (one dbt process, one `run` each)."""
    root = tmp_path_factory.mktemp("pull-requests")
    profiles = _profiles(dbt_world, root / "profiles", list(PULL_REQUESTS))
    projects = {}
    commands = []
    for schema, change in PULL_REQUESTS.items():
        project = root / schema
        shutil.copytree(dbt_world.project_dir, project, ignore=shutil.ignore_patterns("target", "logs"))
        change(project)
        projects[schema] = project
        commands.append(["run", "--project-dir", str(project), "--profiles-dir", str(profiles), "--target", schema])
    dbt = dbt_executable()
    done = subprocess.run(
        [str(dbt.parent / "python"), "-c", DBT_DRIVER, json.dumps(commands)],
        env=_dbt_env(profiles), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return Built(dbt_world, projects)


class Diff:
    def __init__(self, built: Built, capfd: pytest.CaptureFixture[str]) -> None:
        self.built, self.world, self.capfd = built, built.world, capfd

    def run(self, *args: str) -> tuple[int, dict[str, Any]]:
        code = main(["diff", "--dataset", self.world.feature_table_urn, "--warehouse", self.world.postgres_url,
                     *args, "--json"])  # fmt: skip
        out = self.capfd.readouterr()
        assert code in EXIT.values(), out.err
        return code, json.loads(out.out)


def _environment(monkeypatch: pytest.MonkeyPatch, world: DbtWorld, home: Path) -> None:
    _clean_environment(monkeypatch)
    monkeypatch.setenv("PROVENANCE_HOME", str(home))
    monkeypatch.setenv("PROVENANCE_LITE_DB", str(world.lite.catalog_db))
    monkeypatch.setenv("PROVENANCE_ARTIFACT_ROOTS", str(world.dir))
    monkeypatch.chdir(world.dir)


@pytest.fixture(scope="session")
def bound(dbt_world: DbtWorld, tmp_path_factory: pytest.TempPathFactory) -> DbtWorld:
    """A private copy of the world with the three production models bound by `provenance bind`, once per worker."""
    world = copy_dbt_world(dbt_world, tmp_path_factory.mktemp("diff-world") / "dbt-world")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _environment(monkeypatch, world, tmp_path_factory.mktemp("bind-home"))
        monkeypatch.setenv("MLFLOW_TRACKING_URI", world.mlflow_uri)
        for model in (world.fraud, world.severity, world.pricing):
            code = main(["bind", model.name, "--version", model.version, "--label", model.label, "--yes"])
            assert code == 0, model.name
    return world


@pytest.fixture
def diff(
    built: Built, bound: DbtWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> Diff:
    _environment(monkeypatch, bound, tmp_path / "home")
    capfd.readouterr()
    return Diff(Built(bound, built.projects), capfd)


# --- the test's own computation ----------------------------------------------------------------------------------
def relation(world: DbtWorld, schema: str) -> pd.DataFrame:
    engine = create_engine(world.postgres_url)
    with engine.connect() as connection:
        frame = pd.read_sql(f'SELECT * FROM "{schema}"."{FEATURES}"', connection)
    engine.dispose()
    return frame


def own_flips(world: DbtWorld, model: DbtModel, base: str, head: str) -> tuple[int, int]:
    """(flips, rows scored): the model on both relations, joined on claim_id, computed here."""
    pipeline = pickle.loads(model.artifact_path.read_bytes())
    columns = list(pipeline.feature_names_in_)
    joined = relation(world, base).merge(relation(world, head), on="claim_id", suffixes=("_b", "_h"))
    before = pipeline.predict_proba(joined[[f"{c}_b" for c in columns]].set_axis(columns, axis=1))
    after = pipeline.predict_proba(joined[[f"{c}_h" for c in columns]].set_axis(columns, axis=1))
    if model.task == "binary":
        flipped = (before[:, 1] >= 0.5) != (after[:, 1] >= 0.5)
    else:
        flipped = before.argmax(axis=1) != after.argmax(axis=1)
    return int(np.count_nonzero(flipped)), len(joined)


def by_urn(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["urn"]: m for m in answer["models"]}


def assert_matches_own_computation(diff: Diff, answer: dict[str, Any], base: str, head: str) -> None:
    for model in (diff.world.fraud, diff.world.severity, diff.world.pricing):
        measured = by_urn(answer)[model.urn]["metrics"]
        flips, rows = own_flips(diff.world, model, base, head)
        assert (measured["flips"], measured["n"]) == (flips, rows), model.name


# --- the pull requests ---------------------------------------------------------------------------------------------
def test_a_changed_join_blocks_with_the_flips_computed_here(diff: Diff) -> None:
    code, answer = diff.run("--head-schema", "pr_join", "--key", "claim_id")
    assert answer["verdict"] in ("BLOCK", "WARNING") and code == EXIT[answer["verdict"]]
    assert_matches_own_computation(diff, answer, "analytics", "pr_join")
    fraud = by_urn(answer)[diff.world.fraud.urn]
    assert any(c["column"] == "claim_amount" and c["changed"] > 0 for c in fraud["columns"])


def test_an_edited_macro_is_measured_between_the_two_builds_of_the_macro(diff: Diff) -> None:
    code, answer = diff.run("--base-schema", "diff_base", "--head-schema", "pr_macro", "--key", "claim_id")
    assert answer["verdict"] in ("BLOCK", "WARNING"), [m["reasons"] for m in answer["models"]]
    assert_matches_own_computation(diff, answer, "diff_base", "pr_macro")


def test_a_rewritten_case_moves_the_model_that_reads_the_bucket(diff: Diff) -> None:
    _, answer = diff.run("--head-schema", "pr_case", "--key", "claim_id")
    assert_matches_own_computation(diff, answer, "analytics", "pr_case")
    severity = by_urn(answer)[diff.world.severity.urn]
    assert [c["column"] for c in severity["columns"] if c["changed"]] == ["category_bucket"]
    assert by_urn(answer)[diff.world.pricing.urn]["metrics"]["flips"] == 0
    # what the data shows: only the bucket changed, every 'mid' became 'low' (the CASE's edit, read from the rows)
    (reading,) = answer["readings"]
    assert reading["column"] == "category_bucket" and reading["data"].startswith(
        "category_remap(mapping={'mid': 'low'}"
    )


def test_a_filter_reports_the_rows_gone(diff: Diff) -> None:
    _, answer = diff.run("--head-schema", "pr_filter", "--key", "claim_id")
    base, head = relation(diff.world, "analytics"), relation(diff.world, "pr_filter")
    gone = len(set(base["claim_id"]) - set(head["claim_id"]))
    assert gone > 0
    (sides,) = answer["datasets"]
    assert (sides["only_base"], sides["only_head"], sides["base_rows"]) == (gone, 0, len(base))
    for model in answer["models"]:
        assert model["rows_gone"] == gone
        assert any(r["code"].startswith("rows_gone_share") for r in model["reasons"])
    with_markdown = diff.built.projects["pr_filter"].parent / "comment.md"
    diff.run("--head-schema", "pr_filter", "--key", "claim_id", "--markdown", str(with_markdown))
    assert f"{gone:,} gone" in with_markdown.read_text()


def test_a_change_no_model_reads_passes_with_every_model_measured(diff: Diff) -> None:
    code, answer = diff.run("--head-schema", "pr_unrelated", "--key", "claim_id")
    assert (answer["verdict"], code) == ("PASS", 0), [m["reasons"] for m in answer["models"]]
    assert answer["coverage_complete"] and len(answer["models"]) == 3
    assert all(m["metrics"] is not None and m["metrics"]["flips"] == 0 for m in answer["models"])
    assert [(r["column"], r["data"]) for r in answer["readings"]] == [
        ("feature_set", "a new column: only the head relation has it")
    ]


def test_the_two_dbt_manifests_name_the_relations(diff: Diff) -> None:
    head = diff.built.projects["pr_case"] / "target" / "manifest.json"
    _, by_manifest = diff.run("--base-manifest", str(diff.world.manifest_path), "--head-manifest", str(head),
                              "--key", "claim_id")  # fmt: skip
    (sides,) = by_manifest["datasets"]
    assert (sides["base"], sides["head"]) == (f"analytics.{FEATURES}", f"pr_case.{FEATURES}")


def test_without_a_key_the_diff_says_how_to_name_one(diff: Diff) -> None:
    code = main(["diff", "--dataset", diff.world.feature_table_urn, "--warehouse", diff.world.postgres_url,
                 "--head-schema", "pr_case"])  # fmt: skip
    assert code == 2
    assert "pass --key" in diff.capfd.readouterr().err
