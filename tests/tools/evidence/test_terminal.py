"""The terminal rendering of an assessment: each model's own task metrics and its worst segment;
models built directly (no pipeline)."""

from __future__ import annotations

from pathlib import Path

from policies import Verdict
from tests.agent.chat.helpers import fraud_metrics
from tests.tools.evidence import task_examples
from tools.evidence.schema import ChangeRequest, Evidence, ModelEvidence, PlanRecord, PolicyRecord
from tools.evidence.terminal import metrics_line, render_evidence

RUN_DIR = Path("/runs/r1")


def render_text(evidence: Evidence) -> str:
    return render_evidence(evidence, RUN_DIR)


def result(*models: ModelEvidence) -> Evidence:
    evidence = Evidence(
        run_id="r1",
        request=ChangeRequest(dataset_urn="urn:d", field="amount", op="scale", params={}, fraction=1, seed=0),
        catalog="embedded",
        plan=PlanRecord(planner="cli", mutation=None, description="scale amount by 100"),
        models=list(models),
        verdict=Verdict.BLOCK,
        policy=PolicyRecord(name="default", version=2, sha256="0" * 64, path="policies/default-v2.yaml"),
    )
    return evidence


def test_binary_line_is_unchanged() -> None:
    assert metrics_line(fraud_metrics()) == (
        "AUC 0.899 -> 0.727 (delta -0.173, p=6.1e-158); flips 78.8% (77.8% to 79.7%); shift mean 0.686 p95 0.938; "
        "PSI 7.307; failures 0.0% (n=7200)"
    )


def test_regressor_shows_errors_moved_share_and_no_auc() -> None:
    metrics = task_examples.regression_metrics()
    text = render_text(result(task_examples.model("review_time", metrics)))
    assert "AUC" not in text and "flips" not in text
    line = metrics_line(metrics)
    assert line.startswith("MAE 0.8325 -> 1,843 (delta +1,842 (+1,800 to +1,885), +221310.0%); ")
    assert "RMSE 1.051 -> 2,712 (delta +2,711 (+2,602 to +2,820), +257880.0%)" in line
    assert "moved 40.00% (39.04% to 40.97%) beyond +/-0.2198 (0.1 x baseline prediction std)" in line
    assert line.endswith("prediction PSI 5.123; failures 0.1% (n=10000)")
    assert line.isascii()  # the terminal line stays ASCII, as the binary one


def test_multiclass_shows_argmax_flips_accuracy_macro_f1_and_worst_class() -> None:
    line = metrics_line(task_examples.multiclass_metrics())
    assert "AUC" not in line
    expected = [
        "argmax flips 7.03% (6.54% to 7.54%)",
        "accuracy 91.20% -> 85.11% (delta -6.09 pp (-6.61 pp to -5.57 pp))",
        "macro-F1 0.8843 -> 0.8012 (delta -0.0831 (-0.0902 to -0.0760))",
        "worst class high flips 31.05%",
        "class PSI max 0.205 (medium)",
    ]
    for snippet in expected:
        assert snippet in line, snippet


def test_worst_segment_follows_the_metrics() -> None:
    segmented = task_examples.multiclass_metrics(segments=task_examples.segments())
    text = render_text(result(task_examples.model("risk_tier", segmented)))
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  argmax flips"))
    assert lines[at + 1] == (
        "  worst segment region=north (12.1% of rows, n=1,210): flip rate 30.42% (27.91% to 33.06%) vs 4.12% overall, "
        "p vs block band 1.10e-20 (BH 1.50e-19), credibly above the block band; 14 segment(s) tested in 3 column(s)"
    )
    empty = task_examples.regression_metrics(segments=task_examples.segments(findings=0))
    assert (
        "  segments: no segment of at least 5.0% of rows (14 segment(s) tested in 3 column(s), 1 column(s) skipped)"
        in render_text(result(task_examples.model("review_time", empty)))
    )


def test_a_models_reasons_are_printed_once_in_its_own_section() -> None:
    reason = "flip rate 78.8% (95% CI 77.8% to 79.7%, 5672 of 7200) >= 10% block threshold"
    model = ModelEvidence(
        urn="urn:li:mlModel:(urn:li:dataPlatform:mlflow,fraud_detector,PROD)",
        name="fraud_detector",
        verdict=Verdict.BLOCK,
        reasons=[{"code": "flip_rate", "severity": "BLOCK", "metric": "flip_rate", "message": reason}],
        lineage_path=[],
        metrics=fraud_metrics(),
    )
    evidence = result(model).model_copy(
        update={"verdict_reasons": [f"fraud_detector: BLOCK — {reason}", "lineage could not be read completely: x"]}
    )
    text = render_text(evidence)
    assert text.count(reason) == 1 and f"  [BLOCK] {reason}" in text
    assert "  - fraud_detector: BLOCK\n" in text and "  - lineage could not be read completely: x" in text
