"""The model-binding contract (DESIGN §4): artifact, its sha256, evaluation data and label, read from the
model's DataHub custom properties. joblib files and MLflow's `model.pkl` are pickles, so the hash is verified on
the exact bytes that are then unpickled — never a second read of the file, which could have changed in between.

URIs are the ones people have: a path (absolute, or relative to the catalog file's folder), `file://…`, or any
URI MLflow's artifact repositories handle (`runs:/…`, `models:/…`, `mlflow-artifacts:/…`, `s3://…`), fetched with
`mlflow.artifacts.download_artifacts` into a local cache (MLflow is imported only then). A URI naming an MLflow
model directory (it holds an `MLmodel` file) stands for the pickle of its scikit-learn flavour.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import math
import os
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import joblib
import numpy as np
import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict

ARTIFACT_URI = "provenance.artifact_uri"
ARTIFACT_SHA256 = "provenance.artifact_sha256"
EVAL_DATA_URI = "provenance.eval_data_uri"
LABEL_COLUMN = "provenance.label_column"
DECISION_THRESHOLD = "provenance.decision_threshold"  # optional; default 0.5
REQUIRED_KEYS = (ARTIFACT_URI, ARTIFACT_SHA256, EVAL_DATA_URI, LABEL_COLUMN)
# Written by `provenance bind` for the evidence; optional, never needed to test a model.
MLFLOW_MODEL = "provenance.mlflow_model"
MLFLOW_VERSION = "provenance.mlflow_version"
MLFLOW_RUN_ID = "provenance.mlflow_run_id"

MLMODEL_FILE = "MLmodel"
PICKLE_FORMATS = ("pickle", "cloudpickle")  # MLflow's sklearn serialization formats; both load with pickle
CACHE_FOLDER = "artifact-cache"  # under the catalog file's folder: downloads of non-local URIs


class BindingError(Exception):
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
    artifact_uri: str | None = None  # as recorded in the catalog
    eval_data_uri: str | None = None
    serialization_format: str | None = None  # MLflow sklearn flavour's format; None: a joblib file
    mlflow_model: str | None = None
    mlflow_version: str | None = None
    mlflow_run_id: str | None = None


class LocatedArtifact(BaseModel):
    """Where an artifact URI's pickle is on this machine, and how it was serialised."""

    model_config = ConfigDict(frozen=True)

    path: Path
    serialization_format: str | None = None
    mlflow_model_dir: bool = False


# --- URIs -----------------------------------------------------------------------------------------------------


def is_local_uri(uri: str) -> bool:
    """A path or `file://` URI (also `C:\\…`-style paths, whose "scheme" is a drive letter)."""
    scheme = urlparse(uri).scheme
    return scheme in ("", "file") or len(scheme) == 1


def _local_path(uri: str, base_dir: Path) -> Path:
    text = uri.strip()
    if text.startswith("file://"):
        text = unquote(text.removeprefix("file://"))
    elif text.startswith("file:"):  # file:/abs/path
        text = unquote(text.removeprefix("file:"))
    path = Path(text).expanduser()
    return path if path.is_absolute() else (base_dir / path).resolve()


def _download(uri: str, cache_dir: Path, code: str) -> Path:
    """A local copy of a non-local URI, under `cache_dir/<digest of the URI>/` (stable across runs, so evidence
    and replays name the same path). Fetched again every time: the cache only names the place."""
    try:
        from mlflow.artifacts import download_artifacts
    except ImportError as exc:
        raise BindingError(
            "unresolvable_uri",
            f"{uri} is not a local path and MLflow is not installed to fetch it; install provenance[mlflow] "
            "(pip install 'provenance[mlflow]') and set MLFLOW_TRACKING_URI",
        ) from exc
    target = cache_dir / hashlib.sha256(uri.encode()).hexdigest()[:16]
    cache_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".download-", dir=cache_dir))
    try:
        try:
            # MLflow's client for a sqlite:// store makes its default artifact root ./mlruns in the current
            # directory: let that happen in the staging folder, not in the user's.
            with contextlib.chdir(staging):
                fetched = Path(download_artifacts(artifact_uri=uri, dst_path=str(staging)))
        except Exception as exc:  # MLflow raises its own, OSError, botocore… errors
            text = " ".join(str(exc).split())[:400] or type(exc).__name__
            unresolvable = "artifact repository" in text.lower() or "not a valid" in text.lower()
            raise BindingError(
                "unresolvable_uri" if unresolvable else code,
                f"{uri} could not be fetched through MLflow ({text}); check the URI and MLFLOW_TRACKING_URI",
            ) from exc
        fetched = _inside(fetched, staging)
        if fetched.is_dir() and (fetched / MLMODEL_FILE).is_file():
            pickle_path, _ = _sklearn_pickle(fetched, uri)
            keep = [fetched / MLMODEL_FILE, pickle_path]
        elif fetched.is_dir():
            raise BindingError(code, f"{uri} is a folder without an {MLMODEL_FILE} file, not a model or a data file")
        else:
            keep = [fetched]
        target.mkdir(parents=True, exist_ok=True)
        for source in keep:
            destination = target / (source.relative_to(fetched) if fetched.is_dir() else source.name)
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, destination)  # atomic: a concurrent reader sees the old or the new file, whole
        return target if fetched.is_dir() else target / fetched.name
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _inside(path: Path, folder: Path) -> Path:
    """MLflow returns a path under `dst_path`; anything else is copied there first (never moved)."""
    try:
        path.resolve().relative_to(folder.resolve())
        return path
    except ValueError:
        copy = folder / "copy" / path.name
        if path.is_dir():
            shutil.copytree(path, copy)
        else:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
        return copy


def _sklearn_pickle(model_dir: Path, uri: str) -> tuple[Path, str]:
    """The pickle file and serialization format of an MLflow model directory's sklearn flavour."""
    try:
        meta = yaml.safe_load((model_dir / MLMODEL_FILE).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise BindingError("not_a_pipeline", f"{uri}: its {MLMODEL_FILE} file could not be read: {exc}") from exc
    flavors = meta.get("flavors") if isinstance(meta, dict) else None
    flavour = flavors.get("sklearn") if isinstance(flavors, dict) else None
    if not isinstance(flavour, dict) or not isinstance(flavour.get("pickled_model"), str):
        names = ", ".join(sorted(flavors)) if isinstance(flavors, dict) else "none"
        raise BindingError(
            "not_a_pipeline",
            f"{uri} is an MLflow model without a scikit-learn flavour (flavours: {names}); "
            "only scikit-learn pipelines can be tested",
        )
    fmt = str(flavour.get("serialization_format") or "cloudpickle")
    if fmt not in PICKLE_FORMATS:
        raise BindingError(
            "not_a_pipeline", f"{uri}: unknown scikit-learn serialization format {fmt!r} (expected pickle/cloudpickle)"
        )
    return model_dir / flavour["pickled_model"], fmt


def locate_file(uri: str, base_dir: Path, cache_dir: Path, *, code: str = "missing_eval_data") -> Path:
    """The local file a data URI names (downloaded when it is not local)."""
    if is_local_uri(uri):
        return _local_path(uri, base_dir)
    return _download(uri, cache_dir, code)


def locate_artifact(uri: str, base_dir: Path, cache_dir: Path) -> LocatedArtifact:
    """The local pickle an artifact URI names: the file itself, or an MLflow model directory's sklearn pickle."""
    path = locate_file(uri, base_dir, cache_dir, code="missing_artifact")
    if path.is_dir() and (path / MLMODEL_FILE).is_file():
        pickle_path, fmt = _sklearn_pickle(path, uri)
        return LocatedArtifact(path=pickle_path, serialization_format=fmt, mlflow_model_dir=True)
    return LocatedArtifact(path=path)


# --- resolving the catalog's keys -----------------------------------------------------------------------------


def missing_keys(custom_properties: dict[str, str]) -> list[str]:
    return [key for key in REQUIRED_KEYS if not custom_properties.get(key, "").strip()]


def resolve_binding(custom_properties: dict[str, str], base_dir: Path, cache_dir: Path | None = None) -> ModelBinding:
    """Validate the keys and find the files they name (non-local URIs are downloaded under `cache_dir`, by
    default `<base_dir>/artifact-cache`). Nothing is unpickled here."""
    missing = missing_keys(custom_properties)
    if missing:
        raise BindingError(
            "missing_binding",
            f"the model has no {', '.join(missing)} custom propert{'y' if len(missing) == 1 else 'ies'}; "
            "add them in DataHub (see the model-binding contract in the README) so Provenance can test it; "
            "for a model registered in MLflow, `provenance bind MODEL` writes them as model-version tags",
        )
    digest = custom_properties[ARTIFACT_SHA256].strip().lower()
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise BindingError("bad_binding", f"{ARTIFACT_SHA256} must be a 64-character hex sha256, got {digest!r}")
    threshold = parse_threshold(custom_properties.get(DECISION_THRESHOLD, "0.5"))
    cache = cache_dir or base_dir / CACHE_FOLDER
    artifact_uri = custom_properties[ARTIFACT_URI].strip()
    eval_uri = custom_properties[EVAL_DATA_URI].strip()
    artifact = locate_artifact(artifact_uri, base_dir, cache)
    return ModelBinding(
        artifact_path=artifact.path,
        artifact_sha256=digest,
        eval_data_path=locate_file(eval_uri, base_dir, cache),
        label_column=custom_properties[LABEL_COLUMN].strip(),
        decision_threshold=threshold,
        artifact_uri=artifact_uri,
        eval_data_uri=eval_uri,
        serialization_format=artifact.serialization_format,
        mlflow_model=custom_properties.get(MLFLOW_MODEL) or None,
        mlflow_version=custom_properties.get(MLFLOW_VERSION) or None,
        mlflow_run_id=custom_properties.get(MLFLOW_RUN_ID) or None,
    )


def parse_threshold(text: str) -> float:
    try:
        threshold = float(text)
    except ValueError:
        threshold = math.nan
    if not 0 < threshold < 1:
        raise BindingError("bad_binding", f"{DECISION_THRESHOLD} must be a number in (0, 1), got {text!r}")
    return threshold


# --- loading --------------------------------------------------------------------------------------------------


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
