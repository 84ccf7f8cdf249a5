"""What an ML task means, looked up by name: one `MLTask` per task, each in its own module of tools/tasks/
(binary, multiclass, regression), registered here. A fourth task is one module that subclasses `MLTask` and calls
`register`, plus its registration: its module named in `BUILT_IN` (ours) or in PROVENANCE_TASKS (a user's, or a
test's: the experiment's worker processes read the same setting, so they load it too).

This module sits below the experiment and the evidence (they look a task up here); the task modules sit above
them (they are built from the experiment's metrics and the evidence's views and plots), so the task modules are
loaded by name on the first lookup, as plugins are, never imported by the layers that use them.
"""

from __future__ import annotations

import importlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from policies import ModelMetrics, SegmentMetric
from tools.errors import BadRequest

if TYPE_CHECKING:  # the CLI's first checks validate a task name without loading numpy
    import numpy as np
    import pandas as pd

BUILT_IN = ("tools.tasks.binary", "tools.tasks.multiclass", "tools.tasks.regression")


@dataclass(frozen=True)
class MeasureOptions:
    """What the metrics of any task may need beside the arrays (each task reads the part it uses)."""

    threshold: float = 0.5  # a binary flip: crossing it
    confidence: float = 0.95
    classes: Sequence[object] | None = None  # a multiclass model's probability columns
    tolerance_fraction: float = 0.1  # a prediction "moved" beyond this x std of the baseline predictions
    seed: int = 0
    encoded: tuple[np.ndarray, list[str]] | None = None  # a multiclass model's label codes, if already made


class MLTask(ABC):
    """One ML task: how its model scores a row, what is measured, how it is shown. Subclasses set the class
    attributes and implement the abstract methods; the rest has defaults a regressor-like task can keep."""

    name: ClassVar[str]
    outputs: ClassVar[str] = "predictions"  # what `score` returns, in error messages
    per_class: ClassVar[bool] = False  # True: a row's output is k columns (one per class), else one number
    segment_metric: ClassVar[SegmentMetric] = "moved_share"  # the per-row event segments are tested on
    plot_files: ClassVar[dict[str, str]]  # plot name -> file suffix (ModelEvidence.plots' keys)

    @abstractmethod
    def score(self, pipeline: Any, features: pd.DataFrame, width: int) -> np.ndarray:
        """The model's outputs for the rows: shape (n,), or (n, width) when `per_class`."""

    @abstractmethod
    def measure(
        self, y_true: np.ndarray, baseline: np.ndarray, mutated: np.ndarray, failed: np.ndarray, options: MeasureOptions
    ) -> tuple[ModelMetrics, np.ndarray, np.ndarray]:
        """The metrics, and per row whether it counted (scored on both sides) and whether its event happened."""

    @abstractmethod
    def view(self, metrics: ModelMetrics) -> Any:
        """The renderers' view of the metrics: a tools.evidence.task_views.TaskView."""

    @abstractmethod
    def figures(self, slug: str, data: Any) -> dict[str, Any]:
        """The plots (matplotlib figures keyed as `plot_files`) of a tools.evidence.plots.PlotInput."""

    def plot_labels(self, y_true: np.ndarray) -> np.ndarray:
        """The labels as the plots read them (a regressor's as numbers)."""
        import numpy as np

        try:
            return np.asarray(y_true).astype(np.float64)
        except (TypeError, ValueError) as exc:
            dtype = np.asarray(y_true).dtype
            raise ValueError(f"{self.name} plots need numeric actual values; y_true has dtype {dtype}") from exc

    def label_summary(self, labels: pd.Series, classes: tuple[str, ...] | None) -> str:
        """The label column in a few words, for `bind`'s report (`classes`: the model's, when it has them)."""
        return f"a {self.name} target from {labels.min():g} to {labels.max():g}"

    # A registered task is chosen by the binding key provenance.task; the three below decide it for the pipeline.
    def unfit(self, pipeline: Any) -> str | None:
        """Why the pipeline cannot be measured as this task; None when it can."""
        return None if callable(getattr(pipeline, "predict", None)) else "the pipeline has no predict"

    def label_array(self, labels: pd.Series) -> np.ndarray:
        """`y_true` for `measure`, from labels `label_problem` accepted."""
        import numpy as np

        return labels.to_numpy().astype(np.float64)

    def label_problem(self, labels: pd.Series) -> str | None:
        """Why the label column cannot be this task's target; None when it can."""
        import numpy as np

        values = labels.to_numpy()
        if values.dtype.kind not in "iuf" or not np.isfinite(values.astype(np.float64)).all():
            return f"must hold finite numbers for a {self.name} model"
        return None


class UnknownTask(BadRequest, ValueError):
    """A task name no module registered."""


_TASKS: dict[str, MLTask] = {}
_LOCK = threading.Lock()
_loaded = False


def register(task: MLTask) -> MLTask:
    """Make `task` known by its name (a module's registration line). Registering a name twice is refused, unless
    it is the same class (a module imported again)."""
    known = _TASKS.get(task.name)
    if known is not None and type(known).__qualname__ != type(task).__qualname__:
        raise ValueError(f"task {task.name!r} is already registered by {type(known).__module__}")
    _TASKS[task.name] = task
    return task


def _load() -> None:
    global _loaded
    if _loaded:
        return
    with _LOCK:
        if _loaded:
            return
        from tools.settings import load_settings

        for module in (*BUILT_IN, *load_settings().task_modules):
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise BadRequest(
                    f"PROVENANCE_TASKS names {module!r}, which cannot be imported ({exc}); fix the module path "
                    "or remove it from PROVENANCE_TASKS"
                ) from exc
        _loaded = True


def names() -> tuple[str, ...]:
    """Every registered task's name, the built-ins first (in BUILT_IN's order), then the others as registered: a
    task module imported before the first lookup registers before the built-ins are loaded."""
    _load()
    rank = {module: i for i, module in enumerate(BUILT_IN)}
    return tuple(sorted(_TASKS, key=lambda name: rank.get(type(_TASKS[name]).__module__, len(BUILT_IN))))


def get(name: str) -> MLTask:
    _load()
    task = _TASKS.get(name)
    if task is None:
        raise UnknownTask(
            f"unknown task {name!r}: no ML task is registered by that name (registered: {', '.join(names())}); "
            "add its module to PROVENANCE_TASKS or bind the model as one of these"
        )
    return task


Escape = Callable[[str], str]  # how a renderer shows text that comes from the data (class names) verbatim
