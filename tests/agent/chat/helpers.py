"""Shared data for the chat tests: the demo model's evidence, as an assessment produces it."""

from __future__ import annotations

from policies import Reason, Verdict
from policies.metrics import ModelMetrics
from tools.evidence.schema import ModelEvidence

MODEL_URN = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,fraud_detector,PROD)"
DATASET_URN = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"


def fraud_metrics(**overrides: float | None) -> ModelMetrics:
    values: dict[str, object] = {
        "n": 7200,
        "positives": 556,
        "negatives": 6644,
        "n_scored": 7200,
        "auc_baseline": 0.8993,
        "auc_mutated": 0.7266,
        "auc_delta": -0.1727,
        "auc_delta_ci_low": -0.1854,
        "auc_delta_ci_high": -0.1601,
        "auc_p_value": 6.06e-158,
        "flips": 5672,
        "flip_rate": 0.7878,
        "flip_rate_ci_low": 0.7782,
        "flip_rate_ci_high": 0.7971,
        "prob_shift_mean": 0.686,
        "prob_shift_p95": 0.938,
        "prob_shift_max": 0.967,
        "psi": 7.307,
        "failures": 0,
        "failure_rate": 0.0,
        "threshold": 0.5,
        "confidence": 0.95,
        "methods": {},
    }
    return ModelMetrics.model_validate(values | overrides)


def fraud_model(verdict: Verdict = Verdict.BLOCK, metrics: ModelMetrics | None = None) -> ModelEvidence:
    reasons = [
        Reason(code="flip_rate_block", severity=Verdict.BLOCK, message="flip rate 78.8% >= 10% block threshold"),
        Reason(code="inference_failures_pass", severity=Verdict.PASS, message="0 of 7200 rows failed"),
    ]
    return ModelEvidence(
        urn=MODEL_URN,
        name="fraud_detector",
        verdict=verdict,
        reasons=reasons,
        metrics=metrics or fraud_metrics(),
        plots={"roc": "fraud_detector-roc.png", "shift": "fraud_detector-shift.png"},
    )
