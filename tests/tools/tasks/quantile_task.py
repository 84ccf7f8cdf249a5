"""A fourth ML task, written as a user would add one: a 0.9-quantile regressor (a p90 delivery-time or demand
forecast), judged by its pinball loss and the share of predictions that moved. This module and its registration
(`register` below, and PROVENANCE_TASKS naming the module so the experiment's workers load it too) are all it
takes: nothing in agent/, tools/ or policies/ names this task (tests/tools/tasks/test_fourth_task.py checks).

It uses only the library's public helpers (intervals, PSI, the plot frame) and the general metrics section
(`TaskMetrics`) a policy's `tasks: {quantile: ...}` judges.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from policies import ModelMetrics, PairedChange, TaskMetrics
from tools.evidence.plot_common import new_figure, not_computable
from tools.evidence.task_views import TaskMetricsView, TaskView
from tools.experiment.metrics import psi, wilson_interval, z_quantile
from tools.experiment.task import final_estimator
from tools.task_registry import MeasureOptions, MLTask, register

ALPHA = 0.9  # the quantile this task's models predict
TOLERANCE_FRACTION = 0.1  # a prediction moved beyond this x std of the baseline predictions


def pinball(y: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Each row's pinball (quantile) loss at ALPHA."""
    error = y - q
    loss: np.ndarray = np.maximum(ALPHA * error, (ALPHA - 1) * error)
    return loss


def _paired_mean(before: np.ndarray, after: np.ndarray, confidence: float) -> PairedChange:
    difference = after - before
    delta = float(difference.mean())
    half = z_quantile(confidence) * float(difference.std(ddof=1)) / np.sqrt(len(difference))
    baseline = float(before.mean())
    return PairedChange(
        baseline=baseline,
        mutated=float(after.mean()),
        delta=delta,
        ci_low=delta - half,
        ci_high=delta + half,
        relative=delta / baseline if baseline else None,
    )


class Quantile(MLTask):
    name = "quantile"
    outputs = "predictions"
    segment_metric = "moved_share"
    plot_files = {"change": "quantile-change"}

    def unfit(self, pipeline: Any) -> str | None:
        model = final_estimator(pipeline)
        if getattr(model, "loss", None) != "quantile" or getattr(model, "alpha", None) != ALPHA:
            return f"{type(model).__name__} is not a {ALPHA}-quantile regressor (loss='quantile', alpha={ALPHA})"
        return None

    def score(self, pipeline: Any, features: pd.DataFrame, width: int) -> np.ndarray:
        return np.asarray(pipeline.predict(features), dtype=np.float64)

    def measure(
        self, y_true: np.ndarray, baseline: np.ndarray, mutated: np.ndarray, failed: np.ndarray, options: MeasureOptions
    ) -> tuple[ModelMetrics, np.ndarray, np.ndarray]:
        n = len(y_true)
        ok = ~failed & np.isfinite(baseline) & np.isfinite(mutated)
        y, base, mut = np.asarray(y_true, dtype=np.float64)[ok], baseline[ok], mutated[ok]
        scored = int(ok.sum())
        tolerance = TOLERANCE_FRACTION * float(base.std()) if scored else 0.0
        moved = np.zeros(n, dtype=bool)
        moved[ok] = np.abs(mut - base) > tolerance
        events = int(moved.sum())
        low, high = wilson_interval(events, scored, options.confidence)
        section = TaskMetrics(
            share_name="moved_share",
            share=events / scored if scored else 0.0,
            share_ci_low=low,
            share_ci_high=high,
            events=events,
            paired={
                "pinball_loss": _paired_mean(pinball(y, base), pinball(y, mut), options.confidence),
                "coverage": _paired_mean((y <= base).astype(float), (y <= mut).astype(float), options.confidence),
            },
            notes={"tolerance": f"{tolerance:.4g} = {TOLERANCE_FRACTION} x baseline prediction std"},
        )
        shift = np.abs(mut - base)
        metrics = ModelMetrics(
            n=n,
            n_scored=scored,
            flips=0,
            flip_rate=None,
            flip_rate_ci_low=None,
            flip_rate_ci_high=None,
            prob_shift_mean=float(shift.mean()) if scored else None,
            prob_shift_p95=float(np.quantile(shift, 0.95)) if scored else None,
            prob_shift_max=float(shift.max()) if scored else None,
            psi=psi(base, mut) if scored else None,
            failures=int((~ok).sum()),
            failure_rate=float((~ok).mean()) if n else 0.0,
            threshold=options.threshold,
            confidence=options.confidence,
            methods={"pinball_loss": f"paired mean at alpha {ALPHA}, normal interval", "moved_share": "Wilson"},
            task=self.name,
            other=section,
        )
        return metrics, ok, moved

    def view(self, metrics: ModelMetrics) -> TaskView:
        return TaskMetricsView(metrics)

    def figures(self, slug: str, data: Any) -> dict[str, Figure]:
        figure = new_figure(f"{slug}: p{int(ALPHA * 100)} prediction change", f"{data.excluded} rows excluded")
        change = data.mutated - data.baseline
        if len(change) == 0:
            not_computable(figure, "no scored rows")
        else:
            figure.add_subplot().hist(change, bins=50)
        return {"change": figure}


register(Quantile())
