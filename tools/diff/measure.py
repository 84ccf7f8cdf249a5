"""One production model scored on both sides of a pull request: its verified pipeline reads its input columns from
the base and the head relation (the same rows, paired by key), and the paired metrics, the rows gone, and a data diff
of each input column are judged by the same policy as `assess`. What cannot be measured is INCOMPLETE saying why."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from policies import (
    BinaryMetrics,
    Decision,
    ModelMetrics,
    Policy,
    Reason,
    Verdict,
    evaluate,
    rows_gone_reason,
    structural_reason,
    unlabelled_decision,
)
from tools.catalog.discovery import AffectedModel
from tools.diff.columns import column_diff
from tools.diff.rows import PairedRows, paired_rows, relation_sql
from tools.diff.schema import ModelDiff, Sides
from tools.diff.warehouse import DiffWarehouse
from tools.evidence.plots import slugify, write_plots
from tools.experiment.binding import BindingError
from tools.experiment.loading import expected_columns, load_verified_pipeline
from tools.experiment.locate import resolve_binding
from tools.experiment.measure import DEFAULT_TOLERANCE_FRACTION
from tools.experiment.runner import score_frame
from tools.experiment.task import TaskDecision, check_labels, decide_task
from tools.experiment.task_metrics import compute_task_metrics


@dataclass(frozen=True)
class DiffJob:
    model: AffectedModel
    reads: str  # the dataset URN whose relations the model is scored on
    sides: Sides
    policy: Policy
    base_dir: Path  # where relative binding URIs resolve: the catalog file's folder, as for assess
    run_dir: Path
    limit: int
    seed: int
    columns: dict[str, str] = field(default_factory=dict)  # model input -> relation column, where they differ

    def column(self, name: str) -> str:
        return self.columns.get(name, name)


def measure_in_job(job: DiffJob, warehouse_url: str) -> tuple[ModelDiff, dict[str, int] | None]:
    """`measure_model` as an experiment job (a thread or a worker process: tools/runtime/executor.py), on its own
    read-only warehouse connection; the rows' counts and size instead of the rows, which stay in the job."""
    warehouse = DiffWarehouse(warehouse_url)
    try:
        result, rows = measure_model(job, warehouse)
    finally:
        warehouse.close()
    if rows is None:
        return result, None
    c = rows.counts
    counts = {
        "base_rows": c.base_rows, "head_rows": c.head_rows, "both": c.both, "only_base": c.only_base,
        "only_head": c.only_head, "sampled": len(rows.frame),
        "sample_bytes": int(rows.frame.memory_usage(deep=True).sum()),
    }  # fmt: skip
    return result, counts


def _incomplete(job: DiffJob, code: str, message: str, **known: object) -> ModelDiff:
    reason = Reason(code=code, severity=Verdict.INCOMPLETE, message=message)
    return ModelDiff(
        urn=job.model.urn, name=job.model.name, verdict=Verdict.INCOMPLETE, reasons=[reason], reads=job.reads,
        **known,  # type: ignore[arg-type]
    )  # fmt: skip


def measure_model(job: DiffJob, warehouse: DiffWarehouse) -> tuple[ModelDiff, PairedRows | None]:
    """The model's diff, and the rows it was scored on (None when it was not)."""
    try:
        binding = resolve_binding(job.model.custom_properties, job.base_dir)
        pipeline = load_verified_pipeline(binding)
        task = decide_task(pipeline, binding.task)
    except BindingError as exc:
        return _incomplete(job, exc.code, str(exc)), None
    inputs = expected_columns(pipeline)
    if inputs is None:
        why = "its pipeline records no input column names (feature_names_in_); fit it on a pandas DataFrame"
        return _incomplete(job, "inputs_unknown", f"which columns the model reads is unknown: {why}"), None
    base_columns = set(warehouse.columns(relation_sql(job.sides.base)))
    head_columns = set(warehouse.columns(relation_sql(job.sides.head)))
    absent = [job.column(c) for c in inputs if job.column(c) not in base_columns]
    if absent:
        return _incomplete(
            job, "inputs_not_in_relation",
            f"the model reads {', '.join(absent)}, which the base relation {job.sides.base} does not have: it is "
            "not the relation this model is scored on; bind the model to its features' dataset",
            task=task.task,
        ), None  # fmt: skip
    dropped = [job.column(c) for c in inputs if job.column(c) not in head_columns]
    if dropped:
        reasons = [structural_reason("dropped", c, job.policy) for c in dropped]
        decision = Decision.from_reasons(reasons)
        return ModelDiff(
            urn=job.model.urn, name=job.model.name, verdict=decision.verdict, reasons=list(decision.reasons),
            reads=job.reads, task=task.task,
        ), None  # fmt: skip
    label = binding.label_column
    labelled = label in base_columns
    if not labelled and task.task not in UNLABELLED_TASKS:
        return _incomplete(
            job, "label_not_in_relation",
            f"the relation {job.sides.base} has no label column {label!r}: a {task.task} model's change is measured "
            "against its labels (a moved prediction alone says nothing of its error); add the label to the relation "
            "or assess the change instead",
            task=task.task,
        ), None  # fmt: skip
    read = [job.column(c) for c in inputs]
    rows = paired_rows(
        warehouse, job.sides.base, job.sides.head, job.sides.key, [*read, *([label] if labelled else [])],
        limit=job.limit, seed=job.seed,
    )  # fmt: skip
    if rows.frame.empty:
        return _incomplete(job, "no_rows_in_common", "no row of the base relation is in the head relation"), rows
    as_inputs = dict(zip(read, inputs, strict=True))
    base = rows.side("base", read).rename(columns=as_inputs)
    head = rows.side("head", read).rename(columns=as_inputs)
    if labelled:
        labels = rows.frame[f"base.{label}"].reset_index(drop=True)
        try:
            check_labels(task, labels, label, job.sides.base)
        except BindingError as exc:
            return _incomplete(job, exc.code, str(exc), task=task.task), rows
        y_true = task.label_array(labels)
    else:
        y_true = _no_labels(task, len(base))
    before = score_frame(pipeline, base, inputs, task=task)
    after = score_frame(pipeline, head, inputs, task=task)
    failed = before.failed | after.failed
    metrics = compute_task_metrics(
        task.task, y_true, before.scores, after.scores, failed, threshold=binding.decision_threshold,
        classes=task.class_list, segments_frame=base if labelled else None,
        segment_bands=job.policy.segment_bands(task.task),
        tolerance_fraction=job.policy.regression_tolerance_fraction() or DEFAULT_TOLERANCE_FRACTION,
        segment_rule=job.policy.segments,
    )  # fmt: skip
    counts = rows.counts
    if labelled:
        judged = evaluate(metrics, job.policy)
    else:
        metrics = _without_label_metrics(metrics)
        judged = unlabelled_decision(metrics, job.policy, label)
    gone = rows_gone_reason(counts.only_base, counts.base_rows, task.task, job.policy)
    decision = Decision.from_reasons([*judged.reasons, gone])
    tolerance = metrics.regression.tolerance if metrics.regression is not None else None
    plots = write_plots(
        job.run_dir, slugify(job.model.name), y_true, before.scores, after.scores, failed, task=task.task,
        classes=task.class_list, tolerance=tolerance,
    )  # fmt: skip
    return ModelDiff(
        urn=job.model.urn, name=job.model.name, verdict=decision.verdict, reasons=list(decision.reasons),
        reads=job.reads, task=task.task, metrics=metrics, rows_gone=counts.only_base, rows_new=counts.only_head,
        columns=[column_diff(c, base[c], head[c]) for c in inputs], plots=plots,
    ), rows  # fmt: skip


UNLABELLED_TASKS = ("binary", "multiclass")  # a flip needs no label; a regressor's moved share alone is not judged


def _no_labels(task: TaskDecision, n: int) -> np.ndarray:
    """A stand-in `y_true` of the right type, so the label-free numbers (flips, shifts, PSI) can be computed; every
    number that reads it is dropped by `_without_label_metrics` before anything judges or shows it."""
    if task.task == "multiclass" and task.classes:
        return np.full(n, task.classes[0], dtype=object)
    return np.zeros(n, dtype=np.int8)


def _without_label_metrics(metrics: ModelMetrics) -> ModelMetrics:
    if metrics.task == "binary":
        return metrics.model_copy(update={"binary": BinaryMetrics(positives=0, negatives=0, auc=None)})
    return metrics.model_copy(update={"multiclass": None})
