"""`provenance assess` end to end on the demo catalog: verdicts, exit codes, the --json summary, evidence files,
refused plans and a tampered artifact.

Each CLI subprocess starts the embedded catalog and the MCP server (~5-10 s), so the subprocess runs are few and
started together (`cli_runs`); the remaining cases go in-process through `assess_change` (the agent's graph with a
fixed plan, as the CLI runs it) on one opened catalog.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent.assessment import AssessmentResult, assess_change
from agent.cli import main
from agent.context import AgentContext
from policies import DEFAULT_POLICY_PATH, Policy, Verdict, load_policy
from seed.catalog import CONTROL_MODEL_URN, FRAUD_MODEL_URN, POSTGRES_TABLE_URN, REVIEW_MODEL_URN
from seed.model import read_eval_frame
from tools.catalog.handle import CatalogHandle
from tools.evidence.schema import ModelEvidence
from tools.experiment.metrics import ModelMetrics
from tools.mutations import ALLOWED_OPERATORS, parse_mutation
from tools.settings import ProvenanceSettings

EVAL_ROWS = 7_200  # the demo's evaluation split: 30 % of 24 000 generated transactions
SEVERITY = {Verdict.PASS: 0, Verdict.WARNING: 1, Verdict.INCOMPLETE: 2, Verdict.BLOCK: 3}


def expected_verdict(m: ModelMetrics, p: Policy) -> Verdict:
    """The default policy's rules written out independently of policies/engine.py (docs/design.md §6)."""
    found = [Verdict.PASS]
    rule = p.inference_failures
    if m.failure_rate >= rule.block_rate:
        found.append(Verdict.BLOCK)
    elif m.failures >= rule.warning_count:
        found.append(Verdict.WARNING)
    b = m.binary
    assert b is not None
    if m.n < p.min_rows or b.positives < p.min_positives or b.negatives < p.min_negatives:
        return max(found + [Verdict.INCOMPLETE], key=SEVERITY.__getitem__)
    for value, band in ((m.flip_rate, p.flip_rate), (m.psi, p.score_psi)):
        if value is not None and value >= band.block:
            found.append(Verdict.BLOCK)
        elif value is not None and value >= band.warning:
            found.append(Verdict.WARNING)
    if b.auc is None or b.auc.p_value is None:
        found.append(Verdict.INCOMPLETE)
    elif b.auc.p_value < p.auc_drop.alpha and -b.auc.delta >= p.auc_drop.block:
        found.append(Verdict.BLOCK)
    elif b.auc.p_value < p.auc_drop.alpha and -b.auc.delta >= p.auc_drop.warning:
        found.append(Verdict.WARNING)
    return max(found, key=SEVERITY.__getitem__)


def snapshot(home: Path) -> dict[str, str]:
    """Every file a run could write, by content (catalog/MCP server logs aside)."""
    return {
        str(path.relative_to(home)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(home.rglob("*"))
        if path.is_file() and path.relative_to(home).parts[0] not in ("logs", "mcp-home")
    }


# --- CLI subprocesses, started together ---------------------------------------------------------------------

ASSESS = ("assess", "--dataset", POSTGRES_TABLE_URN, "--field", "amount")
CLI_CASES: dict[str, tuple[str, ...]] = {
    "scale": (*ASSESS, "--op", "scale", "--param", "factor=100", "--fraction", "1", "--no-publish", "--json"),
    "round": (*ASSESS, "--op", "round", "--param", "decimals=2", "--no-publish", "--json"),
    # round changes nothing: the regressor next to the tampered model PASSes, so the exit code is the tampered one's
    "tampered": (*ASSESS, "--op", "round", "--param", "decimals=2", "--no-publish", "--json"),
}


@dataclass
class CliRun:
    home: Path
    before: dict[str, str]
    future: Future[subprocess.CompletedProcess[str]]

    def wait(self) -> tuple[int, str, str]:
        done = self.future.result(timeout=600)
        return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def cli_runs(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, CliRun]]:
    """All CLI runs, two at a time in the background; each test waits only for its own."""
    runs: dict[str, CliRun] = {}
    pool = ThreadPoolExecutor(max_workers=2)
    for name, args in CLI_CASES.items():
        home = tmp_path_factory.mktemp(f"cli-{name}") / "home"
        shutil.copytree(seeded_template, home, ignore=shutil.ignore_patterns("logs", "mcp-home"))
        if name == "tampered":  # a different, perfectly valid pipeline: only the hash can tell
            demo = home / "demo"
            (demo / "fraud_detector.joblib").write_bytes((demo / "merchant_risk.joblib").read_bytes())
        env = {**os.environ, "PROVENANCE_HOME": str(home)}
        command = [sys.executable, "-m", "agent.cli", *args]
        before = snapshot(home)
        future = pool.submit(subprocess.run, command, capture_output=True, text=True, env=env, timeout=300)
        runs[name] = CliRun(home, before, future)
    yield runs
    pool.shutdown(wait=True, cancel_futures=True)  # queued runs no test waited for are dropped


@pytest.mark.slow
def test_scale_100_blocks_both_amount_models(cli_runs: dict[str, CliRun]) -> None:
    code, out, err = cli_runs["scale"].wait()
    assert code == 20, err
    summary = json.loads(out)  # stdout is the JSON document alone; logs go to stderr

    assert summary["verdict"] == "BLOCK"
    assert [m["urn"] for m in summary["models"]] == [FRAUD_MODEL_URN, REVIEW_MODEL_URN]
    assert CONTROL_MODEL_URN not in out  # merchant_risk_scorer never reads amount
    model = summary["models"][0]
    assert model["verdict"] == "BLOCK"
    assert any("block threshold" in reason for reason in model["reasons"])
    metrics = ModelMetrics.model_validate(model["metrics"])
    assert metrics.n == EVAL_ROWS and metrics.failures == 0
    policy = load_policy()
    assert expected_verdict(metrics, policy.policy) == Verdict.BLOCK
    assert summary["reasons"] and "fraud_detector: BLOCK" in summary["reasons"][0]
    review = summary["models"][1]  # the regressor: judged on its errors, never on an AUC
    assert review["verdict"] == "BLOCK" and review["metrics"]["task"] == "regression"
    assert review["metrics"]["binary"] is None and review["metrics"]["regression"]["moved_share"] > 0.99
    assert any(reason.startswith("MAE ") for reason in review["reasons"])

    assert summary["policy"]["sha256"] == hashlib.sha256(DEFAULT_POLICY_PATH.read_bytes()).hexdigest()
    assert summary["policy"]["name"] == "default" and summary["policy"]["version"] == 2
    assert summary["publication"]["status"] == "not_requested"

    folder = Path(summary["evidence"]["folder"])
    assert folder == cli_runs["scale"].home / "runs" / summary["run_id"]
    evidence = json.loads(Path(summary["evidence"]["json"]).read_text())
    assert evidence["run_id"] == summary["run_id"] and evidence["verdict"] == "BLOCK"
    assert evidence["policy"]["sha256"] == summary["policy"]["sha256"]
    assert Path(summary["evidence"]["report"]).read_text().strip()
    plots = summary["evidence"]["plots"]["fraud_detector"]
    assert len(plots) == 2
    for plot in plots:
        assert Path(plot).parent == folder
        assert Path(plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_round_to_cents_passes(cli_runs: dict[str, CliRun], seeded_template: Path) -> None:
    # Honest PASS: the amounts are stored with two decimals already, so rounding to cents changes nothing.
    amounts = read_eval_frame(seeded_template / "demo" / "fraud_eval.csv")["txn_amount"]
    assert (amounts.round(2) == amounts).all()

    code, out, err = cli_runs["round"].wait()
    assert code == 0, err
    summary = json.loads(out)
    assert summary["verdict"] == "PASS"
    model, review = summary["models"]
    assert model["urn"] == FRAUD_MODEL_URN and model["verdict"] == "PASS"
    assert model["metrics"]["flips"] == 0 and model["metrics"]["prob_shift_max"] == 0
    assert review["urn"] == REVIEW_MODEL_URN and review["verdict"] == "PASS"
    assert review["metrics"]["regression"]["moved"] == 0
    assert Path(summary["evidence"]["json"]).is_file()


@pytest.mark.slow
def test_tampered_artifact_is_incomplete(cli_runs: dict[str, CliRun]) -> None:
    code, out, err = cli_runs["tampered"].wait()
    assert code == 30, err
    summary = json.loads(out)
    assert summary["verdict"] == "INCOMPLETE"
    model, review = summary["models"]
    assert model["urn"] == FRAUD_MODEL_URN and model["verdict"] == "INCOMPLETE"
    assert model["metrics"] is None  # nothing was measured with an unverified artifact
    assert review["urn"] == REVIEW_MODEL_URN and review["verdict"] == "PASS"  # its own artifact is intact
    evidence = json.loads(Path(summary["evidence"]["json"]).read_text())
    assert [r["code"] for r in evidence["models"][0]["reasons"]] == ["hash_mismatch"]
    assert "was not loaded" in model["reasons"][0]


# --- refusals, in-process: a subprocess would only add the start-up cost to a string check -----------------


def _assert_refused(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str], *needles: str
) -> str:
    monkeypatch.setenv("PROVENANCE_HOME", str(home))
    before = snapshot(home)
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert out == ""
    assert "error:" in err and "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    assert not (home / "runs").exists() or not any((home / "runs").iterdir())
    assert snapshot(home) == before
    return err


def test_unknown_operator_lists_the_allowed_ones(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*ASSESS, "--op", "multiply", "--param", "factor=100", "--no-publish", "--json"]
    _assert_refused(seeded_home, monkeypatch, capsys, args, "unknown mutation operator 'multiply'", *ALLOWED_OPERATORS)


def test_category_remap_on_numeric_amount_is_refused(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*ASSESS, "--op", "category_remap", "--param", 'mapping={"a": "b"}', "--no-publish", "--json"]
    err = _assert_refused(seeded_home, monkeypatch, capsys, args, "category_remap", "'amount'", "numeric")
    assert "scale(factor)" in err  # says which operators fit a numeric column


def test_assess_requires_no_publish(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*ASSESS, "--op", "scale", "--param", "factor=100", "--json"]
    _assert_refused(seeded_home, monkeypatch, capsys, args, "--no-publish")


# --- bad plans refused in-process (they fail before the catalog is opened) ----------------------------------


@pytest.mark.parametrize(
    ("extra", "needles"),
    [
        (["--param", "factor=100", "--fraction", "0"], ["fraction", "(0, 1]"]),
        (["--param", "factor=100", "--fraction", "1.5"], ["fraction", "(0, 1]"]),
        (["--param", "factor=NaN"], ["factor"]),  # json.loads gives float('nan'); a string would fail too
        (["--param", "factor=inf"], ["factor"]),
        (["--param", "factor=0"], ["factor"]),
        (["--param", "factor"], ["key=value"]),
    ],
    ids=["fraction-0", "fraction-1.5", "factor-NaN", "factor-inf", "factor-0", "no-equals"],
)
def test_bad_parameters_exit_2_and_write_nothing(
    seeded_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    needles: list[str],
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(seeded_home))
    before = snapshot(seeded_home)
    code = main([*ASSESS, "--op", "scale", *extra, "--no-publish", "--json"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err.startswith("error: ")
    for needle in needles:
        assert needle in captured.err
    assert not (seeded_home / "runs").exists()
    assert snapshot(seeded_home) == before


# --- in-process assessments on one opened catalog -----------------------------------------------------------

SEEDS = range(5)


@dataclass(frozen=True)
class Case:
    field: str
    op: str
    params: dict[str, Any]
    fraction: float
    seed: int


CASES: dict[str, Case] = {
    "nulls": Case("account_age_days", "null_inject", {}, 0.05, 0),
    **{f"scale-{s}": Case("amount", "scale", {"factor": 100}, 0.5, s) for s in SEEDS},
    **{f"round-{s}": Case("amount", "round", {"decimals": 2}, 0.5, s) for s in SEEDS},
}


async def _assess_all(settings: ProvenanceSettings) -> dict[str, AssessmentResult]:
    results = {}
    async with CatalogHandle(settings) as handle:
        context = AgentContext(settings=settings, policy=load_policy(), catalog=handle)
        for name, case in CASES.items():
            mutation = parse_mutation(case.op, case.params, fraction=case.fraction, seed=case.seed)
            results[name] = await assess_change(context, POSTGRES_TABLE_URN, case.field, mutation)
    return results


@pytest.fixture(scope="module")
def assessed(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, AssessmentResult]:
    home = tmp_path_factory.mktemp("in-process") / "home"
    shutil.copytree(seeded_template, home, ignore=shutil.ignore_patterns("logs", "mcp-home"))
    return asyncio.run(_assess_all(ProvenanceSettings(provenance_home=home)))


def _by_name(result: AssessmentResult) -> dict[str, ModelEvidence]:
    return {m.name: m for m in result.evidence.models}


@pytest.mark.slow
def test_null_inject_tests_both_production_models(assessed: dict[str, AssessmentResult]) -> None:
    result = assessed["nulls"]
    models = _by_name(result)
    assert set(models) == {"fraud_detector", "merchant_risk_scorer"}
    assert models["merchant_risk_scorer"].urn == CONTROL_MODEL_URN
    policy = load_policy().policy
    nulled = round(0.05 * EVAL_ROWS)

    fraud = models["fraud_detector"]  # has imputers: measured, whatever the policy makes of it
    assert fraud.metrics is not None and fraud.experiment is not None
    assert fraud.metrics.failures == 0 and fraud.experiment.rows_changed == nulled
    assert fraud.verdict == expected_verdict(fraud.metrics, policy)

    risk = models["merchant_risk_scorer"]  # no imputer: every nulled row fails, and 5 % >= the 1 % block rate
    assert risk.metrics is not None and risk.experiment is not None
    assert risk.metrics.failures == nulled and risk.metrics.n == EVAL_ROWS
    assert risk.metrics.failure_rate == pytest.approx(0.05, abs=1e-12)
    assert risk.verdict == Verdict.BLOCK
    assert "inference_failures_block" in [r.code for r in risk.reasons if r.severity == Verdict.BLOCK]
    assert risk.verdict == expected_verdict(risk.metrics, policy)
    assert any("NaN" in sample for sample in risk.experiment.error_samples)

    assert result.evidence.verdict == Verdict.BLOCK
    assert (result.run_dir / "evidence.json").is_file()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.slow
def test_scale_100_blocks_for_every_seed(assessed: dict[str, AssessmentResult], seed: int) -> None:
    result = assessed[f"scale-{seed}"]
    models = _by_name(result)
    assert set(models) == {"fraud_detector", "review_time_estimator"}
    review = models["review_time_estimator"]
    assert review.verdict == Verdict.BLOCK and review.experiment is not None
    assert review.experiment.rows_changed == EVAL_ROWS // 2  # the same seed changes the same rows in both models
    model = models["fraud_detector"]
    assert model.urn == FRAUD_MODEL_URN
    assert model.verdict == result.evidence.verdict == Verdict.BLOCK
    assert model.metrics is not None and model.experiment is not None
    assert model.experiment.rows_changed == EVAL_ROWS // 2
    assert model.verdict == expected_verdict(model.metrics, load_policy().policy)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.slow
def test_round_2_passes_for_every_seed(assessed: dict[str, AssessmentResult], seed: int) -> None:
    result = assessed[f"round-{seed}"]
    models = _by_name(result)
    assert models["review_time_estimator"].verdict == Verdict.PASS
    model = models["fraud_detector"]
    assert model.verdict == result.evidence.verdict == Verdict.PASS
    assert model.metrics is not None and model.experiment is not None
    assert model.experiment.rows_changed == 0 and model.metrics.flips == 0


@pytest.mark.slow
def test_seeds_choose_different_rows(assessed: dict[str, AssessmentResult]) -> None:
    """The seed loop above is meaningful: different seeds mutate different halves of the data."""
    metrics = [_by_name(assessed[f"scale-{s}"])["fraud_detector"].metrics for s in SEEDS]
    flips = [m.flips for m in metrics if m is not None]
    shifts = [m.prob_shift_mean for m in metrics if m is not None]
    assert len(flips) == len(SEEDS)
    assert len(set(flips)) > 1 or len(set(shifts)) > 1
    assert all(s is not None and math.isfinite(s) for s in shifts)
    run_ids = {assessed[name].evidence.run_id for name in CASES}
    assert len(run_ids) == len(CASES)  # one evidence folder per assessment


def test_eval_rows_constant_matches_the_demo(seeded_template: Path) -> None:
    frame = read_eval_frame(seeded_template / "demo" / "fraud_eval.csv")
    assert len(frame) == EVAL_ROWS
