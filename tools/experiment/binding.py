"""The model-binding contract (DESIGN §4): artifact, its sha256, evaluation data and label, read from the
model's DataHub custom properties. joblib files are pickles, so the hash is verified on the exact bytes that
are then unpickled — never a second read of the file, which could have changed in between.
"""

from __future__ import annotations

import hashlib
import io
import math
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

ARTIFACT_URI = "provenance.artifact_uri"
ARTIFACT_SHA256 = "provenance.artifact_sha256"
EVAL_DATA_URI = "provenance.eval_data_uri"
LABEL_COLUMN = "provenance.label_column"
DECISION_THRESHOLD = "provenance.decision_threshold"  # optional; default 0.5
REQUIRED_KEYS = (ARTIFACT_URI, ARTIFACT_SHA256, EVAL_DATA_URI, LABEL_COLUMN)


class BindingError(Exception):
    """The model cannot be tested as bound; `code` becomes the INCOMPLETE reason's code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ModelBinding(BaseModel):
    model_config = ConfigDict(frozen=True)

    artifact_path: Path
    artifact_sha256: str
    eval_data_path: Path
    label_column: str
    decision_threshold: float = 0.5


def _resolve(uri: str, base_dir: Path) -> Path:
    path = Path(uri.removeprefix("file://")).expanduser()
    return path if path.is_absolute() else (base_dir / path).resolve()


def resolve_binding(custom_properties: dict[str, str], base_dir: Path) -> ModelBinding:
    missing = [key for key in REQUIRED_KEYS if not custom_properties.get(key, "").strip()]
    if missing:
        raise BindingError(
            "missing_binding",
            f"the model has no {', '.join(missing)} custom propert{'y' if len(missing) == 1 else 'ies'}; "
            "add them in DataHub (see the model-binding contract in the README) so Provenance can test it",
        )
    digest = custom_properties[ARTIFACT_SHA256].strip().lower()
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise BindingError("bad_binding", f"{ARTIFACT_SHA256} must be a 64-character hex sha256, got {digest!r}")
    threshold_text = custom_properties.get(DECISION_THRESHOLD, "0.5")
    try:
        threshold = float(threshold_text)
    except ValueError:
        threshold = math.nan
    if not 0 < threshold < 1:
        raise BindingError("bad_binding", f"{DECISION_THRESHOLD} must be a number in (0, 1), got {threshold_text!r}")
    return ModelBinding(
        artifact_path=_resolve(custom_properties[ARTIFACT_URI], base_dir),
        artifact_sha256=digest,
        eval_data_path=_resolve(custom_properties[EVAL_DATA_URI], base_dir),
        label_column=custom_properties[LABEL_COLUMN].strip(),
        decision_threshold=threshold,
    )


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_verified_pipeline(binding: ModelBinding) -> Any:
    """Unpickle the artifact only if its bytes hash to the catalog's sha256."""
    if not binding.artifact_path.is_file():
        raise BindingError("missing_artifact", f"model artifact {binding.artifact_path} does not exist")
    data = binding.artifact_path.read_bytes()
    actual = sha256_bytes(data)
    if actual != binding.artifact_sha256:
        raise BindingError(
            "hash_mismatch",
            f"artifact {binding.artifact_path} has sha256 {actual}, but DataHub records {binding.artifact_sha256}; "
            "it was not loaded. Re-register the model or restore the artifact",
        )
    try:
        pipeline = joblib.load(io.BytesIO(data))
    except Exception as exc:  # any unpickling failure means the file is not a usable pipeline
        raise BindingError("not_a_pipeline", f"artifact {binding.artifact_path} could not be loaded: {exc}") from exc
    if not callable(getattr(pipeline, "predict_proba", None)):
        raise BindingError(
            "not_a_pipeline",
            f"artifact {binding.artifact_path} holds a {type(pipeline).__name__}, not a classifier with predict_proba",
        )
    return pipeline


def load_eval_data(binding: ModelBinding) -> tuple[pd.DataFrame, str]:
    """The labelled evaluation frame and the sha256 of its bytes (the baseline cache key)."""
    path = binding.eval_data_path
    if not path.is_file():
        raise BindingError("missing_eval_data", f"evaluation data {path} does not exist")
    data = path.read_bytes()
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            frame = pd.read_parquet(io.BytesIO(data))
        else:
            frame = pd.read_csv(io.BytesIO(data))
    except Exception as exc:  # pandas raises many parser error types
        raise BindingError("bad_eval_data", f"evaluation data {path} could not be read: {exc}") from exc
    if binding.label_column not in frame.columns:
        raise BindingError(
            "bad_eval_data",
            f"label column {binding.label_column!r} is not in {path}; columns are {', '.join(map(str, frame.columns))}",
        )
    labels = frame[binding.label_column]
    if labels.isna().any() or not set(np.unique(labels.to_numpy())) <= {0, 1}:
        raise BindingError("bad_eval_data", f"label column {binding.label_column!r} must hold only 0/1 values")
    return frame, sha256_bytes(data)


def expected_columns(pipeline: Any) -> list[str] | None:
    names = getattr(pipeline, "feature_names_in_", None)
    return [str(n) for n in names] if names is not None else None
