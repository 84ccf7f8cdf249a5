"""The verdict card's metric tables: a table per task with that task's columns, the regression tolerance, the
worst segments."""

from __future__ import annotations

from agent.chat.tables import metric_tables, segment_item
from policies import Verdict
from tests.agent.chat.helpers import fraud_model
from tests.tools.evidence import task_examples


def tables(*models: object) -> str:
    return "\n".join(metric_tables(list(models), 0.95))  # type: ignore[arg-type]


def test_binary_only_run_keeps_its_single_table() -> None:
    text = tables(fraud_model())
    assert text.count("| Model | Verdict |") == 1
    assert "| Model | Verdict | Failed rows | Flip rate | AUC | ΔAUC | Score PSI |" in text
    assert "- fraud\\_detector, 95% CI: Flip rate 77.8% to 79.7%; ΔAUC -0.185 to -0.160" in text
    assert "Segments" not in text


def test_regressor_table_has_errors_moved_share_and_no_auc() -> None:
    text = tables(task_examples.model("review_time", task_examples.regression_metrics()))
    assert "AUC" not in text and "Flip" not in text
    assert "| Model | Verdict | Failed rows | Moved | MAE | ΔMAE | ΔRMSE | PSI |" in text
    row = next(line for line in text.splitlines() if line.startswith("| review"))
    assert row == (
        "| review\\_time | **BLOCK** | 0.1% | 40.0% | 0.8325 → 1,843 | +1,842 (+221310.0%) "
        "| +2,711 (+257880.0%) | 5.12 |"
    )
    # the intervals, under the table: in the cells they pushed it past the chat's width
    assert "- review\\_time, 95% CI: Moved 39.0% to 41.0%; ΔMAE +1,800 to +1,885; ΔRMSE +2,602 to +2,820" in text
    assert "- *moved* for review\\_time: \\|change\\| \\> 0\\.2198 \\(0\\.1 x baseline prediction std\\)" in text


def test_multiclass_table_has_argmax_flips_accuracy_macro_f1_and_worst_class() -> None:
    text = tables(task_examples.model("risk_tier", task_examples.multiclass_metrics()))
    assert "AUC" not in text
    row = next(line for line in text.splitlines() if line.startswith("| risk"))
    assert row == (
        "| risk\\_tier | **BLOCK** | 0.1% | 7.0% | 91.2% → 85.1% | -6.09 pp | -0.083 | high 31.1% | 0.21 (medium) |"
    )
    assert (
        "- risk\\_tier, 95% CI: Argmax flips 6.5% to 7.5%; ΔAccuracy -6.61 pp to -5.57 pp; ΔMacro-F1 -0.090 to -0.076"
        in text
    )


def test_a_mixed_run_gets_one_table_per_task_and_unmeasured_models_join_the_first() -> None:
    unmeasured = task_examples.model("broken", None, Verdict.INCOMPLETE)
    regression = task_examples.model("review_time", task_examples.regression_metrics())
    multiclass = task_examples.model("risk_tier", task_examples.multiclass_metrics())
    text = tables(regression, unmeasured, multiclass)
    headers = [line for line in text.splitlines() if line.startswith("| Model |")]
    assert [h.split(" | ")[3] for h in headers] == ["Argmax flips", "Moved"]  # task order
    multiclass_table = text.split(headers[1])[0]
    assert "| broken | **INCOMPLETE** | not measured | | | | | | |" in multiclass_table  # 9 columns, like its header
    assert "AUC" not in text


def test_worst_segments_are_listed_per_model() -> None:
    segmented = task_examples.model("risk_tier", task_examples.multiclass_metrics(segments=task_examples.segments()))
    text = tables(fraud_model(), segmented)
    assert "**Segments**\n- **risk\\_tier**: region=north \\(12\\.1% of rows\\)\\: flip rate 30\\.4%" in text
    summary = task_examples.segments()
    assert summary.worst is not None
    assert "BH p = 1\\.5e\\-19, credibly above the block band; 14 segments tested" in segment_item(summary)
    quiet = summary.model_copy(update={"worst": summary.findings[1], "findings": summary.findings[1:]})
    assert "BH p = 0\\.61, not credibly above the warning band" in segment_item(quiet)  # the warning band's p
    assert segment_item(task_examples.segments(findings=0)) == "no segment of at least 5% of rows; 14 segments tested"
    underflow = summary.worst.model_copy(update={"p_adjusted_block": 0.0})
    assert "BH p \\< 1e\\-300, credibly above" in segment_item(summary.model_copy(update={"worst": underflow}))


def test_a_regressor_without_regression_metrics_fills_every_column_of_its_header() -> None:
    metrics = task_examples.regression_metrics(regression=None)
    text = tables(task_examples.model("review_time", metrics))
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("| Model |"))
    row = next(line for line in lines if line.startswith("| review"))
    assert row.count(" |") == header.count(" |")
    assert row.endswith(" 0.1% | n/a | n/a | n/a | n/a | n/a |")  # failed rows first: never out of view
