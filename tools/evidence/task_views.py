"""One view per task of a model's metrics, which every renderer asks: report.md's summary table, the terminal, the
chat's steps and answer, `provenance check`'s performance column. A fourth task adds one view class and one line
in `task_view`.

A model whose task section is missing (a multiclass model judged by a v1 policy measures no multiclass section)
is shown with the binary view's fields, which are then "n/a": never another task's numbers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from pydantic import BaseModel, ConfigDict

from policies import ModelMetrics, MulticlassMetrics, RegressionMetrics, Task
from tools.evidence.formats import auc, decimal, pct, points, relative, sig, signed
from tools.evidence.task_text import SummaryCells, interval, multiclass_line, regression_line


class MetricChange(BaseModel):
    """A performance metric before and after the change; delta = after - before, with its confidence interval."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str  # "AUC", "MAE", "accuracy"
    before: float | None = None
    after: float | None = None
    delta: float | None = None
    delta_ci_low: float | None = None
    delta_ci_high: float | None = None
    p_value: float | None = None


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

    def cells(self) -> SummaryCells:
        m = self.m
        return SummaryCells(
            task=m.task,
            quality=f"AUC {auc(m.auc_baseline)} → {auc(m.auc_mutated)}",
            change=f"ΔAUC {signed(m.auc_delta)} {interval(m.auc_delta_ci_low, m.auc_delta_ci_high, 'signed')}",
            changed=f"flips {pct(m.flip_rate)}",
            psi=decimal(m.psi, 3),
        )

    def line(self, *, ascii_only: bool = False) -> str:
        m = self.m
        arrow = "->" if ascii_only else "→"
        delta = "delta" if ascii_only else "Δ"
        auc = f"AUC {decimal(m.auc_baseline, 3)} {arrow} {decimal(m.auc_mutated, 3)}"
        if m.auc_p_value is not None:
            auc += f" ({delta} {decimal(m.auc_delta, 3)}, p={m.auc_p_value:.2g})"
        return (
            f"{auc}; flips {pct(m.flip_rate, 1)} [{pct(m.flip_rate_ci_low, 1)}, {pct(m.flip_rate_ci_high, 1)}]"
            f"; shift mean {decimal(m.prob_shift_mean, 3)} p95 {decimal(m.prob_shift_p95, 3)}; PSI {decimal(m.psi, 3)}"
        )

    def short(self) -> str:
        m = self.m
        return (
            f"flips {pct(m.flip_rate, 1)}, ΔAUC {signed(m.auc_delta, 3)}, PSI {decimal(m.psi, 2)}, {self._failures()}"
        )

    def performance(self) -> MetricChange | None:
        m = self.m
        if m.auc_baseline is None:
            return None
        return MetricChange(
            name="AUC",
            before=m.auc_baseline,
            after=m.auc_mutated,
            delta=m.auc_delta,
            delta_ci_low=m.auc_delta_ci_low,
            delta_ci_high=m.auc_delta_ci_high,
            p_value=m.auc_p_value,
        )


class RegressionView(TaskView):
    task = "regression"

    def __init__(self, metrics: ModelMetrics, section: RegressionMetrics) -> None:
        super().__init__(metrics)
        self.r = section

    def cells(self) -> SummaryCells:
        r = self.r
        return SummaryCells(
            task="regression",
            quality=f"MAE {sig(r.mae_baseline)} → {sig(r.mae_mutated)}",
            change=f"ΔMAE {sig(r.mae_delta, sign=True)} {interval(r.mae_delta_ci_low, r.mae_delta_ci_high, 'sig')}, "
            f"{relative(r.mae_delta_relative)}",
            changed=f"moved {pct(r.moved_share)}",
            psi=decimal(r.prediction_psi, 3),
        )

    def line(self, *, ascii_only: bool = False) -> str:
        return regression_line(self.r, ascii_only=ascii_only)

    def short(self) -> str:
        r = self.r
        return (
            f"MAE {sig(r.mae_baseline)} → {sig(r.mae_mutated)} ({relative(r.mae_delta_relative)}), "
            f"moved {pct(r.moved_share, 1)}, PSI {decimal(r.prediction_psi, 2)}, {self._failures()}"
        )

    def performance(self) -> MetricChange:
        r = self.r
        return MetricChange(
            name="MAE",
            before=r.mae_baseline,
            after=r.mae_mutated,
            delta=r.mae_delta,
            delta_ci_low=r.mae_delta_ci_low,
            delta_ci_high=r.mae_delta_ci_high,
        )


class MulticlassView(TaskView):
    task = "multiclass"

    def __init__(self, metrics: ModelMetrics, section: MulticlassMetrics) -> None:
        super().__init__(metrics)
        self.mc = section

    def cells(self) -> SummaryCells:
        mc = self.mc
        return SummaryCells(
            task="multiclass",
            quality=f"accuracy {pct(mc.accuracy_baseline)} → {pct(mc.accuracy_mutated)}",
            change=f"Δaccuracy {points(mc.accuracy_delta)} "
            f"{interval(mc.accuracy_delta_ci_low, mc.accuracy_delta_ci_high, 'points')}",
            changed=f"argmax flips {pct(self.m.flip_rate)}",
            psi=decimal(self.m.psi, 3),
        )

    def line(self, *, ascii_only: bool = False) -> str:
        return multiclass_line(self.m, self.mc, ascii_only=ascii_only)

    def short(self) -> str:
        m, mc = self.m, self.mc
        return (
            f"flips {pct(m.flip_rate, 1)}, accuracy {pct(mc.accuracy_baseline, 1)} → {pct(mc.accuracy_mutated, 1)}, "
            f"macro-F1 {decimal(mc.macro_f1_baseline, 3)} → {decimal(mc.macro_f1_mutated, 3)}, "
            f"PSI {decimal(m.psi, 2)}, {self._failures()}"
        )

    def performance(self) -> MetricChange:
        c = self.mc
        return MetricChange(
            name="accuracy",
            before=c.accuracy_baseline,
            after=c.accuracy_mutated,
            delta=c.accuracy_delta,
            delta_ci_low=c.accuracy_delta_ci_low,
            delta_ci_high=c.accuracy_delta_ci_high,
        )


def task_view(metrics: ModelMetrics) -> TaskView:
    if metrics.task == "regression" and metrics.regression is not None:
        return RegressionView(metrics, metrics.regression)
    if metrics.task == "multiclass" and metrics.multiclass is not None:
        return MulticlassView(metrics, metrics.multiclass)
    return BinaryView(metrics)
