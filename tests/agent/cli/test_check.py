"""`provenance check CHANGES.yml` end to end on the demo catalog: one combined verdict and exit code, each change
assessed through the assess path with its own evidence run, structural and unmapped entries, the Markdown summary,
and publication only with an approval.

Two CLI subprocesses (three assessments in all) start together in the background; the refusals and the
catalog-free case run in-process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.cli import main
from policies import DEFAULT_POLICY_PATH, Verdict
from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN
from tools.changes.markdown import MARKER
from tools.changes.result import CheckResult
from tools.evidence.store import read_evidence

COMBINED = f"""\
version: 1
changes:
  - dataset: {POSTGRES_TABLE_URN}
    field: amount
    op: scale
    params: {{factor: 100}}
    note: amounts now in cents
  - dataset: {POSTGRES_TABLE_URN}
    field: amount
    op: round
    params: {{decimals: 2}}
  - dataset: {POSTGRES_TABLE_URN}
    field: amount_usd
    op: scale
    params: {{factor: 100}}
structural:
  - dataset: {POSTGRES_TABLE_URN}
    field: amount
    change: dropped
  - dataset: {POSTGRES_TABLE_URN}
    field: no_such_column
    change: renamed
    renamed_to: still_missing
unmapped:
  - file: models/transactions.sql
    line: 7
    column: risk_band
    reason: "CASE expression changed; no operator fits"
"""

APPROVED_ROUND = f"""\
version: 1
approval:
  by: alice@example.com
  note: reviewed with the fraud team
changes:
  - dataset: {POSTGRES_TABLE_URN}
    field: amount
    op: round
    params: {{decimals: 2}}
"""


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class CliRun:
    home: Path
    workdir: Path
    catalog_before: str
    future: Future[subprocess.CompletedProcess[str]]

    def wait(self) -> tuple[int, str, str]:
        done = self.future.result(timeout=600)
        return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def cli_runs(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, CliRun]]:
    cases = {
        "combined": (COMBINED, ["--json", "--markdown", "summary.md"]),
        "publish": (APPROVED_ROUND, ["--json", "--publish"]),
    }
    runs: dict[str, CliRun] = {}
    pool = ThreadPoolExecutor(max_workers=2)
    for name, (text, flags) in cases.items():
        workdir = tmp_path_factory.mktemp(f"check-{name}")
        home = workdir / "home"
        shutil.copytree(seeded_template, home, ignore=shutil.ignore_patterns("logs", "mcp-home"))
        (workdir / "CHANGES.yml").write_text(text)
        env = {**os.environ, "PROVENANCE_HOME": str(home)}
        command = [sys.executable, "-m", "agent.cli", "check", "CHANGES.yml", *flags]
        before = digest(home / "catalog.db")
        future = pool.submit(subprocess.run, command, capture_output=True, text=True, env=env, cwd=workdir, timeout=600)
        runs[name] = CliRun(home, workdir, before, future)
    yield runs
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def combined(cli_runs: dict[str, CliRun]) -> tuple[CliRun, CheckResult]:
    run = cli_runs["combined"]
    code, out, err = run.wait()
    assert code == 20, err  # BLOCK, the worst entry
    result = CheckResult.model_validate_json(out)  # stdout is the JSON document alone
    assert result.exit_code == 20 and result.verdict == Verdict.BLOCK
    return run, result


@pytest.mark.slow
def test_each_entry_gets_its_verdict(combined: tuple[CliRun, CheckResult]) -> None:
    _run, result = combined
    summary = [(e.kind, e.field, e.op or e.change, e.verdict) for e in result.entries]
    assert summary == [
        ("change", "amount", "scale", Verdict.BLOCK),
        ("change", "amount", "round", Verdict.PASS),
        ("change", "amount_usd", "scale", Verdict.INCOMPLETE),
        ("structural", "amount", "dropped", Verdict.BLOCK),
        ("structural", "no_such_column", "renamed", Verdict.INCOMPLETE),
        ("unmapped", "risk_band", None, Verdict.INCOMPLETE),
    ]
    unknown_change, unknown_column, unmapped = result.entries[2], result.entries[4], result.entries[5]
    assert unknown_change.reasons[0].startswith("not assessed: ") and "amount_usd" in unknown_change.reasons[0]
    assert unknown_change.run_id is None  # refused before any run, as `assess` refuses it
    assert unknown_column.reasons[0].startswith("not judged: ") and "no_such_column" in unknown_column.reasons[0]
    assert unmapped.reasons == ["not mappable, review by hand: CASE expression changed; no operator fits"]
    assert result.policy.sha256 == digest(DEFAULT_POLICY_PATH)


@pytest.mark.slow
def test_changes_are_assessed_with_an_evidence_run_each(combined: tuple[CliRun, CheckResult]) -> None:
    run, result = combined
    scale, round_ = result.entries[:2]
    assert scale.run_id and round_.run_id and scale.run_id != round_.run_id
    for entry in (scale, round_):
        assert entry.evidence_dir == str(run.home / "runs" / str(entry.run_id))
        evidence = read_evidence(run.home, str(entry.run_id))  # what the entry says is what the evidence says
        assert evidence.verdict == entry.verdict and evidence.request.op == entry.op
        assert evidence.publication.status == entry.publication == "not_requested"
        assert evidence.plan.planner == "cli"  # the assess path: the graph with a fixed plan
        assert Path(str(entry.report)).is_file()
    # Each run's evidence counts that run's catalog calls (tools/catalog/calls.py), not the session's running total:
    # two changes of the same column make the same calls.
    first, second = (read_evidence(run.home, str(e.run_id)) for e in (scale, round_))
    assert second.mcp_calls == first.mcp_calls > 0
    recorded = {m.urn: m for m in first.models}
    assert [m.urn for m in scale.models] == list(recorded)
    for outcome in scale.models:  # every model the assessment tested, whatever its task
        assert outcome.verdict == recorded[outcome.urn].verdict
        metrics = recorded[outcome.urn].metrics
        if metrics is not None and metrics.regression is not None:
            assert outcome.performance is not None and outcome.performance.name == "MAE"
            assert outcome.performance.change == metrics.regression.mae
    blocked = next(m for m in scale.models if m.urn == FRAUD_MODEL_URN)
    assert blocked.verdict == Verdict.BLOCK
    fraud = recorded[FRAUD_MODEL_URN]
    assert fraud.metrics is not None and blocked.flip_rate is not None and blocked.performance is not None
    assert blocked.flip_rate.value == fraud.metrics.flip_rate
    assert (blocked.flip_rate.low, blocked.flip_rate.high) == (
        fraud.metrics.flip_rate_ci_low,
        fraud.metrics.flip_rate_ci_high,
    )
    performance = blocked.performance
    assert fraud.metrics.binary is not None
    assert performance.name == "AUC" and performance.change == fraud.metrics.binary.auc
    assert performance.change.ci_high < 0  # a credible drop
    assert blocked.failures == 0 and blocked.rows == fraud.metrics.n
    rounded = next(m for m in round_.models if m.urn == FRAUD_MODEL_URN)
    assert rounded.verdict == Verdict.PASS and rounded.flip_rate is not None and rounded.flip_rate.value == 0


@pytest.mark.slow
def test_structural_entry_blocks_the_production_model_downstream(combined: tuple[CliRun, CheckResult]) -> None:
    _run, result = combined
    scale, dropped = result.entries[0], result.entries[3]
    # The same lineage discovery as the assessment of the same column: the same production models, each BLOCK.
    assert [m.urn for m in dropped.models] == [m.urn for m in scale.models]
    assert FRAUD_MODEL_URN in [m.urn for m in dropped.models]
    assert {m.verdict for m in dropped.models} == {Verdict.BLOCK}
    assert all("input column amount is dropped" in m.reasons[0] for m in dropped.models)
    assert dropped.coverage_complete is True
    assert any("not in production" in item for item in dropped.not_tested)


@pytest.mark.slow
def test_nothing_is_written_to_the_catalog_without_publish(combined: tuple[CliRun, CheckResult]) -> None:
    run, result = combined
    assert digest(run.home / "catalog.db") == run.catalog_before
    assert not result.published and result.approval is None


@pytest.mark.slow
def test_the_markdown_summary(combined: tuple[CliRun, CheckResult]) -> None:
    run, result = combined
    markdown = (run.workdir / "summary.md").read_text()
    assert markdown.startswith("**BLOCK** Provenance check of `CHANGES.yml`: 6 entries (2 BLOCK, 3 INCOMPLETE, 1 PASS)")
    scale = result.entries[0]
    assert f"[report](home/runs/{scale.run_id}/report.md)" in markdown  # relative to the summary's folder
    row = next(line for line in markdown.splitlines() if line.startswith("| fraud_detector | **BLOCK** |"))
    assert scale.models[0].flip_rate is not None
    assert f"{scale.models[0].flip_rate.value * 100:.1f}%" in row and "AUC " in row and " → " in row
    assert "### Structural changes" in markdown and "### Not mappable: review by hand" in markdown
    assert "| **INCOMPLETE** | `models/transactions.sql:7` | `risk_band` |" in markdown
    assert f"Policy `{result.policy.name}` v{result.policy.version}" in markdown
    assert markdown.rstrip().endswith(MARKER)


@pytest.mark.slow
def test_publish_with_the_files_approval_writes_back(cli_runs: dict[str, CliRun]) -> None:
    run = cli_runs["publish"]
    code, out, err = run.wait()
    assert code == 0, err
    result = CheckResult.model_validate_json(out)
    assert result.verdict == Verdict.PASS and result.published
    assert result.approval is not None and result.approval.by == "alice@example.com"
    (entry,) = result.entries
    assert entry.publication == "published"
    evidence = read_evidence(run.home, str(entry.run_id))
    assert evidence.publication.status == "published"
    assert evidence.publication.decided_by == "check:alice@example.com"
    assert FRAUD_MODEL_URN in evidence.publication.tags
    assert digest(run.home / "catalog.db") != run.catalog_before


# --- in-process: refusals before any catalog opens, and a file that needs no catalog ------------------------


def run_main(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str]
) -> tuple[int, str, str]:
    monkeypatch.setenv("PROVENANCE_HOME", str(home))
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_publish_without_an_approval_is_refused(
    seeded_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    changes = tmp_path / "CHANGES.yml"
    changes.write_text(
        APPROVED_ROUND.replace("approval:\n  by: alice@example.com\n  note: reviewed with the fraud team\n", "")
    )
    before = digest(seeded_home / "catalog.db")
    code, out, err = run_main(seeded_home, monkeypatch, capsys, ["check", str(changes), "--publish"])
    assert code == 2 and out == ""
    assert "--publish needs an approval" in err and "--approved-by NAME" in err and "approval:" in err
    assert not (seeded_home / "runs").exists()
    assert digest(seeded_home / "catalog.db") == before


def test_an_invalid_file_lists_its_problems_and_runs_nothing(
    seeded_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    changes = tmp_path / "CHANGES.yml"
    changes.write_text(COMBINED.replace("op: round", "op: rounds").replace("change: dropped", "change: deleted"))
    code, out, err = run_main(seeded_home, monkeypatch, capsys, ["check", str(changes), "--json"])
    assert code == 2 and out == ""
    assert err.startswith(f"error: {changes} is not a valid CHANGES file (2 problems):")
    lines = COMBINED.splitlines()
    assert f"line {lines.index('    op: round') + 1}: changes[1].op: unknown operator 'rounds'" in err
    assert f"line {lines.index('    change: dropped') + 1}: structural[0].change:" in err
    assert not (seeded_home / "runs").exists()


def test_unmapped_only_is_incomplete_without_opening_the_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    changes = tmp_path / "CHANGES.yml"
    changes.write_text(COMBINED[COMBINED.index("unmapped:") :].join(["version: 1\n", ""]))
    home = tmp_path / "empty-home"  # no catalog at all: opening one would fail
    code, out, err = run_main(home, monkeypatch, capsys, ["check", str(changes), "--markdown", str(tmp_path / "s.md")])
    assert code == 30, err
    assert out.startswith(f"Check of {changes}: INCOMPLETE (exit code 30)")
    assert "not mappable, review by hand" in out
    assert (tmp_path / "s.md").read_text().startswith("**INCOMPLETE** ")


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for needle in ("PASS 0", "WARNING 10", "BLOCK 20", "INCOMPLETE 30", "2 the file is invalid", "--approved-by"):
        assert needle in text
