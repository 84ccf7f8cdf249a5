"""`AssessmentResult.summary()`, the --json output of `provenance assess`: each model's task and its metrics."""

from __future__ import annotations

from agent.assessment import AssessmentResult
from policies import ModelMetrics, Verdict
from tests.agent.chat.helpers import fraud_metrics
from tests.tools.evidence import task_examples
from tests.tools.evidence.test_terminal import RUN_DIR, result


def test_json_summary_names_each_models_task() -> None:
    unmeasured = task_examples.model("broken", None, Verdict.INCOMPLETE)
    unmeasured.task = "regression"
    models: list[tuple[str, ModelMetrics | None]] = [
        ("fraud", fraud_metrics()),
        ("review_time", task_examples.regression_metrics()),
    ]
    evidence = result(*(task_examples.model(n, m) for n, m in models), unmeasured)
    summary = AssessmentResult(evidence=evidence, run_dir=RUN_DIR).summary()
    assert [m["task"] for m in summary["models"]] == ["binary", "regression", "regression"]
    regression = summary["models"][1]["metrics"]["regression"]
    assert regression["mae"]["relative"] == 2213.1 and regression["tolerance_basis"].startswith("0.1 x")
