"""The threshold sections of a policy file, one frozen model each. Unknown keys are rejected (extra="forbid"), so a
misspelt threshold is an error, not a silently ignored line."""

from __future__ import annotations

from pydantic import Field, model_validator

from policies.metrics import Frozen
from policies.verdicts import Verdict


class Band(Frozen):
    """WARNING at value >= warning, BLOCK at value >= block."""

    warning: float = Field(gt=0)
    block: float = Field(gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> Band:
        if self.warning > self.block:
            raise ValueError(f"warning ({self.warning}) must be <= block ({self.block})")
        return self


class ShareBand(Band):
    """A band on a share of rows (flip rate, moved share): a block level above 1 could never fire."""

    block: float = Field(gt=0, le=1)


class FailureRule(Frozen):
    warning_count: int = Field(ge=1)
    block_rate: float = Field(gt=0, le=1)


class AucDropRule(Band):
    alpha: float = Field(gt=0, lt=1)
    block: float = Field(gt=0, le=1)


class SignificantDropRule(Band):
    """A drop of a [0, 1] score (accuracy, macro-F1), judged only when its confidence interval lies wholly below 0
    (the change is significant at the metrics' confidence level) and the drop reaches the band."""

    block: float = Field(gt=0, le=1)


class SignificantIncreaseRule(Band):
    """A relative increase of an error (MAE, RMSE: delta / baseline), judged only when the delta's confidence
    interval lies wholly above 0 and the relative increase reaches the band."""


class MulticlassRules(Frozen):
    min_rows: int = Field(ge=1)
    flip_rate: ShareBand  # share of scored rows whose argmax class changed
    accuracy_drop: SignificantDropRule
    macro_f1_drop: SignificantDropRule
    class_psi: Band  # max over classes of the PSI of that class's probability


class RegressionRules(Frozen):
    min_rows: int = Field(ge=2)  # a paired standard error needs two rows at the very least
    mae_increase_relative: SignificantIncreaseRule
    rmse_increase_relative: SignificantIncreaseRule
    moved_share: ShareBand  # share of scored rows whose prediction moved by more than the tolerance
    tolerance_fraction: float = Field(gt=0)  # tolerance = this x std of the baseline predictions
    prediction_psi: Band


class TaskRules(Frozen):
    """The rules of a task registered beyond the three built-ins (a policy's `tasks: {name: ...}`), over the general
    section it measures (`TaskMetrics`): its headline share, and a relative increase of each named paired metric
    that is worse when higher (a loss), judged like a regressor's MAE. A metric named here that the task did not
    measure makes the model INCOMPLETE, never PASS."""

    min_rows: int = Field(ge=2)
    share: ShareBand
    increases: dict[str, SignificantIncreaseRule] = Field(default_factory=dict)


class SegmentRule(Frozen):
    """How segments are formed and when one may raise the verdict (see policies/README.md, "Segments")."""

    min_share: float = Field(gt=0, lt=1)  # a segment holds at least this share of the scored rows
    fdr: float = Field(gt=0, lt=1)  # Benjamini-Hochberg false discovery rate across all segments tested
    numeric_bins: int = Field(ge=2, le=20)  # quantile bins per numeric column
    max_columns: int = Field(ge=1)  # columns examined, in the evaluation data's order
    max_categories: int = Field(ge=2)  # a categorical column with more distinct values is skipped


class StructuralRule(Frozen):
    """The verdict for a production model whose input column is dropped or renamed: no metric can be measured
    (the model cannot be scored without its input), so the rule is a verdict, not a threshold. Never PASS: a
    model losing an input is at least worth a look."""

    dropped: Verdict = Verdict.BLOCK
    renamed: Verdict = Verdict.BLOCK

    @model_validator(mode="after")
    def _not_pass(self) -> StructuralRule:
        if Verdict.PASS in (self.dropped, self.renamed):
            raise ValueError("a dropped or renamed input cannot PASS; use WARNING, INCOMPLETE or BLOCK")
        return self
