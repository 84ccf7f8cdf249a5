"""Baseline and counterfactual inference on one model, with per-row failure capture.

The pipeline is loaded once by the caller; baseline scores are cached per (artifact, eval data) hash; the
mutation is applied to a copy of one column; inference runs in chunks. A chunk that raises is narrowed down
by bisection — restricted to the rows the mutation changed, because the unchanged ones already scored — so a
bad row costs its own prediction, not the run. Changed rows whose new value is missing or non-finite form one
class: when the whole class fails and three sampled rows fail alone too, the class is counted as failed
without bisecting every row (bisection costs ~2 predict calls per failing row; `value_class_rows` records
how many rows were attributed this way).

What a row's score is depends on the task (task.py): P(class 1) for a binary classifier (1-D), the `predict_proba`
row for a multiclass one (2-D, columns in `classes_` order), the prediction for a regressor (1-D). Failure capture
is row-wise either way: a failed or non-finite row is NaN across its whole score.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tools import task_registry
from tools.errors import ServiceFailure
from tools.experiment.metrics_multiclass import finite_rows
from tools.experiment.task import TaskDecision
from tools.mutations import Mutation, apply_mutation, check_compatible
from tools.runtime.overlap import alongside

DEFAULT_CHUNK_ROWS = 250_000  # bounds peak memory to a small multiple of one chunk's transform; larger chunks pay
# less per-call overhead (a ColumnTransformer costs ~8 ms a call: 50 chunks of 20k rows doubled a cheap model's time)
# Upper bound on predict calls spent isolating failing rows; beyond it the remaining suspect rows are
# counted as failed together and the evidence says so.
ISOLATION_CALL_BUDGET = 4_000
_MAX_ERROR_SAMPLES = 5
# A model without classes_ that has predict_proba: binary, column 1 the positive class (the behaviour before tasks).
BINARY = TaskDecision("binary", "predict_proba without classes_: column 1 positive")


class BaselineFailure(ServiceFailure):
    """The unmutated data already fails: the model or its evaluation data is broken, not the change."""


@dataclass
class InferenceResult:
    scores: np.ndarray  # per the task (module docstring): (n,) or (n, k); NaN where failed
    failed: np.ndarray  # bool per row
    error_samples: list[str] = field(default_factory=list)
    predict_calls: int = 0
    unisolated_rows: int = 0
    value_class_rows: int = 0


@dataclass
class ExperimentOutcome:
    y_true: np.ndarray
    label_codes: tuple[np.ndarray, list[str]] | None  # a multiclass model's (TaskDecision.encoded_labels)
    baseline: np.ndarray
    mutated: InferenceResult
    rows_changed: int
    baseline_cached: bool
    seconds: dict[str, float]


class _Scorer:
    def __init__(self, pipeline: Any, columns: list[str], task: TaskDecision) -> None:
        self.pipeline = pipeline
        self.columns = columns
        self.task = task
        self.kind = task_registry.get(task.task)
        self.calls = 0

    def __call__(self, frame: pd.DataFrame) -> np.ndarray:
        self.calls += 1
        scores = self.kind.score(self.pipeline, frame[self.columns], self.task.width)
        expected = (len(frame), self.task.width) if self.kind.per_class else (len(frame),)
        if scores.shape != expected:
            raise ValueError(
                f"the model returned {self.kind.outputs} of shape {scores.shape} for {len(frame)} rows; "
                f"expected {expected}"
            )
        return scores


def score_frame(
    pipeline: Any,
    frame: pd.DataFrame,
    columns: list[str],
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    suspects: np.ndarray | None = None,
    missing: np.ndarray | None = None,
    task: TaskDecision = BINARY,
) -> InferenceResult:
    """Score every row; rows not in `suspects` are assumed to score (used only to narrow failures)."""
    n = len(frame)
    scores = np.full((n, task.width) if task_registry.get(task.task).per_class else n, np.nan)
    failed = np.zeros(n, dtype=bool)
    scorer = _Scorer(pipeline, columns, task)
    errors: list[str] = []
    unisolated = 0
    by_value_class = 0
    budget = [ISOLATION_CALL_BUDGET]

    def try_rows(rows: np.ndarray) -> Exception | None:
        budget[0] -= 1
        try:
            scores[rows] = scorer(frame.iloc[rows])
        except Exception as exc:  # per-row failure capture is the point: any model error counts
            return exc
        return None

    def isolate_missing(rows: np.ndarray) -> None:
        nonlocal by_value_class
        if len(rows) == 0 or try_rows(rows) is None:
            return
        probes = rows[np.linspace(0, len(rows) - 1, num=min(3, len(rows)), dtype=int)]
        probe_errors = [try_rows(probes[i : i + 1]) for i in range(len(probes))]
        if all(probe_errors):
            failed[rows] = True
            by_value_class += len(rows)
            if len(errors) < _MAX_ERROR_SAMPLES:
                errors.append(
                    f"{len(rows)} rows with a missing/non-finite mutated value: "
                    f"{type(probe_errors[0]).__name__}: {probe_errors[0]}"
                )
            return
        isolate(rows)

    def isolate(rows: np.ndarray) -> None:
        nonlocal unisolated
        if len(rows) == 0:
            return
        if budget[0] <= 0:
            failed[rows] = True
            unisolated += len(rows)
            return
        budget[0] -= 1
        try:
            scores[rows] = scorer(frame.iloc[rows])
        except Exception as exc:  # per-row failure capture is the point: any model error counts
            if len(rows) == 1:
                failed[rows] = True
                if len(errors) < _MAX_ERROR_SAMPLES:
                    errors.append(f"row {int(rows[0])}: {type(exc).__name__}: {exc}")
                return
            middle = len(rows) // 2
            isolate(rows[:middle])
            isolate(rows[middle:])

    for start in range(0, n, chunk_rows):
        stop = min(start + chunk_rows, n)
        if missing is not None and missing[start:stop].any():
            # Rows whose new value is missing are the likely failures: score the others in one call first
            # instead of spending a whole-chunk call that is bound to fail.
            rows = np.arange(start, stop)
            present = rows[~missing[start:stop]]
            if len(present) and try_rows(present) is not None:
                if suspects is not None:
                    isolate(present[~suspects[present]])
                    isolate(present[suspects[present]])
                else:
                    isolate(present)
            isolate_missing(rows[missing[start:stop]])
            continue
        try:
            scores[start:stop] = scorer(frame.iloc[start:stop])
        except Exception:  # narrowed down below
            rows = np.arange(start, stop)
            if suspects is not None:
                clean = rows[~suspects[start:stop]]
                rows = rows[suspects[start:stop]]
                if len(clean):
                    isolate(clean)
            if missing is not None:
                isolate_missing(rows[missing[rows]])
                rows = rows[~missing[rows]]
            isolate(rows)
    bad_output = ~(finite_rows(scores) if scores.ndim == 2 else np.isfinite(scores)) & ~failed
    if bad_output.any():
        failed |= bad_output
        if scores.ndim == 2:  # a row is one outcome: NaN across it, as a row that raised
            scores[bad_output] = np.nan
        if len(errors) < _MAX_ERROR_SAMPLES:
            what = task_registry.get(task.task).outputs
            errors.append(f"{int(bad_output.sum())} rows returned NaN or infinite {what}")
    return InferenceResult(
        scores=scores,
        failed=failed,
        error_samples=errors,
        predict_calls=scorer.calls,
        unisolated_rows=unisolated,
        value_class_rows=by_value_class,
    )


def changed_rows(before: pd.Series, after: pd.Series) -> np.ndarray:
    both_null = before.isna().to_numpy() & after.isna().to_numpy()
    same = (
        (before.to_numpy(dtype=object) == after.to_numpy(dtype=object))
        if before.dtype == object
        else (before.to_numpy() == after.to_numpy())
    )
    return ~(np.asarray(same, dtype=bool) | both_null)


class BaselineCache:
    """Baseline scores per (artifact sha256, eval data sha256), of either shape (1-D, or (n, k) for a multiclass
    model): the baseline never depends on the mutation, and the artifact's bytes fix its task."""

    def __init__(self) -> None:
        self._scores: dict[tuple[str, str], np.ndarray] = {}

    def get_or_compute(self, key: tuple[str, str], compute: Callable[[], np.ndarray]) -> tuple[np.ndarray, bool]:
        if key in self._scores:
            return self._scores[key], True
        scores = compute()
        scores.setflags(write=False)
        self._scores[key] = scores
        return scores, False


def run_experiment(
    *,
    pipeline: Any,
    frame: pd.DataFrame,
    columns: list[str],
    label_column: str,
    feature_column: str,
    mutation: Mutation,
    cache: BaselineCache,
    cache_key: tuple[str, str],
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    task: TaskDecision = BINARY,
    other_mutations: dict[str, Mutation] | None = None,
) -> ExperimentOutcome:
    """Baseline scores on `frame` as given, and scores with `mutation` applied to `feature_column` and each of
    `other_mutations` to its column (a change carried into several model inputs), all on a copy: the baseline,
    which is cached, never sees a mutated value."""
    timings: dict[str, float] = {}
    started = time.perf_counter()

    def baseline_scores() -> np.ndarray:
        result = score_frame(pipeline, frame, columns, chunk_rows=chunk_rows, task=task)
        if result.failed.any():
            raise BaselineFailure(
                f"the model fails on {int(result.failed.sum())} unmutated evaluation rows "
                f"({'; '.join(result.error_samples)}); fix the model or its evaluation data first"
            )
        return result.scores

    # The labels need only the frame: made while the baseline scores (a multiclass label column takes ~30 ms/1M).
    (baseline, cached), (y_true, label_codes) = alongside(
        lambda: cache.get_or_compute(cache_key, baseline_scores), lambda: task.encoded_labels(frame[label_column])
    )
    timings["baseline"] = time.perf_counter() - started

    started = time.perf_counter()
    changes = {feature_column: mutation, **(other_mutations or {})}
    mutated_columns: dict[str, pd.Series] = {}
    suspects = np.zeros(len(frame), dtype=bool)
    missing = np.zeros(len(frame), dtype=bool)
    for name, change in changes.items():
        original = frame[name]
        check_compatible(change, original)
        mutated_columns[name] = mutated_column = apply_mutation(original, change)
        suspects |= changed_rows(original, mutated_column)
        missing |= mutated_column.isna().to_numpy()
        if pd.api.types.is_numeric_dtype(mutated_column.dtype):
            missing |= ~np.isfinite(mutated_column.to_numpy(dtype=np.float64, na_value=np.nan))
    mutated_frame = frame.assign(**mutated_columns)  # a new frame; the input (and so the baseline) is untouched
    timings["mutate"] = time.perf_counter() - started

    started = time.perf_counter()
    mutated = score_frame(
        pipeline,
        mutated_frame,
        columns,
        chunk_rows=chunk_rows,
        suspects=suspects,
        missing=missing & suspects,
        task=task,
    )
    timings["mutated"] = time.perf_counter() - started
    return ExperimentOutcome(
        y_true=y_true,
        label_codes=label_codes,
        baseline=baseline,
        mutated=mutated,
        rows_changed=int(suspects.sum()),
        baseline_cached=cached,
        seconds=timings,
    )
