"""The view of a model's metrics that every renderer asks: report.md's summary table, the terminal, the chat's
steps, answer and tables, `provenance check`'s performance column. Each task's view lives in its module
(tools/tasks/), found through the task registry; `TaskMetricsView` shows a registered task's general section.

A model whose task section is missing (a multiclass model judged by a v1 policy measures no multiclass section)
is shown with the binary view's fields, which are then "n/a": never another task's numbers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from policies import ModelMetrics, PairedChange
from tools import task_registry
from tools.evidence.formats import decimal, pct, share_range, sig
from tools.evidence.task_text import SEGMENT_METRIC_NAMES, SummaryCells, interval
from tools.task_registry import Escape


class Cell(NamedTuple):
    """One cell of the chat's table: the value, and its confidence interval, which the chat shows under the table
    (an interval in every cell pushed a regressor's table past the chat's width)."""

    value: str
    interval: str | None = None


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
    task: str  # the task whose numbers the view shows (a section missing shows as the binary view's n/a)

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

    @abstractmethod
    def table_header(self) -> list[str]:
        """The columns of the chat's table of this task's models, "Failed rows" first: it is never out of view."""

    @abstractmethod
    def table_cells(self, escape: Escape) -> list[Cell]:
        """This model's cells of that table; `escape` shows text from the data (a class name) verbatim."""

    def _failures(self) -> str:
        return f"failures {pct(self.m.failure_rate, 1)}"


class TaskMetricsView(TaskView):
    """A registered task's general section (`TaskMetrics`): its share and each paired metric. Any task that
    measures only that section can show itself with this view."""

    def __init__(self, metrics: ModelMetrics) -> None:
        super().__init__(metrics)
        self.task = metrics.task
        self.t = metrics.other

    def _share(self, digits: int = 2) -> str:
        t = self.t
        if t is None:
            return f"{self.m.task} metrics n/a"
        name = SEGMENT_METRIC_NAMES.get(t.share_name, t.share_name)
        return f"{name} {pct(t.share, digits)} ({share_range(t.share_ci_low, t.share_ci_high)})"

    def _first(self) -> tuple[str, PairedChange] | None:
        return next(iter(self.t.paired.items()), None) if self.t is not None else None

    def cells(self) -> SummaryCells:
        first = self._first()
        name, change = first if first is not None else ("metric", None)
        before, after, delta, low, high = parts(change)
        return SummaryCells(
            task=self.m.task,
            quality=f"{name} {sig(before)} → {sig(after)}",
            change=f"Δ{name} {sig(delta, sign=True)} {interval(low, high, 'sig')}",
            changed=self._share(),
            psi=decimal(self.m.psi, 3),
        )

    def line(self, *, ascii_only: bool = False) -> str:
        arrow = "->" if ascii_only else "→"
        paired = [
            f"{name} {sig(c.baseline)} {arrow} {sig(c.mutated)} ({sig(c.delta, sign=True)} "
            f"{interval(c.ci_low, c.ci_high, 'sig')})"
            for name, c in (self.t.paired.items() if self.t is not None else ())
        ]
        return "; ".join([*paired, self._share(1)])

    def short(self) -> str:
        return f"{self.line()}, {self._failures()}"

    def performance(self) -> MetricChange | None:
        first = self._first()
        return None if first is None else MetricChange(name=first[0], change=first[1])

    def table_header(self) -> list[str]:
        names = list(self.t.paired) if self.t is not None else []
        share = SEGMENT_METRIC_NAMES.get(self.t.share_name, self.t.share_name) if self.t is not None else "share"
        return ["Failed rows", share.capitalize(), *(f"Δ{name}" for name in names)]

    def table_cells(self, escape: Escape) -> list[Cell]:
        t = self.t
        if t is None:
            return [Cell(pct(self.m.failure_rate, 1)), Cell(f"{self.m.task} metrics n/a")]
        paired = [Cell(sig(c.delta, sign=True), sig_range(c.ci_low, c.ci_high)) for c in t.paired.values()]
        share = Cell(pct(t.share, 1), share_range(t.share_ci_low, t.share_ci_high))
        return [Cell(pct(self.m.failure_rate, 1)), share, *paired]


def sig_range(low: float | None, high: float | None) -> str:
    """An interval of quantities on the model's own scale, as `share_range` writes shares: "+1.2 to +3.4"."""
    return f"{sig(low, sign=True)} to {sig(high, sign=True)}"


def task_view(metrics: ModelMetrics) -> TaskView:
    """The view of the metrics' task (tools/tasks/); a task this installation has not registered (evidence from
    elsewhere) is shown from its general section."""
    if metrics.task not in task_registry.names():
        return TaskMetricsView(metrics)
    view: TaskView = task_registry.get(metrics.task).view(metrics)
    return view
