"""report.md rendering: real metrics (compute_metrics) and real decisions (the default policy) in, Markdown out."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from jinja2 import StrictUndefined

from policies import Reason, Verdict, evaluate, incomplete, load_policy, overall_verdict
from policies.metrics import ModelMetrics
from tests.tools.evidence import task_examples
from tools.catalog.discovery import LineageStep
from tools.evidence import report as report_module
from tools.evidence.formats import pct, pvalue
from tools.evidence.plots import slugify, write_plots
from tools.evidence.report import cell, code, fenced, render_report, write_report
from tools.evidence.schema import (
    BindingRecord,
    ChangeRequest,
    Evidence,
    ExperimentRecord,
    ModelEvidence,
    NotTested,
    PlanRecord,
    PolicyRecord,
    PublicationRecord,
    SamplingRecord,
    StageFailure,
)
from tools.evidence.store import REPORT_FILE, write_run
from tools.experiment.metrics import compute_metrics

SOURCE = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"
FEATURES = "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.features.transaction_features,PROD)"
POLICY = load_policy()
Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def synthetic(n: int, *, corrupt: float, failures: int, seed: int = 7) -> Arrays:
    """Labels, baseline and mutated scores, failed mask: `corrupt` is the share of rows scrambled."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.int8)
    baseline = 1 / (1 + np.exp(-(2.2 * y - 1.1 + rng.normal(0, 1, n))))
    mutated = baseline.copy()
    hit = rng.random(n) < corrupt
    mutated[hit] = rng.random(int(hit.sum()))
    failed = np.zeros(n, dtype=bool)
    failed[rng.choice(n, failures, replace=False)] = True
    mutated[failed] = np.nan
    return y, baseline, mutated, failed


def model_evidence(name: str, arrays: Arrays | None, *, eval_sha: str | None = "e" * 64) -> ModelEvidence:
    urn = f"urn:li:mlModel:(urn:li:dataPlatform:mlflow,{slugify(name)},PROD)"
    path = [
        LineageStep(dataset_urn=SOURCE, column="amount"),
        LineageStep(dataset_urn=FEATURES, column="amount_usd", transform="amount * fx_rate"),
    ]
    binding = BindingRecord(
        artifact_path=f"/models/{slugify(name)}.joblib",
        artifact_sha256_expected="a" * 63 + "1",
        eval_data_path=f"/data/{slugify(name)}-eval.parquet",
        eval_data_sha256=eval_sha,
        label_column="is_fraud",
        decision_threshold=0.5,
    )
    if arrays is None:
        decision = incomplete("artifact_hash_mismatch", "artifact sha256 differs from the catalog's; not loaded")
        return ModelEvidence(
            urn=urn, name=name, verdict=decision.verdict, reasons=list(decision.reasons), lineage_path=path
        )
    metrics = compute_metrics(*arrays)
    decision = evaluate(metrics, POLICY.policy)
    experiment = ExperimentRecord(
        rows=metrics.n,
        rows_changed=metrics.n // 3,
        feature_column="amount_usd",
        mutation="multiply amount_usd by 100 on 40% of rows (seed 42)",
        baseline_cached=False,
        predict_calls=17,
        value_class_rows=min(metrics.failures, 3),
        error_samples=["ValueError: Input X contains NaN | row 17", "boom ``` fence"] if metrics.failures else [],
        seconds={"baseline": 0.21, "mutate": 0.01, "mutated": 0.35},
    )
    return ModelEvidence(
        urn=urn,
        name=name,
        verdict=decision.verdict,
        reasons=list(decision.reasons),
        feature_column="amount_usd",
        lineage_path=path,
        binding=binding,
        metrics=metrics,
        experiment=experiment,
        owners=["urn:li:corpuser:risk-team"],
    )


def evidence_for(models: list[ModelEvidence], **overrides: object) -> Evidence:
    verdict = overall_verdict([m.verdict for m in models])
    fields: dict[str, object] = dict(
        run_id="20260101T000000Z-abc123",
        created_at="2026-01-01T00:00:00+00:00",
        request=ChangeRequest(
            dataset_urn=SOURCE, field="amount", op="scale", params={"factor": 100}, fraction=0.4, seed=42
        ),
        catalog="embedded",
        dataset_owners=["urn:li:corpuser:payments"],
        lineage_precision="column",
        datasets_searched=[SOURCE, FEATURES],
        plan=PlanRecord(planner="deterministic", mutation={"op": "scale", "factor": 100}, description="cents"),
        models=models,
        not_tested=[NotTested(urn="urn:li:mlModel:x", name="legacy-scorer", reason="not in production (stage: dev)")],
        verdict=verdict,
        verdict_reasons=[f"{m.name}: {m.verdict}" for m in models],
        policy=PolicyRecord(name="default", version=1, sha256=POLICY.sha256, path=str(POLICY.path)),
        mcp_calls=12,
        timings={"discovery": 1.234, "experiment": 2.5},
    )
    fields.update(overrides)
    return Evidence.model_validate(fields)


@pytest.fixture(scope="module")
def block_arrays() -> Arrays:
    return synthetic(4_000, corrupt=0.4, failures=60)


@pytest.fixture
def block_evidence(block_arrays: Arrays) -> Evidence:
    model = model_evidence("Fraud Scorer (v3)", block_arrays, eval_sha=None)
    model.plots = {"roc": "fraud-scorer-v3-roc.png", "shift": "fraud-scorer-v3-shift.png"}
    return evidence_for(
        [model],
        failures=[StageFailure(stage="publish", message="datahub 503"), StageFailure(stage="publish", message="x")],
        publication=PublicationRecord(status="failed", message="GMS unreachable", attempts=2),
    )


def test_block_report_has_verdict_reasons_and_every_metric(block_evidence: Evidence) -> None:
    text = render_report(block_evidence)
    model = block_evidence.models[0]
    m = model.metrics
    assert m is not None and model.verdict is Verdict.BLOCK
    assert m.flip_rate is not None and m.flip_rate_ci_low is not None and m.flip_rate_ci_high is not None
    assert text.startswith("# Provenance impact report: BLOCK\n")
    b = m.binary
    assert b is not None and b.auc is not None
    expected = [
        f"| Rows (n) | {m.n:,} |",
        f"{b.positives:,} / {b.negatives:,}",
        f"{b.auc.baseline:.3f} → {b.auc.mutated:.3f}",
        f"{b.auc.delta:+.4f} ({b.auc.ci_low:+.4f} to {b.auc.ci_high:+.4f})",
        f"| ΔAUC p-value (paired DeLong) | {pvalue(b.auc.p_value)} |",
        f"{m.flip_rate * 100:.2f}% ({m.flip_rate_ci_low * 100:.2f}% to {m.flip_rate_ci_high * 100:.2f}%)",
        f"{m.flips:,} of {m.n_scored:,} rows",
        f"{m.prob_shift_mean:.4f} / {m.prob_shift_p95:.4f} / {m.prob_shift_max:.4f}",
        f"| Score PSI | {m.psi:.3f} |",
        f"{m.failures:,} of {m.n:,} rows ({m.failure_rate * 100:.2f}%)",
    ]
    for snippet in expected:
        assert snippet in text, snippet
    for reason in model.reasons:
        assert f"| {reason.severity} | `{reason.code}` | {cell(reason.message)} |" in text
    assert "### Fraud Scorer (v3): BLOCK\n" in text


def test_reason_values_and_thresholds_use_the_metric_formats(block_evidence: Evidence) -> None:
    text = render_report(block_evidence)
    reasons = {r.metric: r for r in block_evidence.models[0].reasons}
    flip = reasons["flip_rate"]
    assert flip.value is not None and flip.threshold is not None
    assert f"| {flip.value * 100:.2f}% | {flip.threshold * 100:.2f}% |" in text
    failure = reasons["failure_rate"]
    assert failure.code == "inference_failures_block"  # 60 of 4,000 rows = 1.5% >= the 1% block rate
    assert "| 1.50% | 1.00% |" in text


def test_bindings_hashes_lineage_and_policy_are_shown(block_evidence: Evidence) -> None:
    text = render_report(block_evidence)
    assert "`" + "a" * 63 + "1`" in text
    assert f"| sha256 | `{POLICY.sha256}` |" in text
    assert "| Evaluation data sha256 | n/a |" in text  # None in the binding
    assert "1. `postgres:payments.public.transactions.amount` (changed field)" in text
    # The blank line ends the list: without it Markdown folds the next paragraph into item 2.
    assert "2. `snowflake:analytics.features.transaction_features.amount_usd` via `amount * fx_rate`\n\n" in text
    assert '`{"factor": 100}`' in text and "| Fraction of rows | 40.0% |" in text and "| Seed | 42 |" in text


def test_none_values_render_as_na(block_evidence: Evidence) -> None:
    text = render_report(block_evidence)
    assert "| Question | n/a |" in text
    assert "| Decided by | n/a |" in text
    assert "| Updated | n/a |" in text
    assert "None" not in text.replace("None.", "")  # no Python None leaks into the document


def test_plots_are_linked(block_evidence: Evidence) -> None:
    text = render_report(block_evidence)
    assert "![ROC](fraud-scorer-v3-roc.png)" in text
    assert "![Probability shift](fraud-scorer-v3-shift.png)" in text


def test_failures_grouped_by_stage_and_publication_status(block_evidence: Evidence) -> None:
    text = render_report(block_evidence)
    assert "- **publish** (2)\n  - datahub 503\n  - x\n" in text
    assert "| Status | **failed** |" in text and "| Attempts | 2 |" in text
    assert "legacy-scorer" in text and "not in production (stage: dev)" in text


def test_error_samples_survive_pipes_and_fences(block_evidence: Evidence) -> None:
    text = render_report(block_evidence)
    assert "````text\nboom ``` fence\n````" in text
    assert "```text\nValueError: Input X contains NaN | row 17\n```" in text


def test_pass_report() -> None:
    model = model_evidence("Churn", synthetic(2_000, corrupt=0.0, failures=0))
    evidence = evidence_for([model])
    evidence.request.question = "Can we send amounts in cents?"
    text = render_report(evidence)
    assert model.verdict is Verdict.PASS
    assert text.startswith("# Provenance impact report: PASS\n")
    assert "| Question | Can we send amounts in cents? |" in text
    assert "| ΔAUC p-value (paired DeLong) | 1.0000 |" in text  # identical scores: no change at all
    assert "## Failures by stage\n\nNone.\n" in text
    assert "(warning from 1) | 0.00% | 1 failed row |" in text
    assert "**Plots**" not in text  # no plots recorded, no dangling image links
    assert "| Status | **not_requested** |" in text


def test_incomplete_report_without_metrics() -> None:
    model = model_evidence("Credit Limit", None)
    evidence = evidence_for([model], not_tested=[])
    text = render_report(evidence)
    assert text.startswith("# Provenance impact report: INCOMPLETE\n")
    assert "**Metrics**: n/a (not measured; see the reasons above)." in text
    assert "| INCOMPLETE | `artifact_hash_mismatch` |" in text
    assert "n/a (the experiment did not run)" in text and "n/a (no binding recorded)" in text
    assert "n/a (no model was measured)" in text
    assert "| Credit Limit | **INCOMPLETE** | n/a | n/a | n/a | n/a | n/a |" in text
    assert "## Models not tested\n\nNone.\n" in text


def test_no_models_report() -> None:
    evidence = evidence_for([], verdict_reasons=["no production model depends on this field"])
    text = render_report(evidence)
    assert text.startswith("# Provenance impact report: PASS\n")
    assert "No production model was tested." in text and "## Summary" not in text


def test_methods_come_from_the_metrics(block_evidence: Evidence) -> None:
    text = render_report(block_evidence)
    metrics = block_evidence.models[0].metrics
    assert metrics is not None
    for key, description in metrics.methods.items():
        assert f"- **{key}**: {description}" in text


def test_rendering_is_deterministic_and_strict(block_evidence: Evidence) -> None:
    assert render_report(block_evidence) == render_report(block_evidence)
    assert report_module._ENV.undefined is StrictUndefined and not report_module._ENV.autoescape


def test_pipes_in_messages_do_not_split_table_rows(block_evidence: Evidence) -> None:
    block_evidence.not_tested = [NotTested(urn="urn:li:mlModel:y", name="a|b", reason="stage | dev\nsecond")]
    text = render_report(block_evidence)
    row = next(line for line in text.splitlines() if line.startswith("| a\\|b"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 4  # three cells, four unescaped separators
    assert "stage \\| dev<br>second" in row


def test_small_formatters() -> None:
    pvalues = [pvalue(v) for v in (None, 0.0, 1.234e-12, 0.000999, 0.0312, 1.0)]
    assert pvalues == ["n/a", "< 1e-300", "1.23e-12", "9.99e-04", "0.0312", "1.0000"]
    assert pct(None) == "n/a" and pct(0.0512) == "5.12%" and pct(0.4, 1) == "40.0%"
    assert code("plain") == "`plain`" and code("a`b") == "``a`b``" and code("`x`") == "`` `x` ``"
    assert cell("a|b\nc") == "a\\|b<br>c"
    assert fenced("x").startswith("```text\n") and fenced("a ``` b").startswith("````text\n")


def test_write_report_is_atomic_and_replaces(tmp_path: Path, block_evidence: Evidence) -> None:
    (tmp_path / REPORT_FILE).write_text("old")
    write_report(tmp_path, block_evidence)
    assert (tmp_path / REPORT_FILE).read_text(encoding="utf-8") == render_report(block_evidence)
    assert [p.name for p in tmp_path.iterdir()] == [REPORT_FILE]  # no temporary file left behind


def test_run_folder_report_links_resolve(tmp_path: Path, block_arrays: Arrays) -> None:
    model = model_evidence("Fraud Scorer (v3)", block_arrays)
    evidence = evidence_for([model])

    def extra(folder: Path) -> None:
        model.plots = write_plots(folder, slugify(model.name), *block_arrays)
        write_report(folder, evidence)

    folder = write_run(tmp_path, evidence, extra)
    text = (folder / REPORT_FILE).read_text(encoding="utf-8")
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(links) == 2 and all((folder / link).is_file() for link in links)


def test_sampled_data_gets_one_line_unsampled_none(block_evidence: Evidence) -> None:
    experiment = block_evidence.models[0].experiment
    assert experiment is not None
    assert "| Sample |" not in render_report(block_evidence)
    experiment.sampling = SamplingRecord(
        method="stratified by label",
        rows_total=10_000_000,
        rows_used=38_415,
        seed=1402,
        target_flip_half_width=0.005,
        achieved_flip_half_width=0.0031,
    )
    lines = [line for line in render_report(block_evidence).splitlines() if line.startswith("| Sample |")]
    assert lines == [
        "| Sample | 38,415 of 10,000,000 rows, stratified by label, seed 1402; sized for a flip-rate CI half-width "
        "of 0.50% (achieved 0.31%) |"
    ]


def task_model(name: str, metrics: ModelMetrics) -> ModelEvidence:
    """A model of any task judged by the real default policy (v2 judges every task)."""
    decision = evaluate(metrics, POLICY.policy)
    model = task_examples.model(name, metrics, decision.verdict)
    model.reasons = list(decision.reasons)
    return model


def section(text: str, name: str) -> str:
    """One model's "### name" section of the report."""
    start = text.index(f"### {name}:")
    end = text.find("\n### ", start + 1)
    return text[start : end if end > 0 else text.index("## Models not tested")]


def test_regression_report_shows_errors_moved_share_and_no_auc() -> None:
    metrics = task_examples.regression_metrics()
    r = metrics.regression
    assert r is not None and r.mae.relative is not None
    model = task_model("review_time", metrics)
    model.plots = {"fit": "review_time-fit.png", "change": "review_time-change.png"}
    text = render_report(evidence_for([model], not_tested=[]))
    assert "AUC" not in text and "ROC" not in text  # nothing of a classifier for a regressor
    expected = [
        f"| MAE baseline → mutated | {r.mae.baseline:.4f} → {r.mae.mutated:,.0f} |",
        f"| ΔMAE, 95.0% CI (paired) | {r.mae.delta:+,.0f} ({r.mae.ci_low:+,.0f} to {r.mae.ci_high:+,.0f}); "
        f"{r.mae.relative * 100:+.1f}% of the baseline MAE |",
        f"| RMSE baseline → mutated | {r.rmse.baseline:.3f} → {r.rmse.mutated:,.0f} |",
        f"{r.moved_share * 100:.2f}% ({r.moved_share_ci_low * 100:.2f}% to {r.moved_share_ci_high * 100:.2f}%); "
        f"{r.moved:,} of {metrics.n_scored:,} rows changed by more than {r.tolerance:.4f}",
        f"| Tolerance basis | {r.tolerance_basis} (baseline prediction std {r.baseline_prediction_std:.3f}) |",
        f"| Prediction PSI | {r.prediction_psi:.3f} |",
        "| Model | Task | Verdict | Quality baseline → mutated | Change, 95.0% CI | Changed predictions | PSI |",
        f"| review\\_time | regression | **BLOCK** | MAE {r.mae.baseline:.4f} → {r.mae.mutated:,.0f} |",
        "![Predicted vs actual](review_time-fit.png)",
        "![Prediction change](review_time-change.png)",
    ]
    for snippet in expected:
        assert snippet.replace("review\\_time", "review_time") in text, snippet
    reasons = {reason.metric: reason for reason in model.reasons}
    mae = reasons["mae_increase"]
    assert mae.value is not None and mae.threshold is not None
    assert f"| {mae.value * 100:.2f}% | {mae.threshold * 100:.2f}% |" in text  # relative increase as a percentage


def test_multiclass_report_shows_flips_accuracy_macro_f1_and_each_class() -> None:
    metrics = task_examples.multiclass_metrics()
    mc = metrics.multiclass
    assert mc is not None and metrics.flip_rate is not None
    text = section(render_report(evidence_for([task_model("risk_tier", metrics)])), "risk_tier")
    assert "AUC" not in text
    expected = [
        f"{metrics.flip_rate * 100:.2f}% ({metrics.flip_rate_ci_low * 100:.2f}% to "  # type: ignore[operator]
        f"{metrics.flip_rate_ci_high * 100:.2f}%); {metrics.flips:,} of {metrics.n_scored:,} rows",  # type: ignore[operator]
        f"| Accuracy baseline → mutated | {mc.accuracy.baseline * 100:.2f}% → {mc.accuracy.mutated * 100:.2f}% |",
        f"| ΔAccuracy, 95.0% CI (paired) | {mc.accuracy.delta * 100:+.2f} pp ({mc.accuracy.ci_low * 100:+.2f} pp "
        f"to {mc.accuracy.ci_high * 100:+.2f} pp) |",
        f"| Macro-F1 baseline → mutated | {mc.macro_f1.baseline:.4f} → {mc.macro_f1.mutated:.4f} |",
        f"{mc.macro_f1.delta:+.4f} ({mc.macro_f1.ci_low:+.4f} to {mc.macro_f1.ci_high:+.4f})",
        f"| Worst class flip rate | `high`: {mc.per_class_flip_rate['high'] * 100:.2f}% |",
        f"| Largest class PSI | `medium`: {mc.per_class_psi['medium']:.3f} |",
    ]
    for snippet in expected:
        assert snippet in text, snippet
    for name in mc.classes:
        flips, psi = mc.per_class_flip_rate[name] * 100, mc.per_class_psi[name]
        assert f"| `{name}` | {flips:.2f}% | {psi:.3f} |" in text


def test_mixed_tasks_summary_names_each_models_own_metrics(block_arrays: Arrays) -> None:
    binary = model_evidence("Fraud Scorer (v3)", block_arrays)
    regression = task_model("review_time", task_examples.regression_metrics())
    multiclass = task_model("risk_tier", task_examples.multiclass_metrics())
    text = render_report(evidence_for([binary, regression, multiclass]))
    rows = [line for line in text.split("## Summary")[1].split("## Models tested")[0].splitlines() if "**" in line]
    assert [row.split(" | ")[1] for row in rows] == ["binary", "regression", "multiclass"]
    assert "AUC" in rows[0] and "MAE" in rows[1] and "accuracy" in rows[2]
    assert "AUC" not in rows[1] + rows[2]
    assert "ROC AUC baseline → mutated" in section(text, "Fraud Scorer (v3)")  # the binary table as before
    assert "AUC" not in section(text, "review_time")


def test_segments_show_the_worst_segment_its_p_values_and_what_was_tested(block_evidence: Evidence) -> None:
    model = block_evidence.models[0]
    assert model.metrics is not None
    before = render_report(block_evidence)
    summary = task_examples.segments()
    model.metrics = model.metrics.model_copy(update={"segments": summary})
    text = render_report(block_evidence)
    worst = summary.worst
    assert worst is not None and worst.p_value_block is not None
    # The binary metrics stay as they were; the segments follow them.
    binary_table = before.split("**Metrics**")[1].split("**Lineage**")[0]
    assert binary_table.rstrip() in text
    expected = [
        "**Segments** (14 tested in 3 column(s): region, amount, channel; segments of at least 5.0% of the scored rows",
        "against the warning band 5.00% and the block band 10.00%",
        "Worst segment: region=north (12.1% of rows, n=1,210): flip rate 30.42% (27.91% to 33.06%) vs 4.12% overall, "
        "p vs block band 1.10e-20 (BH 1.50e-19), credibly above the block band.",
        "| `region` | `region=north` | 1,210 (12.1%) | 30.42% (27.91% to 33.06%); 368 rows | 4.12% | 3.20e-41 "
        "(4.50e-40) | 1.10e-20 (1.50e-19) | block |",
        "| `amount` | `amount in [10, 50)` | 2,003 (20.0%) |",
        "Columns not segmented: `customer_id` (10,000 distinct values > 50).",
    ]
    for snippet in expected:
        assert snippet in text, snippet


def test_no_segment_tested_is_said() -> None:
    summary = task_examples.segments(findings=0)
    metrics = task_examples.regression_metrics(segments=summary)
    text = render_report(evidence_for([task_model("review_time", metrics)]))
    assert "No segment of at least 5.0% of the scored rows could be tested." in text
    assert "Worst segment" not in text


@pytest.mark.parametrize(
    ("metric", "value", "threshold", "cells"),
    [
        ("mae_increase", 0.25, 0.1, "| 25.00% | 10.00% |"),
        ("rmse_increase", 1.5, 0.2, "| 150.00% | 20.00% |"),
        ("moved_share", 0.4, 0.1, "| 40.00% | 10.00% |"),
        ("accuracy_drop", 0.0609, 0.03, "| 6.09% | 3.00% |"),
        ("macro_f1_drop", 0.0831, 0.03, "| +0.0831 | 0.0300 |"),
        ("segment_flip_rate", 0.3042, 0.05, "| 30.42% | 5.00% |"),
        ("segment_moved_share", 0.3, 0.1, "| 30.00% | 10.00% |"),
        ("prediction_psi", 5.1234, 0.25, "| 5.123 | 0.250 |"),
        ("class_psi", 0.2051, 0.1, "| 0.205 | 0.100 |"),
    ],
)
def test_task_reason_values_use_their_metric_formats(metric: str, value: float, threshold: float, cells: str) -> None:
    reason = Reason(
        code=f"{metric}_block", severity=Verdict.BLOCK, message="m", metric=metric, value=value, threshold=threshold
    )
    model = task_examples.model("review_time", task_examples.regression_metrics())
    model.reasons = [reason]
    assert f"| BLOCK | `{metric}_block` | m {cells}" in render_report(evidence_for([model]))


def test_task_and_its_basis_are_stated() -> None:
    model = task_model("review_time", task_examples.regression_metrics())
    model.task_basis = "binding key provenance.task=regression"
    text = render_report(evidence_for([model]))
    assert "- Task: regression (binding key provenance.task=regression)\n\n**Reasons**" in text
