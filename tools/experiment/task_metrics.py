"""One entry point for every task's metrics, plus segments: the task (tools/tasks/, looked up by name) measures.

When ``segments_frame`` is given (the evaluation rows' unmutated columns, same row order), the
per-row event of the task (a flip, or a moved prediction) is segmented by its columns (tools/experiment/segments.py)
and tested against ``segment_bands`` (the policy's (warning, block) band of that rate: ``policy.segment_bands(task)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from policies import ModelMetrics, SegmentRule, TaskName
from tools import task_registry
from tools.experiment.segments import DEFAULT_SEGMENT_BANDS, DEFAULT_SEGMENT_RULE, SegmentGroups, segment_analysis
from tools.task_registry import MeasureOptions


@dataclass(frozen=True)
class MetricInputs:
    """The part of the metrics' work that depends on the evaluation data alone, not on the mutation: a multiclass
    model's label codes and the segment groups. `prepare_metric_inputs` computes it while the model scores."""

    labels: tuple[np.ndarray, list[str]] | None
    groups: SegmentGroups | None


def prepare_metric_inputs(
    labels: tuple[np.ndarray, list[str]] | None,
    segments_frame: pd.DataFrame | None,
    segment_rule: SegmentRule | None = None,
) -> MetricInputs:
    """``labels``: a multiclass model's label codes (`TaskDecision.label_codes`), None for the other tasks; the
    segments frame and rule as `compute_task_metrics` will get them."""
    groups = None
    if segments_frame is not None:
        groups = SegmentGroups(segments_frame, segment_rule or DEFAULT_SEGMENT_RULE).prepare()
    return MetricInputs(labels=labels, groups=groups)


def compute_task_metrics(
    task: TaskName,
    y_true: np.ndarray,
    baseline: np.ndarray,
    mutated: np.ndarray,
    failed: np.ndarray,
    *,
    threshold: float = 0.5,
    confidence: float = 0.95,
    classes: Sequence[object] | None = None,
    segments_frame: pd.DataFrame | None = None,
    segment_bands: tuple[float, float] | None = None,
    tolerance_fraction: float = 0.1,
    seed: int = 0,
    segment_rule: SegmentRule | None = None,
    prepared: MetricInputs | None = None,
) -> ModelMetrics:
    """The task's ModelMetrics; see the module docstring and policies/metrics.py for what each field means per task.

    baseline / mutated: binary -> 1-D positive-class probabilities; multiclass -> (n, k) probabilities in
    ``classes`` order (required); regression -> 1-D predictions. ``failed``: 1-D bool, NaN/inf rows count too.
    ``segment_rule`` (the policy's ``segments`` section) defaults to default-v2's; ``segment_bands`` to (0.05, 0.10).
    ``prepared``: `prepare_metric_inputs` of the same labels, classes, segments frame and rule, if already computed.
    """
    kind = task_registry.get(task)
    options = MeasureOptions(
        threshold=threshold, confidence=confidence, classes=classes, tolerance_fraction=tolerance_fraction,
        seed=seed, encoded=prepared.labels if prepared is not None else None,
    )  # fmt: skip
    metrics, ok, events = kind.measure(y_true, baseline, mutated, failed, options)
    metric = kind.segment_metric
    if segments_frame is None:
        return metrics
    summary = segment_analysis(
        segments_frame, ok, events, metric=metric, bands=segment_bands or DEFAULT_SEGMENT_BANDS,
        rule=segment_rule or DEFAULT_SEGMENT_RULE, confidence=confidence,
        groups=prepared.groups if prepared is not None else None,
    )  # fmt: skip
    return metrics.model_copy(update={"segments": summary})
