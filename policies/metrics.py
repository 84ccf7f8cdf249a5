"""The measured numbers the policy judges, one value per model. Defined here, with the engine that reads them, so
`policies` depends on nothing of ours; `tools/experiment/task_metrics.py` computes and returns them.

Every metric measured before and after the change on the same rows is one `PairedChange` (baseline, mutated,
delta = mutated - baseline and the delta's confidence interval). ``ModelMetrics`` holds what every task has (rows,
failures, flips, score shift) and one section per task:

- binary: ``binary`` (positives, negatives, the paired ROC AUC); flips are threshold crossings;
- multiclass: ``multiclass`` (paired accuracy and macro-F1, per-class flips and PSI); flips are argmax flips,
  prob_shift_* summarise the per-row max-over-classes |p_mutated - p_baseline|, psi is the max per-class PSI;
- regression: ``regression`` (paired MAE and RMSE, the moved share); flips = 0, flip_rate and prob_shift_* None,
  psi = PSI of the predictions.

Evidence written before the sections existed has the same numbers as flat fields (``auc_delta``,
``mae_delta_ci_low``…); `legacy_flat` reads it into the sections, so old runs stay readable.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Task = Literal["binary", "multiclass", "regression"]  # the built-in tasks; a registered one is any other name
TaskName = str  # a task's registered name (tools/task_registry.py): a built-in Task or a registered one
BUILT_IN_TASKS: tuple[Task, ...] = ("binary", "multiclass", "regression")
SegmentMetric = Literal["flip_rate", "moved_share"]
Exceeds = Literal["none", "warning", "block"]


class Frozen(BaseModel):
    """Every model of policies/: immutable, unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class PairedChange(Frozen):
    """One metric scored on the same rows before and after the change: delta = mutated - baseline, with the
    delta's confidence interval (paired: both sides are the same rows, so the interval is the difference's)."""

    baseline: float
    mutated: float
    delta: float
    ci_low: float
    ci_high: float
    relative: float | None = None  # delta / baseline where the policy judges a relative change; None when baseline 0
    p_value: float | None = None  # where the test gives one (DeLong for AUC)


_PAIRED_SUFFIXES = {
    "baseline": "_baseline",
    "mutated": "_mutated",
    "delta": "_delta",
    "ci_low": "_delta_ci_low",
    "ci_high": "_delta_ci_high",
    "relative": "_delta_relative",
    "p_value": "_p_value",
}


def legacy_flat(data: Any, prefixes: tuple[str, ...]) -> Any:
    """Evidence written before `PairedChange`: flat `<metric>_baseline`, `<metric>_delta_ci_low`… keys become one
    nested `<metric>` (None when its numbers were None: AUC on too few positives). Anything else is returned as is."""
    if not isinstance(data, dict) or not any(f"{p}_baseline" in data for p in prefixes):
        return data
    data = dict(data)
    for prefix in prefixes:
        values = {k: data.pop(prefix + suffix) for k, suffix in _PAIRED_SUFFIXES.items() if prefix + suffix in data}
        if values:
            data[prefix] = None if values.get("baseline") is None else values
    return data


class RegressionMetrics(Frozen):
    """Paired error changes of a regressor on the scored rows; every delta is mutated - baseline (positive = worse)."""

    mae: PairedChange  # relative = delta / baseline MAE (None when the baseline MAE is 0)
    rmse: PairedChange
    tolerance: float  # absolute: a prediction "moved" when |mutated - baseline| > tolerance
    tolerance_basis: str  # how the tolerance was derived, e.g. "0.1 x baseline prediction std"
    moved: int
    moved_share: float
    moved_share_ci_low: float  # Wilson
    moved_share_ci_high: float
    prediction_psi: float
    baseline_prediction_std: float

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any) -> Any:
        return legacy_flat(data, ("mae", "rmse"))


class MulticlassMetrics(Frozen):
    """Paired accuracy / macro-F1 changes of a multiclass classifier on the scored rows (mutated - baseline)."""

    classes: list[str]
    accuracy: PairedChange  # a negative delta is a drop
    macro_f1: PairedChange
    # Share of the rows whose baseline argmax is that class and whose argmax changed (0.0 for a class never
    # predicted by the baseline).
    per_class_flip_rate: dict[str, float]
    per_class_psi: dict[str, float]  # PSI of each class's probability, mutated vs baseline

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any) -> Any:
        return legacy_flat(data, ("accuracy", "macro_f1"))


class SegmentFinding(Frozen):
    """One segment of the evaluation rows (a category, or a quantile bin of a numeric column)."""

    column: str
    segment: str  # e.g. "region=north" or "amount in [10, 50)"
    n: int  # scored rows in the segment
    share: float  # n / scored rows overall
    metric: SegmentMetric
    value: float
    ci_low: float  # Wilson
    ci_high: float
    overall_value: float
    p_value: float  # one-sided exact binomial, H0: rate <= the policy's warning band
    p_adjusted: float  # Benjamini-Hochberg across every segment tested
    # Which policy band the segment's rate is credibly above after BH: "warning" when the BH-adjusted p of
    # H0 rate <= warning band is < fdr, "block" when the BH-adjusted p of H0 rate <= block band is < fdr.
    exceeds: Exceeds
    events: int = 0  # rows of the segment that flipped (moved): value = events / n
    p_value_block: float | None = None  # the same test against the block band
    p_adjusted_block: float | None = None  # BH across every segment tested, block-band family


class SegmentSummary(Frozen):
    columns_examined: list[str]
    columns_skipped: dict[str, str]  # column -> why it was not segmented
    segments_tested: int
    min_share: float
    method: str
    worst: SegmentFinding | None
    findings: list[SegmentFinding] = Field(default_factory=list)  # up to 10, worst first
    # The (warning, block) bands the p-values test against; the engine refuses to judge findings computed
    # against other bands than its policy's.
    warning_band: float | None = None
    block_band: float | None = None
    fdr: float | None = None  # the false discovery rate `exceeds` was decided with


class BinaryMetrics(Frozen):
    """A binary classifier's own numbers."""

    positives: int  # over all n rows (a property of the evaluation data)
    negatives: int
    auc: PairedChange | None  # ROC AUC, DeLong; None: fewer than 2 positives or 2 negatives among scored rows


class TaskMetrics(Frozen):
    """The numbers of a task registered beyond the three built-ins, in one general shape the policy's `tasks:`
    section judges (rules_task.py): its headline share of rows with its interval, and its paired metrics by name."""

    share_name: SegmentMetric  # what the share counts: rows whose prediction moved, or whose class flipped
    share: float
    share_ci_low: float  # Wilson
    share_ci_high: float
    events: int  # rows counted by the share: share = events / n_scored
    paired: dict[str, PairedChange] = Field(default_factory=dict)  # by name, e.g. a loss the policy judges
    notes: dict[str, str] = Field(default_factory=dict)  # how a number was derived, e.g. the tolerance's basis


class ModelMetrics(Frozen):
    """Per-model numbers the policy judges. None means "not computable" (see the fields' comments)."""

    n: int
    n_scored: int  # rows without failure; every metric below except failures is over these
    flips: int
    flip_rate: float | None  # None when no row was scored
    flip_rate_ci_low: float | None
    flip_rate_ci_high: float | None
    prob_shift_mean: float | None
    prob_shift_p95: float | None
    prob_shift_max: float | None
    psi: float | None
    failures: int
    failure_rate: float
    threshold: float
    confidence: float
    methods: dict[str, str]
    task: TaskName = Field(default="binary", min_length=1)
    binary: BinaryMetrics | None = None  # set exactly when task is binary
    other: TaskMetrics | None = None  # a registered task's section (tools/tasks/): set exactly when task is one
    regression: RegressionMetrics | None = None
    multiclass: MulticlassMetrics | None = None
    segments: SegmentSummary | None = None

    def headline(self) -> tuple[float | None, float | None, float | None]:
        """The share that says how much the change moved the model, with its interval: a regressor's share of
        moved predictions, else the flip rate. The evaluation sample is sized for it; a tolerance scan reports it."""
        if self.regression is not None:
            r = self.regression
            return r.moved_share, r.moved_share_ci_low, r.moved_share_ci_high
        if self.other is not None:
            return self.other.share, self.other.share_ci_low, self.other.share_ci_high
        return self.flip_rate, self.flip_rate_ci_low, self.flip_rate_ci_high

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any) -> Any:
        """Evidence written before the task sections: positives, negatives and auc_* were top-level fields that
        other tasks filled with 0 and None."""
        if not isinstance(data, dict) or "auc_baseline" not in data:
            return data
        data = legacy_flat(data, ("auc",))
        section = {"positives": data.pop("positives", 0), "negatives": data.pop("negatives", 0), "auc": data.pop("auc")}
        if data.get("task", "binary") == "binary":
            data["binary"] = section
        return data

    @model_validator(mode="after")
    def _binary_section(self) -> ModelMetrics:
        if (self.task == "binary") != (self.binary is not None):
            raise ValueError(
                f"a {self.task} model's metrics {'need a' if self.task == 'binary' else 'have no'} binary section"
            )
        if self.other is not None and self.task in BUILT_IN_TASKS:
            raise ValueError(f"a {self.task} model's metrics have their own section, not a registered task's")
        return self
