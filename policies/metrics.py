"""The measured numbers the policy judges, one value per model. Defined here, with the engine that reads them, so
`policies` depends on nothing of ours; `tools/experiment/metrics.py` computes and returns them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ModelMetrics(BaseModel):
    """Per-model numbers the policy judges. None means "not computable" (see the fields' comments)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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
