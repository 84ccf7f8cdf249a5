"""Metrics builders for the policy tests: numbers that pass every rule of default-v2, overridden one at a time."""

from __future__ import annotations

from typing import Any

from policies import ModelMetrics, MulticlassMetrics, RegressionMetrics, SegmentFinding, SegmentSummary

TINY = 1e-9
CLASSES = ["low", "medium", "high"]


def _common(task: str, n: int) -> dict[str, Any]:
    return {
        "n": n, "positives": 0, "negatives": 0, "n_scored": n, "auc_baseline": None, "auc_mutated": None,
        "auc_delta": None, "auc_delta_ci_low": None, "auc_delta_ci_high": None, "auc_p_value": None, "flips": 0,
        "flip_rate": None, "flip_rate_ci_low": None, "flip_rate_ci_high": None, "prob_shift_mean": None,
        "prob_shift_p95": None, "prob_shift_max": None, "psi": None, "failures": 0, "failure_rate": 0.0,
        "threshold": 0.5, "confidence": 0.95, "methods": {}, "task": task,
    }  # fmt: skip


def multiclass(n: int = 1000, metrics: dict[str, Any] | None = None, **task: Any) -> ModelMetrics:
    fields: dict[str, Any] = {
        "classes": CLASSES, "accuracy_baseline": 0.80, "accuracy_mutated": 0.80, "accuracy_delta": 0.0,
        "accuracy_delta_ci_low": -0.004, "accuracy_delta_ci_high": 0.004, "macro_f1_baseline": 0.75,
        "macro_f1_mutated": 0.75, "macro_f1_delta": 0.0, "macro_f1_delta_ci_low": -0.004,
        "macro_f1_delta_ci_high": 0.004, "per_class_flip_rate": dict.fromkeys(CLASSES, 0.0),
        "per_class_psi": dict.fromkeys(CLASSES, 0.0),
    }  # fmt: skip
    fields.update(task)
    top = _common("multiclass", n) | {"flip_rate": 0.0, "flip_rate_ci_low": 0.0, "flip_rate_ci_high": 0.004}
    top |= {"psi": max(fields["per_class_psi"].values()), "multiclass": MulticlassMetrics(**fields)}
    return ModelMetrics(**(top | (metrics or {})))


def regression(n: int = 1000, metrics: dict[str, Any] | None = None, **task: Any) -> ModelMetrics:
    fields: dict[str, Any] = {
        "mae_baseline": 10.0, "mae_mutated": 10.0, "mae_delta": 0.0, "mae_delta_ci_low": -0.1,
        "mae_delta_ci_high": 0.1, "mae_delta_relative": 0.0, "rmse_baseline": 14.0, "rmse_mutated": 14.0,
        "rmse_delta": 0.0, "rmse_delta_ci_low": -0.1, "rmse_delta_ci_high": 0.1, "rmse_delta_relative": 0.0,
        "tolerance": 2.0, "tolerance_basis": "0.1 x baseline prediction std", "moved": 0, "moved_share": 0.0,
        "moved_share_ci_low": 0.0, "moved_share_ci_high": 0.004, "prediction_psi": 0.0,
        "baseline_prediction_std": 20.0,
    }  # fmt: skip
    fields.update(task)
    top = _common("regression", n) | {"psi": fields["prediction_psi"], "regression": RegressionMetrics(**fields)}
    return ModelMetrics(**(top | (metrics or {})))


def finding(**overrides: Any) -> SegmentFinding:
    fields: dict[str, Any] = {
        "column": "region", "segment": "region=north", "n": 200, "share": 0.2, "metric": "flip_rate", "value": 0.02,
        "ci_low": 0.008, "ci_high": 0.05, "overall_value": 0.02, "p_value": 0.9, "p_adjusted": 0.9, "exceeds": "none",
        "events": 4, "p_value_block": 1.0, "p_adjusted_block": 1.0,
    }  # fmt: skip
    return SegmentFinding(**(fields | overrides))


def with_segments(
    m: ModelMetrics, findings: list[SegmentFinding], bands: tuple[float, float] = (0.05, 0.10)
) -> ModelMetrics:
    summary = SegmentSummary(
        columns_examined=sorted({f.column for f in findings}), columns_skipped={}, segments_tested=len(findings),
        min_share=0.05, method="test", worst=findings[0] if findings else None, findings=findings,
        warning_band=bands[0], block_band=bands[1], fdr=0.05,
    )  # fmt: skip
    return m.model_copy(update={"segments": summary})


def binary(n: int = 1000, **overrides: Any) -> ModelMetrics:
    fields = _common("binary", n) | {
        "positives": n // 2, "negatives": n - n // 2, "auc_baseline": 0.85, "auc_mutated": 0.85, "auc_delta": 0.0,
        "auc_delta_ci_low": -0.01, "auc_delta_ci_high": 0.01, "auc_p_value": 1.0, "flip_rate": 0.0,
        "flip_rate_ci_low": 0.0, "flip_rate_ci_high": 0.004, "prob_shift_mean": 0.0, "prob_shift_p95": 0.0,
        "prob_shift_max": 0.0, "psi": 0.0,
    }  # fmt: skip
    return ModelMetrics(**(fields | overrides))
