"""The model-binding contract (docs/design.md §4): the DataHub custom properties that bind a model to its artifact, the
artifact's sha256, the evaluation data and its label; the ModelBinding they resolve to; and BindingError, whose
code becomes the INCOMPLETE reason's code.

Finding the files the URIs name is `locate.py` (`resolve_binding`); reading them, with the hash check before any
unpickling, is `loading.py`.
"""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from policies import TaskName
from tools import task_registry
from tools.errors import ServiceFailure

ARTIFACT_URI = "provenance.artifact_uri"
ARTIFACT_SHA256 = "provenance.artifact_sha256"
EVAL_DATA_URI = "provenance.eval_data_uri"
LABEL_COLUMN = "provenance.label_column"
DECISION_THRESHOLD = "provenance.decision_threshold"  # optional; default 0.5
# Optional: a registered task (binary, multiclass, regression…), checked against the pipeline (task.py).
TASK = "provenance.task"
REQUIRED_KEYS = (ARTIFACT_URI, ARTIFACT_SHA256, EVAL_DATA_URI, LABEL_COLUMN)
# Written by `provenance bind` for the evidence; optional, never needed to test a model.
MLFLOW_MODEL = "provenance.mlflow_model"
MLFLOW_VERSION = "provenance.mlflow_version"
MLFLOW_RUN_ID = "provenance.mlflow_run_id"
PICKLE_FORMATS = ("pickle", "cloudpickle")  # MLflow's sklearn serialization formats; both load with pickle
XGBOOST_FORMAT = "xgboost"  # MLflow's xgboost flavour: XGBoost's own file format, not a pickle (flavours.py)


class BindingError(ServiceFailure):
    """The model cannot be tested as bound; `code` becomes the INCOMPLETE reason's code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ModelBinding(BaseModel):
    model_config = ConfigDict(frozen=True)

    artifact_path: Path  # the local file whose bytes are hashed and unpickled
    artifact_sha256: str
    eval_data_path: Path  # the local file read as evaluation data
    label_column: str
    decision_threshold: float = 0.5
    task: TaskName | None = None  # provenance.task; None: detected from the pipeline (task.py)
    artifact_uri: str | None = None  # as recorded in the catalog
    eval_data_uri: str | None = None
    serialization_format: str | None = None  # pickle | cloudpickle | xgboost (MLflow's flavours); None: joblib
    model_class: str | None = None  # for the xgboost format: the scikit-learn class the file loads into
    mlflow_model: str | None = None
    mlflow_version: str | None = None
    mlflow_run_id: str | None = None


def missing_keys(custom_properties: dict[str, str]) -> list[str]:
    return [key for key in REQUIRED_KEYS if not custom_properties.get(key, "").strip()]


def parse_threshold(text: str) -> float:
    try:
        threshold = float(text)
    except ValueError:
        threshold = math.nan
    if not 0 < threshold < 1:
        raise BindingError("bad_binding", f"{DECISION_THRESHOLD} must be a number in (0, 1), got {text!r}")
    return threshold


def parse_task(text: str | None) -> TaskName | None:
    """The binding's `provenance.task`, validated against the registered tasks (tools/task_registry.py); None when
    the key is absent or empty."""
    if text is None or not text.strip():
        return None
    value = text.strip().lower()
    tasks = task_registry.names()
    if value in tasks:
        return value
    raise BindingError("bad_binding", f"{TASK} must be one of {', '.join(tasks)}, got {text!r}")
