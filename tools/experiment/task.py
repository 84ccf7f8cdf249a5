"""Which task a model performs (binary, multiclass, regression), decided from its verified pipeline, overridable by
the binding key `provenance.task`, and checked against the evaluation data's label.

Detection: a scikit-learn regressor (its estimator tags say so: `GradientBoostingRegressor`, `XGBRegressor`,
`LGBMRegressor`…, also at the end of a `Pipeline`), or a model with `predict` but no `predict_proba`, is a
regression; a model with `predict_proba` is a classifier, binary with two `classes_`, multiclass with more (without
`classes_` it is read as binary, column 1 the positive class, as before this module existed). The binding key can
only confirm what the pipeline can do: `provenance.task=binary` on a pipeline without `predict_proba`, or
`regression` on a classifier, makes the model INCOMPLETE (`task_mismatch`) instead of measuring something else.

Labels are compared with the classes by value: integral numbers by their integer text (so a CSV's `1.0` is class
`1`), everything else by `str`. The task's `label_array` is the `y_true` `compute_task_metrics` expects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from policies import BUILT_IN_TASKS, Task, TaskName
from tools import task_registry
from tools.experiment.binding import TASK, BindingError
from tools.experiment.sampling import METHOD

_REGRESSION_STRATA = 10  # a regression's sample is stratified by label decile

_SHOWN_VALUES = 5  # unknown label values named in an error; the rest are counted


@dataclass(frozen=True)
class TaskDecision:
    """The task a model is measured as, why, and (for classifiers that record them) its classes."""

    task: TaskName  # a built-in Task, or a registered task chosen by the binding key
    basis: str  # e.g. "detected from XGBRegressor (a scikit-learn regressor)" or "binding key provenance.task"
    classes: tuple[str, ...] | None = None  # label keys, in predict_proba's column order; None: regression, or
    #                                         a binary model without classes_ (labels must then be 0/1)
    raw_classes: tuple[Any, ...] | None = None  # classes_ as the model holds them, for the numeric fast path

    @property
    def width(self) -> int:
        """Columns of one row's output: 1 for binary (P(class 1)) and regression, k for multiclass."""
        return len(self.classes) if self.task == "multiclass" and self.classes else 1

    @property
    def class_list(self) -> list[str] | None:
        """The classes a multiclass model's probability columns stand for; None for the other tasks."""
        return list(self.classes) if self.task == "multiclass" and self.classes else None

    def label_codes(self, labels: pd.Series) -> tuple[np.ndarray, list[str]]:
        """A multiclass model's labels as indices into its classes followed by any other label seen: exactly
        `encode_labels(self.label_array(labels), self.class_list)` (the second half of `encoded_labels`)."""
        if self.task != "multiclass" or self.classes is None:
            raise ValueError(f"label codes are for a multiclass model with classes, not a {self.task} one")
        codes = self.encoded_labels(labels)[1]
        assert codes is not None  # a multiclass model with classes always gets them
        return codes

    def encoded_labels(self, labels: pd.Series) -> tuple[np.ndarray, tuple[np.ndarray, list[str]] | None]:
        """`label_array`, and for a multiclass model with classes its `label_codes`, from one factorization of
        the column (the metrics want both; the experiment makes them while the baseline scores)."""
        if self.task != "multiclass" or self.classes is None:
            return self.label_array(labels), None
        from tools.experiment.metrics_multiclass import encode_labels

        codes, keys = _distinct_keys(labels)
        per_unique, names = encode_labels(keys, self.classes)  # per distinct value, not per row
        return keys[codes], (per_unique[codes], names)

    def label_array(self, labels: pd.Series) -> np.ndarray:
        """`y_true` for the metrics: 0/1 int8 (binary), label keys (multiclass), float64 (regression).
        Call `check_labels` first: this assumes the labels passed it."""
        if self.task == "multiclass":
            codes, keys = _distinct_keys(labels)
            keyed: np.ndarray = keys[codes]
            return keyed
        values = labels.to_numpy()
        if self.task == "regression":
            return values.astype(np.float64)
        if self.task not in BUILT_IN_TASKS:
            return task_registry.get(self.task).label_array(labels)
        numeric = _numeric_classes(self.raw_classes)
        if self.classes is None or (numeric is not None and _is_numeric(values)):
            positive = 1 if numeric is None else numeric[1]
            return np.asarray(values == positive).astype(np.int8)
        return np.asarray(label_keys(values) == self.classes[1]).astype(np.int8)


def _distinct_keys(labels: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each row's index into the column's distinct values, and those values' label keys. Keys of the distinct
    values, then one take: an Arrow string column is dictionary-encoded in place instead of being copied into a
    million Python strings first (the keys are label_keys(values) row for row)."""
    codes, uniques = pd.factorize(labels, use_na_sentinel=False)
    return codes, label_keys(np.asarray(uniques))


def final_estimator(pipeline: Any) -> Any:
    """The last step of a (possibly nested) scikit-learn Pipeline; the object itself otherwise."""
    step = pipeline
    while isinstance(getattr(step, "steps", None), list) and step.steps:
        step = step.steps[-1][1]
    return step


def _estimator_type(estimator: Any) -> str | None:
    """The scikit-learn tag "classifier" / "regressor" of an estimator that declares tags; None otherwise (a plain
    object with predict methods declares nothing, and asking scikit-learn about it raises)."""
    if not hasattr(estimator, "__sklearn_tags__"):
        return None
    from sklearn.utils import get_tags

    kind = get_tags(estimator).estimator_type
    return kind if kind in ("classifier", "regressor") else None


def _classes(pipeline: Any) -> tuple[Any, ...] | None:
    classes = getattr(pipeline, "classes_", None)
    if classes is None:
        classes = getattr(final_estimator(pipeline), "classes_", None)
    return None if classes is None else tuple(np.asarray(classes).tolist())


def decide_task(pipeline: Any, override: TaskName | None = None) -> TaskDecision:
    """The pipeline's task (see the module docstring); a binding override it cannot serve raises BindingError
    `task_mismatch`, a model that predicts nothing raises `not_a_pipeline`. A registered task (tools/tasks/) is
    only ever chosen by the binding key, and its module says whether the pipeline can serve it."""
    name = type(final_estimator(pipeline)).__name__
    if override is not None and override not in BUILT_IN_TASKS:
        unfit = task_registry.get(override).unfit(pipeline)
        if unfit is not None:
            raise BindingError(
                "task_mismatch", f"{TASK}={override} but {unfit}; fix the binding key or bind the right artifact"
            )
        return TaskDecision(override, f"binding key {TASK}={override} ({name}, a registered task)")
    kind = _estimator_type(final_estimator(pipeline))
    has_proba = callable(getattr(pipeline, "predict_proba", None))
    has_predict = callable(getattr(pipeline, "predict", None))
    raw = _classes(pipeline)
    keys = None if raw is None else tuple(label_keys(np.asarray(raw, dtype=object)).tolist())
    if raw is not None and len(set(keys or ())) != len(raw):
        raise BindingError("not_a_pipeline", f"{name}'s classes_ {list(raw)} are not distinct as labels")
    if kind == "regressor" or (kind is None and has_predict and not has_proba):
        what = "a scikit-learn regressor" if kind == "regressor" else "predict without predict_proba"
        detected: TaskDecision | None = TaskDecision("regression", f"detected from {name} ({what})")
    elif has_proba and raw is None:
        detected = TaskDecision("binary", f"detected from {name} (predict_proba without classes_: column 1 positive)")
    elif has_proba and raw is not None and len(raw) >= 2:
        task: Task = "binary" if len(raw) == 2 else "multiclass"
        detected = TaskDecision(task, f"detected from {name} ({len(raw)} classes)", keys, raw)
    elif has_proba:
        raise BindingError("not_a_pipeline", f"{name} was fitted on fewer than two classes ({list(raw or [])})")
    elif not has_predict:
        raise BindingError("not_a_pipeline", f"{name} has neither predict_proba nor predict; it cannot be measured")
    else:
        detected = None  # a classifier by its tags that cannot give probabilities
    if override is None:
        if detected is None:
            raise BindingError(
                "task_mismatch",
                f"{name} is a classifier without predict_proba: flips and probability shifts cannot be measured; "
                "persist a classifier that has predict_proba",
            )
        return detected
    _check_override(override, name, kind, has_proba, has_predict, raw)
    agrees = "agrees with" if detected is not None and detected.task == override else "overrides"
    what = detected.basis if detected is not None else f"{name}"
    basis = f"binding key {TASK}={override} ({agrees} {what})"
    if override == "regression":
        return TaskDecision("regression", basis)
    return TaskDecision(override, basis, keys, raw)


def _check_override(
    override: TaskName, name: str, kind: str | None, has_proba: bool, has_predict: bool, raw: tuple[Any, ...] | None
) -> None:
    def mismatch(why: str) -> BindingError:
        return BindingError(
            "task_mismatch", f"{TASK}={override} but {why}; fix the binding key or bind the right artifact"
        )

    if override == "regression":
        if kind == "classifier":
            raise mismatch(f"the pipeline ends in the classifier {name}")
        if not has_predict:
            raise mismatch("the pipeline has no predict")
        return
    if not has_proba:
        raise mismatch("the pipeline has no predict_proba")
    if kind == "regressor":
        raise mismatch(f"the pipeline ends in the regressor {name}")
    if override == "binary" and raw is not None and len(raw) != 2:
        raise mismatch(f"{name} has {len(raw)} classes ({_listed(raw)})")
    if override == "multiclass" and (raw is None or len(raw) < 3):
        have = "no classes_" if raw is None else f"{len(raw)} classes ({_listed(raw)})"
        raise mismatch(f"{name} has {have}; a multiclass model needs classes_ with at least three classes")


def check_labels(decision: TaskDecision, labels: pd.Series, column: str, where: object) -> None:
    """Raise BindingError `bad_eval_data` when the label column cannot be the task's target (see the module)."""
    values = labels.to_numpy()
    if labels.isna().any():
        raise BindingError("bad_eval_data", f"label column {column!r} in {where} has missing values; drop those rows")
    if decision.task not in BUILT_IN_TASKS:
        problem = task_registry.get(decision.task).label_problem(labels)
        if problem is not None:
            raise BindingError("bad_eval_data", f"label column {column!r} in {where} {problem} ({decision.basis})")
        return
    if decision.task == "regression":
        if not _is_numeric(values) or values.dtype.kind == "b" or not np.isfinite(values.astype(np.float64)).all():
            raise BindingError(
                "bad_eval_data",
                f"label column {column!r} in {where} must hold finite numbers for a regression "
                f"({decision.basis}); it holds {labels.dtype} values",
            )
        return
    if decision.task == "binary" and decision.classes is None:
        if not (_is_numeric(values) and set(np.unique(values).tolist()) <= {0, 1}):
            raise BindingError("bad_eval_data", f"label column {column!r} must hold only 0/1 values")
        return
    assert decision.classes is not None  # a multiclass decision always has classes
    numeric = _numeric_classes(decision.raw_classes)
    if numeric is not None and _is_numeric(values):  # the common case, without turning every label into text
        unknown = np.unique(values[~np.isin(values, numeric)])
        unknown_keys = label_keys(unknown)
    else:
        keys = label_keys(values)
        unknown_keys = np.unique(keys[~np.isin(keys, np.asarray(decision.classes, dtype=object))])
    if len(unknown_keys):
        shown = ", ".join(map(str, unknown_keys[:_SHOWN_VALUES].tolist()))
        more = f" and {len(unknown_keys) - _SHOWN_VALUES} more" if len(unknown_keys) > _SHOWN_VALUES else ""
        raise BindingError(
            "bad_eval_data",
            f"label column {column!r} in {where} holds value(s) the model never predicts: {shown}{more}; the "
            f"{decision.task} model's classes are {_listed(decision.classes)} (a model cannot be scored on labels "
            "it was not trained on: bind evaluation data labelled with its classes)",
        )


def label_keys(values: np.ndarray | Sequence[Any]) -> np.ndarray:
    """Each label as the text it is compared by: integral numbers as integers ("1", never "1.0"), else `str`."""
    array = np.asarray(values)
    if array.dtype.kind in "biu":
        return array.astype(np.int64).astype(str).astype(object)
    if array.dtype.kind == "f":
        integral = np.isfinite(array) & (np.floor(array) == array)
        out = array.astype(str).astype(object)
        out[integral] = array[integral].astype(np.int64).astype(str)
        return out
    # One _key call per distinct value, not per row: a 1M-row label column has a handful of classes.
    codes, uniques = pd.factorize(array, use_na_sentinel=False)
    keys = np.array([_key(v) for v in uniques.tolist()], dtype=object)
    return keys[codes]


def _key(value: Any) -> str:
    if isinstance(value, bool | np.bool_):
        return str(int(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating) and np.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _is_numeric(values: np.ndarray) -> bool:
    return values.dtype.kind in "biuf"


def _numeric_classes(raw: tuple[Any, ...] | None) -> np.ndarray | None:
    """classes_ as a numeric array when every class is a (non-bool) number; None otherwise."""
    if raw is None or not all(isinstance(c, int | float | np.integer | np.floating) for c in raw):
        return None
    return np.asarray(raw, dtype=np.float64)


def _listed(classes: Sequence[Any]) -> str:
    return ", ".join(map(str, classes))


def label_strata(labels: pd.Series, task: TaskDecision | None) -> tuple[np.ndarray, list[str], str]:
    """What a large evaluation file's sample is stratified by: an integer stratum per row, each stratum's name (the
    sampling record's class counts are keyed by it) and the method's description. Binary: the 0/1 label, as before
    tasks existed; multiclass: the class; regression: the label's decile."""
    if task is None or (task.task == "binary" and task.classes is None):
        return labels.to_numpy().astype(np.int8), ["0", "1"], METHOD
    if task.task == "binary":
        assert task.classes is not None
        return task.label_array(labels), list(task.classes), METHOD
    if task.task == "multiclass":
        names, codes = np.unique(label_keys(labels.to_numpy()), return_inverse=True)
        return codes.astype(np.int64), [str(n) for n in names], METHOD
    values = labels.to_numpy(dtype=np.float64)
    edges = np.unique(np.quantile(values, np.linspace(0.0, 1.0, _REGRESSION_STRATA + 1)[1:-1]))
    bounds = [-np.inf, *edges.tolist(), np.inf]
    bins = [f"[{lo:.4g}, {hi:.4g})" for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    method = METHOD.replace("stratified by label", f"stratified by label decile ({_REGRESSION_STRATA} quantile bins)")
    return np.searchsorted(edges, values, side="right").astype(np.int64), bins, method
