"""Reading what a model binding names: the artifact, unpickled only when the exact bytes read hash to the catalog's
sha256 (joblib files and MLflow's `model.pkl` are pickles; the bytes are never read a second time, since the file
could change in between), and the labelled evaluation data with the hash of its bytes.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd

from tools.experiment.binding import PICKLE_FORMATS, BindingError, ModelBinding


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_artifact_bytes(path: Path) -> bytes:
    if not path.is_file():
        what = "is a folder without an MLmodel file" if path.is_dir() else "does not exist"
        raise BindingError("missing_artifact", f"model artifact {path} {what}")
    return path.read_bytes()


def load_verified_pipeline(binding: ModelBinding) -> Any:
    """Unpickle the artifact only if its bytes hash to the catalog's sha256."""
    data = read_artifact_bytes(binding.artifact_path)
    actual = sha256_bytes(data)
    if actual != binding.artifact_sha256:
        where = f" ({binding.artifact_uri})" if binding.artifact_uri else ""
        raise BindingError(
            "hash_mismatch",
            f"artifact {binding.artifact_path}{where} has sha256 {actual}, but the binding records "
            f"{binding.artifact_sha256}; it was not loaded. Re-bind the model or restore the artifact",
        )
    return unpickle_pipeline(data, binding.serialization_format, str(binding.artifact_path))


def unpickle_pipeline(data: bytes, serialization_format: str | None, where: str) -> Any:
    """Unpickle bytes the caller has already verified (or just hashed) and check they are a classifier.
    MLflow's `model.pkl` (pickle or cloudpickle) is a plain pickle; anything else is read as joblib (which also
    reads plain pickles)."""
    try:
        if serialization_format in PICKLE_FORMATS:
            pipeline = pickle.loads(data)
        else:
            pipeline = joblib.load(io.BytesIO(data))
    except Exception as exc:  # any unpickling failure means the file is not a usable pipeline
        raise BindingError("not_a_pipeline", f"artifact {where} could not be loaded: {exc}") from exc
    if not callable(getattr(pipeline, "predict_proba", None)):
        raise BindingError(
            "not_a_pipeline",
            f"artifact {where} holds a {type(pipeline).__name__}, not a classifier with predict_proba",
        )
    return pipeline


def read_table(path: Path) -> tuple[pd.DataFrame, str]:
    """A CSV or Parquet file as a frame, and the sha256 of the bytes it was parsed from."""
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
    return frame, sha256_bytes(data)


def check_label(frame: pd.DataFrame, label_column: str, where: Path | str) -> None:
    if label_column not in frame.columns:
        raise BindingError(
            "bad_eval_data",
            f"label column {label_column!r} is not in {where}; columns are {', '.join(map(str, frame.columns))}",
        )
    labels = frame[label_column]
    if labels.isna().any() or not set(np.unique(labels.to_numpy())) <= {0, 1}:
        raise BindingError("bad_eval_data", f"label column {label_column!r} must hold only 0/1 values")


def load_eval_data(binding: ModelBinding) -> tuple[pd.DataFrame, str]:
    """The labelled evaluation frame and the sha256 of its bytes (the baseline cache key)."""
    frame, digest = read_table(binding.eval_data_path)
    check_label(frame, binding.label_column, binding.eval_data_path)
    return frame, digest


def expected_columns(pipeline: Any) -> list[str] | None:
    names = getattr(pipeline, "feature_names_in_", None)
    return [str(n) for n in names] if names is not None else None
