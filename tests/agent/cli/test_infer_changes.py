"""`provenance infer-changes` as a user runs it: a real git repository with two commits of SQL models (a dbt model
with Jinja and an unparseable file), the real embedded demo catalog resolving the model's dataset, the written
CHANGES.yml read back by the schema `check` uses, and the documented exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agent.cli import main
from agent.cli.parser import NULL_SHARE_DEFAULT
from seed.catalog import POSTGRES_TABLE_URN
from tests.tools.changes.repo import GitRepo
from tools.changes.schema import ChangeSet, load_change_set
from tools.changes.sqlmap import DEFAULT_NULL_SHARE

BASE_MODEL = """{{ config(materialized='table') }}
select
    transaction_id,
    amount,
    merchant_category,
    hour
from {{ source('payments', 'transactions') }}
"""

HEAD_MODEL = """{{ config(materialized='table') }}
select
    transaction_id,
    round(amount * 100, 0) as amount,
    case when merchant_category = 'grocery' then 'food' else merchant_category end as merchant_category
from {{ source('payments', 'transactions') }}
"""


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.create(tmp_path / "warehouse")
    repo.commit("base", {"models/marts/transactions.sql": BASE_MODEL, "analyses/adhoc.sql": "SELECT 1 AS one"})
    repo.commit(
        "head",
        {
            "models/marts/transactions.sql": HEAD_MODEL.replace("round(amount * 100, 0)", "amount * 100"),
            "analyses/adhoc.sql": "SELECT 1 AS one,, FROM",
        },
    )
    return repo


def _subprocess(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A real process for runs that open the catalog: its MCP server is spawned with the process's stderr, which
    pytest's capture cannot provide."""
    env = {**os.environ, "PROVENANCE_HOME": str(home)}
    command = [sys.executable, "-m", "agent.cli", "infer-changes", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def _run(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.setenv("PROVENANCE_HOME", str(home))
    code = main(["infer-changes", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_infers_the_change_file_through_the_demo_catalog(repo: GitRepo, seeded_home: Path, tmp_path: Path) -> None:
    output = tmp_path / "CHANGES.yml"
    done = _subprocess(seeded_home, "--repo", str(repo.root), "--base", "main~1", "--output", str(output))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    found = load_change_set(output)  # what `provenance check` reads: valid as written
    (amount,) = found.changes[:1]
    assert (amount.dataset, amount.field, amount.op, amount.params) == (
        POSTGRES_TABLE_URN,
        "amount",
        "scale",
        {"factor": 100},
    )
    assert amount.source is not None and (amount.source.file, amount.source.line) == (
        "models/marts/transactions.sql",
        4,
    )
    remap = found.changes[1]
    assert (remap.field, remap.op, remap.params) == (
        "merchant_category",
        "category_remap",
        {"mapping": {"grocery": "food"}},
    )
    (hour,) = found.structural
    assert (hour.dataset, hour.field, hour.change) == (POSTGRES_TABLE_URN, "hour", "dropped")
    (broken,) = found.unmapped
    assert broken.file == "analyses/adhoc.sql" and "cannot parse" in broken.reason
    assert "models/marts/transactions.sql:4  amount  scale factor=100  (high)" in out
    assert "analyses/adhoc.sql:1  *  REVIEW BY HAND" in out
    assert output.read_text().startswith("# Written by `provenance infer-changes")


@pytest.mark.slow
def test_stdout_and_json_outputs(repo: GitRepo, tmp_path: Path, seeded_home: Path) -> None:
    # --dataset names the model's dataset, yet the catalog is still read for its schema: a home without a catalog
    # is refused (it would leave every finding "not in the catalog"), saying where it looked
    args = ["--repo", str(repo.root), "--base", "main~1", "--dataset", f"transactions={POSTGRES_TABLE_URN}"]
    empty = _subprocess(tmp_path / "empty-home", *args, "--output", "-")
    assert empty.returncode == 2 and f"no catalog at {tmp_path / 'empty-home' / 'catalog.db'}" in empty.stderr
    home = seeded_home
    done = _subprocess(home, *args, "--output", "-")
    assert done.returncode == 0, done.stderr
    written = yaml.safe_load(done.stdout)
    assert written["version"] == 1 and written["changes"], written
    assert [c["field"] for c in written["changes"]] == ["amount", "merchant_category"]
    assert "2 change(s), 1 structural, 1 to review by hand -> stdout" in done.stderr  # the summary: stderr
    assert "REVIEW BY HAND" in done.stderr and "REVIEW BY HAND" not in done.stdout

    done = _subprocess(home, *args, "--output", str(tmp_path / "c.yml"), "--json")
    assert done.returncode == 0, done.stderr
    as_json = ChangeSet.model_validate_json(done.stdout)  # every field, defaults included
    assert as_json == ChangeSet.model_validate(written) == load_change_set(tmp_path / "c.yml")
    assert "REVIEW BY HAND" in done.stderr and "REVIEW BY HAND" not in done.stdout


def test_no_sql_change_writes_an_empty_change_set_without_opening_the_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo.create(tmp_path / "r")
    repo.commit("base", {"README.md": "a\n", "m.sql": "SELECT 1 AS a"})
    repo.commit("docs", {"README.md": "b\n"})
    home = tmp_path / "home"
    code, out, err = _run(home, monkeypatch, capsys, "--repo", str(repo.root), "--base", "HEAD~1", "--output", "-")
    assert code == 0, err
    assert yaml.safe_load(out) == {"version": 1, "changes": []}
    assert "0 SQL file(s) changed" in err
    assert not (home / "catalog.db").exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--base", "no-such-branch"], "unknown git ref 'no-such-branch'"),
        (["--base", "HEAD~1", "--head", "v9"], "unknown git ref 'v9'"),
        (["--base", "HEAD~1", "--dataset", "transactions"], "--dataset expects NAME=URN"),
        (["--base", "HEAD~1", "--json", "--output", "-"], "both print on stdout"),
        (["--base", "HEAD~1", "--dialect", "postgress"], "Did you mean postgres?"),
    ],
    ids=["unknown-base", "unknown-head", "bad-mapping", "json-and-stdout", "unknown-dialect"],
)
def test_bad_input_exits_2_and_writes_nothing(
    repo: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    needle: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(tmp_path / "home", monkeypatch, capsys, "--repo", str(repo.root), *args)
    assert code == 2 and needle in err and out == ""
    assert not (tmp_path / "CHANGES.yml").exists() and not (tmp_path / "home" / "catalog.db").exists()


def test_not_a_git_repository_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _run(tmp_path / "home", monkeypatch, capsys, "--repo", str(tmp_path), "--base", "main")
    assert code == 2 and "not inside a git repository" in err


def test_a_null_share_out_of_range_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["infer-changes", "--base", "main", "--null-share", "1.5"])
    assert exited.value.code == 2 and "must be in (0, 1]" in capsys.readouterr().err


def test_the_parsers_null_share_default_is_the_mappings() -> None:
    assert NULL_SHARE_DEFAULT == DEFAULT_NULL_SHARE
