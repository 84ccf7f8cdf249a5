"""One view per task of a model's metrics, which every renderer asks: report.md's summary table, the terminal, the
chat's steps and answer, `provenance check`'s performance column. A fourth task adds one view class and one line
in `task_view`.

A model whose task section is missing (a multiclass model judged by a v1 policy measures no multiclass section)
is shown with the binary view's fields, which are then "n/a": never another task's numbers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from pydantic import BaseModel, ConfigDict

from policies import ModelMetrics, MulticlassMetrics, PairedChange, RegressionMetrics, Task
from tools.evidence.formats import auc, decimal, pct, points, relative, share_range, sig, signed
from tools.evidence.task_text import SummaryCells, interval, multiclass_line, regression_line


class MetricChange(BaseModel):
    """A task's performance metric, named, before and after the change (`provenance check`'s column)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str  # "AUC", "MAE", "accuracy"
    change: PairedChange


Parts = tuple[float | None, float | None, float | None, float | None, float | None]


def parts(change: PairedChange | None) -> Parts:
    """(baseline, mutated, delta, ci_low, ci_high); every one None for a change that could not be measured."""
    if change is None:
        return None, None, None, None, None
    return change.baseline, change.mutated, change.delta, change.ci_low, change.ci_high


class TaskView(ABC):
    task: Task

    def __init__(self, metrics: ModelMetrics) -> None:
        self.m = metrics

    @abstractmethod
    def cells(self) -> SummaryCells:
        """The model's row of a summary table that mixes tasks (report.md)."""

    @abstractmethod
    def line(self, *, ascii_only: bool = False) -> str:
        """Every headline number with its interval, on one line (the terminal's `assess`)."""

    @abstractmethod
    def short(self) -> str:
        """The few numbers a person scans first, ending with the inference failures (the chat, the answer)."""

    @abstractmethod
    def performance(self) -> MetricChange | None:
        """The task's performance metric before and after (`provenance check`)."""

    def _failures(self) -> str:
        return f"failures {pct(self.m.failure_rate, 1)}"


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


def task_view(metrics: ModelMetrics) -> TaskView:
    if metrics.task == "regression" and metrics.regression is not None:
        return RegressionView(metrics, metrics.regression)
    if metrics.task == "multiclass" and metrics.multiclass is not None:
        return MulticlassView(metrics, metrics.multiclass)
    return BinaryView(metrics)
