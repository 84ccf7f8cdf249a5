"""Trace records keep each task's metrics: a model's task, regression / multiclass numbers and segments survive
writing the trace as JSON and parsing it back."""

from __future__ import annotations

import json

import pytest

from agent.traces.schema import CatalogInfo, ModelOutcome, Trace, parse_trace
from policies import Verdict
from policies.metrics import ModelMetrics
from tests.agent.chat.helpers import fraud_metrics
from tests.agent.traces.helpers import blocked_turn
from tests.tools.evidence import task_examples

EXAMPLES = {
    "binary": lambda: fraud_metrics(),
    "regression": lambda: task_examples.regression_metrics(segments=task_examples.segments("moved_share")),
    "multiclass": lambda: task_examples.multiclass_metrics(segments=task_examples.segments()),
}


def trace_of(metrics: ModelMetrics) -> Trace:
    turn = blocked_turn(ModelOutcome(urn="urn:m", name="m", verdict=Verdict.BLOCK, task=metrics.task, metrics=metrics))
    return Trace(
        trace_id="t",
        thread_id="t",
        created_at="2026-01-01T00:00:00+00:00",
        updated_at="2026-01-01T00:00:00+00:00",
        planner="cli",
        catalog=CatalogInfo(kind="embedded", base_dir="/"),
        turns=[turn],
    )


@pytest.mark.parametrize("task", list(EXAMPLES))
def test_task_metrics_round_trip_through_a_trace_file(task: str) -> None:
    metrics = EXAMPLES[task]()
    parsed = parse_trace(trace_of(metrics).model_dump_json().encode(), "t.json")
    outcome = parsed.turns[0].outcome
    assert outcome is not None
    assert outcome.models[0].metrics == metrics and outcome.models[0].task == task


def test_a_trace_recorded_before_tasks_reads_as_binary() -> None:
    raw = trace_of(fraud_metrics()).model_dump(mode="json")
    model = raw["turns"][0]["outcome"]["models"][0]
    for key in ("task", "regression", "multiclass", "segments"):
        model["metrics"].pop(key)
    model.pop("task")

    parsed = parse_trace(json.dumps(raw).encode(), "old.json")
    outcome = parsed.turns[0].outcome
    assert outcome is not None
    (read,) = outcome.models
    assert read.task is None and read.metrics is not None and read.metrics.task == "binary"
    assert read.metrics.regression is None and read.metrics.segments is None


@pytest.mark.parametrize("planner", ["gemini", "chat_model"])
def test_a_trace_reads_both_chat_model_planner_names(planner: str) -> None:
    """Traces recorded as "gemini" (before other chat models could plan) still load, next to "chat_model"."""
    raw = trace_of(fraud_metrics()).model_dump(mode="json")
    raw["planner"] = raw["turns"][0]["planner"] = planner
    raw["turns"][0]["outcome"]["plan_record"] = {"planner": planner, "mutation": None, "description": "no plan"}

    parsed = parse_trace(json.dumps(raw).encode(), "t.json")
    outcome = parsed.turns[0].outcome
    assert parsed.planner == parsed.turns[0].planner == planner
    assert outcome is not None and outcome.plan_record is not None and outcome.plan_record.planner == planner
