"""Metrics of each task as the experiment records them, built directly (the renderers need no pipeline): a
regressor made useless by a scale, a multiclass classifier with a few flips, and a segment summary whose worst
region is far above the overall rate. Shared by the report, chat, CLI and trace tests."""

from __future__ import annotations

from policies import Reason, Verdict
from policies.metrics import ModelMetrics, MulticlassMetrics, RegressionMetrics, SegmentFinding, SegmentSummary
from tools.evidence.schema import ModelEvidence

CLASSES = ["low", "medium", "high"]


def segments(metric: str = "flip_rate", *, findings: int = 2) -> SegmentSummary:
    """Bands (0.05, 0.10) and FDR 0.05: the default v2 policy's segment bands for both metrics."""
    north = SegmentFinding(
        column="region",
        segment="region=north",
        n=1_210,
        share=0.121,
        metric=metric,  # type: ignore[arg-type]
        value=0.3042,
        ci_low=0.2791,
        ci_high=0.3306,
        overall_value=0.0412,
        p_value=3.2e-41,
        p_adjusted=4.5e-40,
        exceeds="block",
        events=368,
        p_value_block=1.1e-20,
        p_adjusted_block=1.5e-19,
    )
    small = SegmentFinding(
        column="amount",
        segment="amount in [10, 50)",
        n=2_003,
        share=0.2003,
        metric=metric,  # type: ignore[arg-type]
        value=0.0451,
        ci_low=0.0368,
        ci_high=0.0551,
        overall_value=0.0412,
        p_value=0.4213,
        p_adjusted=0.6102,
        exceeds="none",
        events=90,
        p_value_block=0.9999,
        p_adjusted_block=1.0,
    )
    chosen = [north, small][:findings]
    return SegmentSummary(
        columns_examined=["region", "amount", "channel"],
        columns_skipped={"customer_id": "10,000 distinct values > 50"},
        segments_tested=14,
        min_share=0.05,
        method="categories and 5 quantile bins; one-sided exact binomial; Benjamini-Hochberg",
        worst=chosen[0] if chosen else None,
        findings=chosen,
        warning_band=0.05,
        block_band=0.1,
        fdr=0.05,
    )


def _common(task: str, **overrides: object) -> dict[str, object]:
    values: dict[str, object] = {
        "n": 10_000,
        "positives": 0,
        "negatives": 0,
        "n_scored": 9_990,
        "auc_baseline": None,
        "auc_mutated": None,
        "auc_delta": None,
        "auc_delta_ci_low": None,
        "auc_delta_ci_high": None,
        "auc_p_value": None,
        "flips": 0,
        "flip_rate": None,
        "flip_rate_ci_low": None,
        "flip_rate_ci_high": None,
        "prob_shift_mean": None,
        "prob_shift_p95": None,
        "prob_shift_max": None,
        "psi": None,
        "failures": 10,
        "failure_rate": 0.001,
        "threshold": 0.5,
        "confidence": 0.95,
        "methods": {"mae": "paired bootstrap, 2,000 resamples, seed 0"},
        "task": task,
    }
    return values | overrides


def regression_metrics(**overrides: object) -> ModelMetrics:
    regression = RegressionMetrics(
        mae_baseline=0.8325,
        mae_mutated=1843.217,
        mae_delta=1842.3845,
        mae_delta_ci_low=1799.5,
        mae_delta_ci_high=1885.25,
        mae_delta_relative=2213.1,
        rmse_baseline=1.0512,
        rmse_mutated=2711.9,
        rmse_delta=2710.85,
        rmse_delta_ci_low=2602.1,
        rmse_delta_ci_high=2820.4,
        rmse_delta_relative=2578.8,
        tolerance=0.2198,
        tolerance_basis="0.1 x baseline prediction std",
        moved=3_996,
        moved_share=0.4,
        moved_share_ci_low=0.3904,
        moved_share_ci_high=0.4097,
        prediction_psi=5.1234,
        baseline_prediction_std=2.198,
    )
    return ModelMetrics.model_validate(_common("regression", psi=5.1234, regression=regression) | overrides)


def multiclass_metrics(**overrides: object) -> ModelMetrics:
    multiclass = MulticlassMetrics(
        classes=CLASSES,
        accuracy_baseline=0.912,
        accuracy_mutated=0.8511,
        accuracy_delta=-0.0609,
        accuracy_delta_ci_low=-0.0661,
        accuracy_delta_ci_high=-0.0557,
        macro_f1_baseline=0.8843,
        macro_f1_mutated=0.8012,
        macro_f1_delta=-0.0831,
        macro_f1_delta_ci_low=-0.0902,
        macro_f1_delta_ci_high=-0.0760,
        per_class_flip_rate={"low": 0.021, "medium": 0.0912, "high": 0.3105},
        per_class_psi={"low": 0.0123, "medium": 0.2051, "high": 0.0456},
    )
    values = _common(
        "multiclass",
        flips=702,
        flip_rate=0.0703,
        flip_rate_ci_low=0.0654,
        flip_rate_ci_high=0.0754,
        prob_shift_mean=0.0412,
        prob_shift_p95=0.2231,
        prob_shift_max=0.8812,
        psi=0.2051,
        multiclass=multiclass,
    )
    return ModelMetrics.model_validate(values | overrides)


def model(name: str, metrics: ModelMetrics | None, verdict: Verdict = Verdict.BLOCK) -> ModelEvidence:
    reasons = [Reason(code="x_block", severity=verdict, message=f"{name} changed too much")]
    task = metrics.task if metrics is not None else None
    return ModelEvidence(
        urn=f"urn:li:mlModel:(urn:li:dataPlatform:mlflow,{name},PROD)",
        name=name,
        verdict=verdict,
        reasons=reasons,
        task=task,
        metrics=metrics,
    )
