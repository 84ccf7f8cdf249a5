"""Binary classification: the model's probability of the positive class; a flip is a crossing of the threshold,
the paired ROC AUC (DeLong) its quality; the ROC and probability-shift plots; its columns in the chat's table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from policies import ModelMetrics
from tools.evidence import plots
from tools.evidence.formats import auc, decimal, pct, share_range, signed
from tools.evidence.task_text import SummaryCells, interval
from tools.evidence.task_views import Cell, MetricChange, TaskView, parts
from tools.experiment.metrics import binary_metrics
from tools.task_registry import Escape, MeasureOptions, MLTask, register


def num(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


class BinaryView(TaskView):
    task = "binary"

    def __init__(self, metrics: ModelMetrics) -> None:
        super().__init__(metrics)
        # None: ROC AUC not computable, or no binary section (a multiclass model measured for a v1 policy)
        self.auc = metrics.binary.auc if metrics.binary is not None else None

    def cells(self) -> SummaryCells:
        m = self.m
        before, after, delta, low, high = parts(self.auc)
        return SummaryCells(
            task=m.task,
            quality=f"AUC {auc(before)} → {auc(after)}",
            change=f"ΔAUC {signed(delta)} {interval(low, high, 'signed')}",
            changed=f"flips {pct(m.flip_rate)}",
            psi=decimal(m.psi, 3),
        )

    def line(self, *, ascii_only: bool = False) -> str:
        m, a = self.m, self.auc
        arrow = "->" if ascii_only else "→"
        delta = "delta" if ascii_only else "Δ"
        before, after, *_ = parts(a)
        auc = f"AUC {decimal(before, 3)} {arrow} {decimal(after, 3)}"
        if a is not None and a.p_value is not None:
            auc += f" ({delta} {decimal(a.delta, 3)}, p={a.p_value:.2g})"
        return (
            f"{auc}; flips {pct(m.flip_rate, 1)} ({share_range(m.flip_rate_ci_low, m.flip_rate_ci_high)})"
            f"; shift mean {decimal(m.prob_shift_mean, 3)} p95 {decimal(m.prob_shift_p95, 3)}; PSI {decimal(m.psi, 3)}"
        )

    def short(self) -> str:
        m = self.m
        return (
            f"flips {pct(m.flip_rate, 1)}, ΔAUC {signed(parts(self.auc)[2], 3)}, PSI {decimal(m.psi, 2)}, "
            f"{self._failures()}"
        )

    def performance(self) -> MetricChange | None:
        return None if self.auc is None else MetricChange(name="AUC", change=self.auc)

    def table_header(self) -> list[str]:
        return ["Failed rows", "Flip rate", "AUC", "ΔAUC", "Score PSI"]  # short: the chat's column is ~700 px

    def table_cells(self, escape: Escape) -> list[Cell]:
        m, a = self.m, self.auc
        before, after, change, low, high = parts(a)
        p_value = num(None if a is None else a.p_value, ".2g")
        return [
            Cell(pct(m.failure_rate, 1)),
            Cell(pct(m.flip_rate, 1), share_range(m.flip_rate_ci_low, m.flip_rate_ci_high)),
            Cell(f"{num(before)} → {num(after)}"),
            Cell(f"{num(change, '+.3f')}, p = {p_value}", f"{num(low, '+.3f')} to {num(high, '+.3f')}"),
            Cell(num(m.psi, ".2f")),
        ]


class Binary(MLTask):
    name = "binary"
    outputs = "probabilities"
    segment_metric = "flip_rate"
    plot_files = {"roc": "roc", "shift": "shift"}

    def score(self, pipeline: Any, features: pd.DataFrame, width: int) -> np.ndarray:
        proba = np.asarray(pipeline.predict_proba(features), dtype=np.float64)
        return proba[:, 1] if proba.ndim == 2 else proba

    def measure(
        self, y_true: np.ndarray, baseline: np.ndarray, mutated: np.ndarray, failed: np.ndarray, options: MeasureOptions
    ) -> tuple[ModelMetrics, np.ndarray, np.ndarray]:
        return binary_metrics(y_true, baseline, mutated, failed, options.threshold, options.confidence)

    def view(self, metrics: ModelMetrics) -> BinaryView:
        return BinaryView(metrics)

    def figures(self, slug: str, data: Any) -> dict[str, Figure]:
        return plots.binary_figures(slug, data)

    def plot_labels(self, y_true: np.ndarray) -> np.ndarray:
        return plots.binary_labels(y_true)

    def label_summary(self, labels: pd.Series, classes: tuple[str, ...] | None) -> str:
        if classes is not None:
            counts = labels.value_counts().sort_index()
            return "binary, " + ", ".join(f"{value}: {count}" for value, count in counts.items())
        positives = int(labels.sum())
        return f"{positives} positive, {len(labels) - positives} negative"


register(Binary())
