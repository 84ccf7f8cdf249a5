"""Regression: the model's prediction; a prediction "moved" when it changed by more than a tolerance (a share of the
baseline predictions' spread); paired MAE and RMSE its quality; the fit and change plots; its chat columns."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from policies import ModelMetrics, PairedChange, RegressionMetrics
from tools.evidence import plots_regression
from tools.evidence.formats import decimal, pct, relative, share_range, sig
from tools.evidence.task_text import SummaryCells, interval, regression_line
from tools.evidence.task_views import Cell, MetricChange, TaskView, sig_range
from tools.experiment.metrics_regression import compute_regression_metrics
from tools.task_registry import Escape, MeasureOptions, MLTask, register
from tools.tasks.binary import BinaryView

# Short: the chat's column is ~700 px wide, and "Failed rows" must stay in view (a header says "before → after"
# once, in the MAE cell).
HEADER = ["Failed rows", "Moved", "MAE", "ΔMAE", "ΔRMSE", "PSI"]


class UnmeasuredView(BinaryView):
    """A regressor measured for a policy without regression rules: no regression numbers, so the binary view's
    n/a fields, and n/a in every regression column of the chat's table."""

    def table_header(self) -> list[str]:
        return HEADER

    def table_cells(self, escape: Escape) -> list[Cell]:
        return [Cell(pct(self.m.failure_rate, 1)), *[Cell("n/a")] * (len(HEADER) - 1)]


def _change(error: PairedChange) -> Cell:
    """An error's paired change and its relative size; the interval goes under the chat's table."""
    return Cell(f"{sig(error.delta, sign=True)} ({relative(error.relative)})", sig_range(error.ci_low, error.ci_high))


class RegressionView(TaskView):
    task = "regression"

    def __init__(self, metrics: ModelMetrics, section: RegressionMetrics) -> None:
        super().__init__(metrics)
        self.r = section

    def cells(self) -> SummaryCells:
        r = self.r
        return SummaryCells(
            task="regression",
            quality=f"MAE {sig(r.mae.baseline)} → {sig(r.mae.mutated)}",
            change=f"ΔMAE {sig(r.mae.delta, sign=True)} {interval(r.mae.ci_low, r.mae.ci_high, 'sig')}, "
            f"{relative(r.mae.relative)}",
            changed=f"moved {pct(r.moved_share)}",
            psi=decimal(r.prediction_psi, 3),
        )

    def line(self, *, ascii_only: bool = False) -> str:
        return regression_line(self.r, ascii_only=ascii_only)

    def short(self) -> str:
        r = self.r
        return (
            f"MAE {sig(r.mae.baseline)} → {sig(r.mae.mutated)} ({relative(r.mae.relative)}), "
            f"moved {pct(r.moved_share, 1)}, PSI {decimal(r.prediction_psi, 2)}, {self._failures()}"
        )

    def performance(self) -> MetricChange:
        return MetricChange(name="MAE", change=self.r.mae)

    def table_header(self) -> list[str]:
        return HEADER

    def table_cells(self, escape: Escape) -> list[Cell]:
        r, m = self.r, self.m
        return [
            Cell(pct(m.failure_rate, 1)),
            Cell(pct(r.moved_share, 1), share_range(r.moved_share_ci_low, r.moved_share_ci_high)),
            Cell(f"{sig(r.mae.baseline)} → {sig(r.mae.mutated)}"),
            _change(r.mae),
            _change(r.rmse),
            Cell("n/a" if r.prediction_psi is None else format(r.prediction_psi, ".2f")),
        ]


class Regression(MLTask):
    name = "regression"
    outputs = "predictions"
    segment_metric = "moved_share"
    plot_files = {"fit": "fit", "change": "change"}

    def score(self, pipeline: Any, features: pd.DataFrame, width: int) -> np.ndarray:
        predicted = np.asarray(pipeline.predict(features), dtype=np.float64)
        if predicted.ndim == 2 and predicted.shape[1] == 1:  # some wrappers return a column vector
            predicted = predicted[:, 0]
        return predicted

    def measure(
        self, y_true: np.ndarray, baseline: np.ndarray, mutated: np.ndarray, failed: np.ndarray, options: MeasureOptions
    ) -> tuple[ModelMetrics, np.ndarray, np.ndarray]:
        return compute_regression_metrics(
            y_true, baseline, mutated, failed, confidence=options.confidence,
            tolerance_fraction=options.tolerance_fraction, threshold=options.threshold,
        )  # fmt: skip

    def view(self, metrics: ModelMetrics) -> TaskView:
        if metrics.regression is None:
            return UnmeasuredView(metrics)
        return RegressionView(metrics, metrics.regression)

    def figures(self, slug: str, data: Any) -> dict[str, Figure]:
        y, base, mut, excluded = data.y, data.baseline, data.mutated, data.excluded
        return {
            "fit": plots_regression.fit_figure(slug, y, base, mut, excluded),
            "change": plots_regression.change_figure(slug, base, mut, excluded, data.tolerance),
        }


register(Regression())
