"""One view per task: every renderer's numbers for a model come from tools/evidence/task_views.py."""

from __future__ import annotations

import pytest

from policies import ModelMetrics
from tests.agent.chat.helpers import fraud_metrics
from tests.tools.evidence import task_examples
from tools.evidence.task_views import TaskView, task_view
from tools.tasks.binary import BinaryView
from tools.tasks.multiclass import MulticlassView
from tools.tasks.regression import RegressionView


@pytest.mark.parametrize(
    ("metrics", "view", "performance"),
    [
        (fraud_metrics(), BinaryView, "AUC"),
        (task_examples.regression_metrics(), RegressionView, "MAE"),
        (task_examples.multiclass_metrics(), MulticlassView, "accuracy"),
    ],
)
def test_each_task_has_its_own_view(metrics: ModelMetrics, view: type[TaskView], performance: str) -> None:
    shown = task_view(metrics)
    assert type(shown) is view and shown.task == metrics.task == shown.cells().task
    assert shown.performance() is not None and shown.performance().name == performance  # type: ignore[union-attr]
    assert shown.short().endswith("failures " + f"{metrics.failure_rate * 100:.1f}%")


def test_the_short_lines_name_each_tasks_own_metrics() -> None:
    assert task_view(fraud_metrics()).short() == "flips 78.8%, ΔAUC -0.173, PSI 7.31, failures 0.0%"
    regression = task_view(task_examples.regression_metrics()).short()
    assert regression.startswith("MAE ") and "AUC" not in regression and "moved" in regression
    multiclass = task_view(task_examples.multiclass_metrics()).short()
    assert multiclass.startswith("flips ") and "accuracy" in multiclass and "AUC" not in multiclass


def test_a_model_without_its_task_section_shows_no_other_tasks_numbers() -> None:
    """A multiclass model judged by a v1 policy has no multiclass section: n/a, not a regression's or an AUC."""
    bare = task_examples.multiclass_metrics().model_copy(update={"multiclass": None})
    shown = task_view(bare)
    assert isinstance(shown, BinaryView)
    assert shown.performance() is None
    assert "n/a" in shown.cells().quality
