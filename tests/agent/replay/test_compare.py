"""The replay's comparison of a model's metrics, for every task: nested task metrics are compared leaf by leaf
with the float tolerance and named by their path."""

from __future__ import annotations

from agent.replay.compare import FLOAT_ABS_TOL, Comparer
from agent.traces.schema import ModelOutcome, TraceTurn
from policies import Verdict
from policies.metrics import ModelMetrics, Task
from tests.agent.chat.helpers import fraud_metrics
from tests.agent.traces.helpers import blocked_turn
from tests.tools.evidence import task_examples


def turn(metrics: ModelMetrics, task: Task | None = None) -> TraceTurn:
    return blocked_turn(
        ModelOutcome(urn="urn:m", name="review_time", verdict=Verdict.BLOCK, task=task, metrics=metrics)
    )


def differences(recorded: ModelMetrics, now: ModelMetrics) -> list[str]:
    comparer = Comparer(live=False)
    comparer.turn(turn(recorded), turn(now))
    return [d.subject for d in comparer.differences]


def regression(mae_delta: float | None = None, **changes: object) -> ModelMetrics:
    metrics = task_examples.regression_metrics(segments=task_examples.segments("moved_share"))
    r = metrics.regression
    assert r is not None
    if mae_delta is not None:
        changes["mae"] = r.mae.model_copy(update={"delta": mae_delta})
    return metrics.model_copy(update={"regression": r.model_copy(update=changes)})


def test_identical_metrics_of_every_task_reproduce() -> None:
    for metrics in (
        fraud_metrics(),
        task_examples.regression_metrics(segments=task_examples.segments("moved_share")),
        task_examples.multiclass_metrics(segments=task_examples.segments()),
    ):
        assert differences(metrics, metrics.model_copy(deep=True)) == []


def test_a_changed_regression_metric_is_named_by_its_path() -> None:
    recorded = regression()
    assert differences(recorded, regression(mae_delta=1842.3845 + FLOAT_ABS_TOL / 10)) == []  # within tolerance
    assert differences(recorded, regression(mae_delta=1843.0, tolerance_basis="0.2 x baseline prediction std")) == [
        "model review_time · metric regression.mae.delta",
        "model review_time · metric regression.tolerance_basis",
    ]


def test_multiclass_and_segment_leaves_are_compared() -> None:
    recorded = task_examples.multiclass_metrics(segments=task_examples.segments())
    mc, seg = recorded.multiclass, recorded.segments
    assert mc is not None and seg is not None and seg.worst is not None
    worst = seg.worst.model_copy(update={"p_adjusted": 0.01})
    now = recorded.model_copy(
        update={
            "multiclass": mc.model_copy(update={"per_class_flip_rate": {**mc.per_class_flip_rate, "high": 0.5}}),
            "segments": seg.model_copy(update={"worst": worst, "findings": [worst, *seg.findings[1:]]}),
        }
    )
    assert differences(recorded, now) == [
        "model review_time · metric multiclass.per_class_flip_rate.high",
        "model review_time · metric segments.worst.p_adjusted",
        "model review_time · metric segments.findings[0].p_adjusted",
    ]
    fewer = recorded.model_copy(update={"segments": seg.model_copy(update={"findings": seg.findings[:1]})})
    assert differences(recorded, fewer) == ["model review_time · metric segments.findings"]  # one difference


def test_a_model_measured_as_another_task_is_a_difference() -> None:
    comparer = Comparer(live=False)
    regression_metrics = task_examples.regression_metrics()
    comparer.turn(turn(regression_metrics, "regression"), turn(fraud_metrics(), "binary"))
    subjects = [d.subject for d in comparer.differences]
    assert subjects[:3] == [
        "model review_time · task",
        "model review_time · metric n",
        "model review_time · metric n_scored",
    ]
    assert "model review_time · metric task" in subjects and "model review_time · metric regression" in subjects
    assert "model review_time · metric binary" in subjects  # measured as binary now, not before
    untyped = Comparer(live=False)  # a trace recorded before tasks has no task: not a difference by itself
    untyped.turn(turn(fraud_metrics()), turn(fraud_metrics(), "binary"))
    assert untyped.differences == []
