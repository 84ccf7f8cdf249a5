"""The measured numbers the policy judges, one value per model. Defined here, with the engine that reads them, so
`policies` depends on nothing of ours; `tools/experiment/task_metrics.py` computes and returns them.

The task decides which fields carry meaning:

- binary: every field of ``ModelMetrics`` as in v1 (``regression`` and ``multiclass`` are None);
- multiclass: flips / flip_rate / its CI are argmax flips, positives / negatives are 0, the AUC fields are None,
  prob_shift_* summarise the per-row max-over-classes |p_mutated - p_baseline|, psi is the max per-class PSI;
  the task's own numbers are in ``multiclass``;
- regression: flips = 0, flip_rate and its CI None, AUC None, prob_shift_* None, psi = PSI of the predictions;
  the task's own numbers are in ``regression``.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

Task = Literal["binary", "multiclass", "regression"]
SegmentMetric = Literal["flip_rate", "moved_share"]
Exceeds = Literal["none", "warning", "block"]


class Frozen(BaseModel):
    """Every model of policies/: immutable, unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class RegressionMetrics(Frozen):
    """Paired error changes of a regressor on the scored rows; every delta is mutated - baseline (positive = worse)."""

    mae_baseline: float
    mae_mutated: float
    mae_delta: float
    mae_delta_ci_low: float
    mae_delta_ci_high: float
    mae_delta_relative: float | None  # mae_delta / mae_baseline; None when the baseline MAE is 0
    rmse_baseline: float
    rmse_mutated: float
    rmse_delta: float
    rmse_delta_ci_low: float
    rmse_delta_ci_high: float
    rmse_delta_relative: float | None  # rmse_delta / rmse_baseline; None when the baseline RMSE is 0
    tolerance: float  # absolute: a prediction "moved" when |mutated - baseline| > tolerance
    tolerance_basis: str  # how the tolerance was derived, e.g. "0.1 x baseline prediction std"
    moved: int
    moved_share: float
    moved_share_ci_low: float  # Wilson
    moved_share_ci_high: float
    prediction_psi: float
    baseline_prediction_std: float


class MulticlassMetrics(Frozen):
    """Paired accuracy / macro-F1 changes of a multiclass classifier on the scored rows (mutated - baseline)."""

    classes: list[str]
    accuracy_baseline: float
    accuracy_mutated: float
    accuracy_delta: float  # negative is a drop
    accuracy_delta_ci_low: float
    accuracy_delta_ci_high: float
    macro_f1_baseline: float
    macro_f1_mutated: float
    macro_f1_delta: float
    macro_f1_delta_ci_low: float
    macro_f1_delta_ci_high: float
    # Share of the rows whose baseline argmax is that class and whose argmax changed (0.0 for a class never
    # predicted by the baseline).
    per_class_flip_rate: dict[str, float]
    per_class_psi: dict[str, float]  # PSI of each class's probability, mutated vs baseline


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


class ModelMetrics(Frozen):
    """Per-model numbers the policy judges. None means "not computable" (see the fields' comments)."""

    n: int
    positives: int  # over all n rows (a property of the evaluation data)
    negatives: int
    n_scored: int  # rows without failure; every metric below except failures is over these
    auc_baseline: float | None  # None: fewer than 2 positives or 2 negatives among scored rows
    auc_mutated: float | None
    auc_delta: float | None  # mutated - baseline; negative is a drop
    auc_delta_ci_low: float | None
    auc_delta_ci_high: float | None
    auc_p_value: float | None
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
    task: Task = "binary"
    regression: RegressionMetrics | None = None
    multiclass: MulticlassMetrics | None = None
    segments: SegmentSummary | None = None


NO_ROC_FIELDS: Final[dict[str, Any]] = {
    "positives": 0,
    "negatives": 0,
    "auc_baseline": None,
    "auc_mutated": None,
    "auc_delta": None,
    "auc_delta_ci_low": None,
    "auc_delta_ci_high": None,
    "auc_p_value": None,
}
"""The binary-only fields of ModelMetrics as a multiclass or regression model fills them (no ROC, no positives)."""
