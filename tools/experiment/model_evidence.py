"""A model's evidence record as the experiment builds it: the INCOMPLETE verdict of a model that could not be
tested, and the binding as the evidence records it."""

from __future__ import annotations

from typing import Any

from policies import incomplete
from tools.catalog.discovery import AffectedModel
from tools.evidence.schema import BindingRecord, ModelEvidence
from tools.experiment.binding import ModelBinding


def incomplete_evidence(model: AffectedModel, code: str, message: str, **extra: Any) -> ModelEvidence:
    """The model could not be tested: INCOMPLETE, with `code` and `message` as its reason."""
    decision = incomplete(code, message)
    return ModelEvidence(
        urn=model.urn,
        name=model.name,
        verdict=decision.verdict,
        reasons=list(decision.reasons),
        owners=model.owners,
        production_marker=model.production_evidence,
        **extra,
    )


def binding_record(binding: ModelBinding, eval_sha256: str | None = None) -> BindingRecord:
    """The binding as the evidence records it; `eval_sha256` once the evaluation data has been read."""
    return BindingRecord(
        artifact_path=str(binding.artifact_path),
        artifact_sha256_expected=binding.artifact_sha256,
        eval_data_path=str(binding.eval_data_path),
        eval_data_sha256=eval_sha256,
        label_column=binding.label_column,
        decision_threshold=binding.decision_threshold,
        task=binding.task,
        artifact_uri=binding.artifact_uri,
        eval_data_uri=binding.eval_data_uri,
        mlflow_model=binding.mlflow_model,
        mlflow_version=binding.mlflow_version,
        mlflow_run_id=binding.mlflow_run_id,
    )
