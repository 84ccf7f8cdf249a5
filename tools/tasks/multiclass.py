"""Multiclass classification: the model's probability of each class; a flip is a change of the argmax class,
paired accuracy and macro-F1 its quality, per-class flips and PSI; the class-flip and transition plots; its chat
columns."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from policies import ModelMetrics, MulticlassMetrics
from tools.evidence import plots_multiclass
from tools.evidence.formats import decimal, pct, points, share_range
from tools.evidence.task_text import SummaryCells, interval, multiclass_line, worst_class, worst_class_psi
from tools.evidence.task_views import Cell, MetricChange, TaskView
from tools.experiment.metrics_multiclass import compute_multiclass_metrics
from tools.task_registry import Escape, MeasureOptions, MLTask, register
from tools.tasks.binary import BinaryView

# Short: the chat's column is ~700 px wide, and "Failed rows" must stay in view.
HEADER = ["Failed rows", "Argmax flips", "Accuracy", "ΔAccuracy", "ΔMacro-F1", "Worst class", "Class PSI (max)"]


def _flips(m: ModelMetrics) -> Cell:
    return Cell(pct(m.flip_rate, 1), share_range(m.flip_rate_ci_low, m.flip_rate_ci_high))


class UnmeasuredView(BinaryView):
    """A multiclass model measured for a v1 policy, which has no multiclass rules: its flips, the binary view's
    n/a fields, and n/a in the other multiclass columns of the chat's table."""

    def table_header(self) -> list[str]:
        return HEADER

    def table_cells(self, escape: Escape) -> list[Cell]:
        return [Cell(pct(self.m.failure_rate, 1)), _flips(self.m), *[Cell("n/a")] * (len(HEADER) - 2)]


def _num(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


class MulticlassView(TaskView):
    task = "multiclass"

    def __init__(self, metrics: ModelMetrics, section: MulticlassMetrics) -> None:
        super().__init__(metrics)
        self.mc = section

    def cells(self) -> SummaryCells:
        mc = self.mc
        return SummaryCells(
            task="multiclass",
            quality=f"accuracy {pct(mc.accuracy.baseline)} → {pct(mc.accuracy.mutated)}",
            change=f"Δaccuracy {points(mc.accuracy.delta)} "
            f"{interval(mc.accuracy.ci_low, mc.accuracy.ci_high, 'points')}",
            changed=f"argmax flips {pct(self.m.flip_rate)}",
            psi=decimal(self.m.psi, 3),
        )

    def line(self, *, ascii_only: bool = False) -> str:
        return multiclass_line(self.m, self.mc, ascii_only=ascii_only)

    def short(self) -> str:
        m, mc = self.m, self.mc
        return (
            f"flips {pct(m.flip_rate, 1)}, accuracy {pct(mc.accuracy.baseline, 1)} → {pct(mc.accuracy.mutated, 1)}, "
            f"macro-F1 {decimal(mc.macro_f1.baseline, 3)} → {decimal(mc.macro_f1.mutated, 3)}, "
            f"PSI {decimal(m.psi, 2)}, {self._failures()}"
        )

    def performance(self) -> MetricChange:
        return MetricChange(name="accuracy", change=self.mc.accuracy)

    def table_header(self) -> list[str]:
        return HEADER

    def table_cells(self, escape: Escape) -> list[Cell]:
        m, mc = self.m, self.mc
        worst, psi = worst_class(mc), worst_class_psi(mc)

        def f1(value: float | None) -> str:
            return _num(value, "+.3f")

        return [
            Cell(pct(m.failure_rate, 1)),
            _flips(m),
            Cell(f"{pct(mc.accuracy.baseline, 1)} → {pct(mc.accuracy.mutated, 1)}"),
            Cell(points(mc.accuracy.delta), f"{points(mc.accuracy.ci_low)} to {points(mc.accuracy.ci_high)}"),
            Cell(f1(mc.macro_f1.delta), f"{f1(mc.macro_f1.ci_low)} to {f1(mc.macro_f1.ci_high)}"),
            Cell(f"{escape(worst[0])} {pct(worst[1], 1)}" if worst else "n/a"),
            Cell(f"{_num(psi[1], '.2f')} ({escape(psi[0])})" if psi else "n/a"),
        ]


class Multiclass(MLTask):
    name = "multiclass"
    outputs = "probabilities"
    per_class = True
    segment_metric = "flip_rate"
    plot_files = {"class_flips": "class-flips", "transitions": "transitions"}

    def score(self, pipeline: Any, features: pd.DataFrame, width: int) -> np.ndarray:
        proba = np.asarray(pipeline.predict_proba(features), dtype=np.float64)
        if proba.shape != (len(features), width):
            raise ValueError(f"predict_proba returned shape {proba.shape} for {len(features)} rows and {width} classes")
        return proba

    def measure(
        self, y_true: np.ndarray, baseline: np.ndarray, mutated: np.ndarray, failed: np.ndarray, options: MeasureOptions
    ) -> tuple[ModelMetrics, np.ndarray, np.ndarray]:
        if options.classes is None:
            raise ValueError("a multiclass model needs classes (the probability columns' order: pipeline.classes_)")
        return compute_multiclass_metrics(
            y_true, baseline, mutated, failed, options.classes, confidence=options.confidence, seed=options.seed,
            threshold=options.threshold, encoded=options.encoded,
        )  # fmt: skip

    def view(self, metrics: ModelMetrics) -> TaskView:
        if metrics.multiclass is None:
            return UnmeasuredView(metrics)
        return MulticlassView(metrics, metrics.multiclass)

    def figures(self, slug: str, data: Any) -> dict[str, Figure]:
        base, mut, excluded = data.baseline, data.mutated, data.excluded
        return {
            "class_flips": plots_multiclass.class_flip_figure(slug, base, mut, data.classes, excluded),
            "transitions": plots_multiclass.transitions_figure(slug, base, mut, data.classes, excluded),
        }

    def plot_labels(self, y_true: np.ndarray) -> np.ndarray:
        return np.asarray(y_true)

    def label_summary(self, labels: pd.Series, classes: tuple[str, ...] | None) -> str:
        counts = labels.value_counts().sort_index()
        return "multiclass, " + ", ".join(f"{value}: {count}" for value, count in counts.items())


register(Multiclass())
