"""A policy file's model: the thresholds and the task sections it holds (the rules that read them live in
rules_*.py and segment_rule.py; engine.py dispatches and loads)."""

from __future__ import annotations

from pydantic import Field, model_validator

from policies.metrics import Frozen, TaskName
from policies.sections import (
    AucDropRule,
    Band,
    FailureRule,
    MulticlassRules,
    RegressionRules,
    SegmentRule,
    StructuralRule,
    TaskRules,
)


class Policy(Frozen):
    """A policy file. The top-level thresholds are v1's and judge binary classifiers; the optional task sections
    (v2) judge multiclass classifiers and regressors, and the segment rule applies to every task it can."""

    name: str = Field(min_length=1)
    version: int = Field(ge=1)
    description: str = ""
    min_rows: int = Field(ge=1)
    min_positives: int = Field(ge=2)  # DeLong's variance needs at least two of each class
    min_negatives: int = Field(ge=2)
    flip_rate: Band
    score_psi: Band
    inference_failures: FailureRule  # every task
    auc_drop: AucDropRule
    structural: StructuralRule = StructuralRule()  # optional in the file: BLOCK for both when absent
    multiclass: MulticlassRules | None = None  # None (v1): a multiclass model is INCOMPLETE
    regression: RegressionRules | None = None  # None (v1): a regressor is INCOMPLETE
    segments: SegmentRule | None = None  # None (v1): segments are not judged
    tasks: dict[str, TaskRules] = Field(default_factory=dict)  # registered tasks' rules, by task name

    @model_validator(mode="after")
    def _consistent(self) -> Policy:
        if self.flip_rate.block > 1:
            raise ValueError(f"flip_rate.block is a fraction of rows and must be <= 1 (got {self.flip_rate.block})")
        if self.min_rows < self.min_positives + self.min_negatives:
            raise ValueError("min_rows must be >= min_positives + min_negatives")
        return self

    def judges(self, task: TaskName) -> bool:
        """Whether this policy has rules for the task (v1 judges binary classifiers only)."""
        return self.share_band(task) is not None

    def share_band(self, task: TaskName) -> tuple[float, float] | None:
        """(warning, block) of the task's headline share: the flip-rate band for classifiers, the moved-share band
        for regressors; None when the policy has no rules for the task."""
        bands: dict[str, Band | None] = {
            "binary": self.flip_rate,
            "multiclass": None if self.multiclass is None else self.multiclass.flip_rate,
            "regression": None if self.regression is None else self.regression.moved_share,
        }
        band = bands[task] if task in bands else (self.tasks[task].share if task in self.tasks else None)
        return None if band is None else (band.warning, band.block)

    def segment_bands(self, task: TaskName) -> tuple[float, float] | None:
        """The share band the segment rule judges segments by (`share_band`); None when the policy has no segment
        rule or no rules for the task: pass no segments then."""
        return None if self.segments is None else self.share_band(task)

    def regression_tolerance_fraction(self) -> float | None:
        """A regressor's prediction "moved" when |mutated - baseline| > this x std of the baseline predictions."""
        return None if self.regression is None else self.regression.tolerance_fraction
