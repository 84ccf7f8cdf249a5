"""Task metrics in words: summary cells per task, worst class, and segment lines."""

from __future__ import annotations

from tests.agent.chat.helpers import fraud_metrics
from tests.tools.evidence import task_examples
from tools.evidence.task_text import finding_line, segment_line, worst_class, worst_class_psi
from tools.evidence.task_views import task_view


def test_summary_cells_name_each_tasks_own_metrics() -> None:
    binary = task_view(fraud_metrics()).cells()
    assert (binary.task, binary.quality, binary.changed) == ("binary", "AUC 0.899 → 0.727", "flips 78.78%")
    assert binary.change == "ΔAUC -0.1727 (-0.1854 to -0.1601)"
    regression = task_view(task_examples.regression_metrics()).cells()
    assert regression.quality == "MAE 0.8325 → 1,843" and regression.changed == "moved 40.00%"
    assert regression.change == "ΔMAE +1,842 (+1,800 to +1,885), +221310.0%" and regression.psi == "5.123"
    multiclass = task_view(task_examples.multiclass_metrics()).cells()
    assert multiclass.quality == "accuracy 91.20% → 85.11%" and multiclass.changed == "argmax flips 7.03%"
    assert multiclass.change == "Δaccuracy -6.09 pp (-6.61 pp to -5.57 pp)"
    for cells in (regression, multiclass):
        assert "AUC" not in " ".join(vars(cells).values())


def test_worst_class_takes_the_first_of_equal_rates() -> None:
    mc = task_examples.multiclass_metrics().multiclass
    assert mc is not None
    assert worst_class(mc) == ("high", 0.3105) and worst_class_psi(mc) == ("medium", 0.2051)
    tied = mc.model_copy(update={"per_class_flip_rate": {"low": 0.2, "medium": 0.2, "high": 0.1}})
    assert worst_class(tied) == ("low", 0.2)
    assert worst_class(mc.model_copy(update={"per_class_flip_rate": {}, "per_class_psi": {}})) is None


def test_finding_line_quotes_the_p_value_of_the_band_it_exceeds() -> None:
    summary = task_examples.segments()
    above_block, below = summary.findings
    assert "p vs block band 1.10e-20 (BH 1.50e-19), credibly above the block band" in finding_line(above_block)
    assert "p vs warning band 0.4213 (BH 0.6102), not credibly above the warning band" in finding_line(below)
    assert segment_line(summary).endswith("; 14 segment(s) tested in 3 column(s)")
