"""Binding URIs MLflow users have: paths, file://, an MLflow model folder (its sklearn pickle), and the URIs MLflow
fetches itself (runs:/, models:/, …). The sha256 is always checked on the bytes that are unpickled."""

from __future__ import annotations

import hashlib
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from tests.realworld.world import RealWorld
from tests.tools.registry.mlflow_helpers import LeavesMarker
from tools.experiment.binding import (
    ARTIFACT_SHA256,
    ARTIFACT_URI,
    EVAL_DATA_URI,
    LABEL_COLUMN,
    MLFLOW_MODEL,
    MLFLOW_RUN_ID,
    MLFLOW_VERSION,
    BindingError,
)
from tools.experiment.loading import load_eval_data, load_verified_pipeline
from tools.experiment.locate import resolve_binding
from tools.experiment.trust import parse_roots


def props(uri: str, sha: str, eval_uri: str = "eval.csv", **extra: str) -> dict[str, str]:
    return {ARTIFACT_URI: uri, ARTIFACT_SHA256: sha, EVAL_DATA_URI: eval_uri, LABEL_COLUMN: "defaulted", **extra}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mlflow_model_dir(folder: Path, payload: bytes, fmt: str = "cloudpickle", flavour: str = "sklearn") -> Path:
    """A folder laid out as mlflow.sklearn.save_model writes it (MLmodel + the pickle)."""
    folder.mkdir(parents=True)
    (folder / "MLmodel").write_text(
        f"flavors:\n  {flavour}:\n    pickled_model: model.pkl\n    serialization_format: {fmt}\n"
        "    sklearn_version: 1.9.1\n"
    )
    (folder / "model.pkl").write_bytes(payload)
    return folder


def classifier() -> LogisticRegression:
    return LogisticRegression().fit(np.array([[0.0], [1.0], [0.2], [0.9]]), np.array([0, 1, 0, 1]))


@pytest.mark.parametrize("fmt", ["pickle", "cloudpickle"])
@pytest.mark.parametrize("as_file_uri", [False, True], ids=["path", "file-uri"])
def test_an_mlflow_model_folder_means_its_sklearn_pickle(tmp_path: Path, fmt: str, as_file_uri: bool) -> None:
    folder = mlflow_model_dir(tmp_path / "model", pickle.dumps(classifier()), fmt=fmt)
    uri = folder.as_uri() if as_file_uri else str(folder)
    binding = resolve_binding(props(uri, sha(folder / "model.pkl")), tmp_path)
    assert binding.artifact_path == folder / "model.pkl"
    assert binding.serialization_format == fmt
    assert binding.artifact_uri == uri  # the evidence keeps the URI as the catalog has it
    assert load_verified_pipeline(binding).predict_proba(np.array([[0.5]])).shape == (1, 2)


def test_a_tampered_pickle_in_a_model_folder_is_never_unpickled(tmp_path: Path) -> None:
    marker = tmp_path / "unpickled"
    folder = mlflow_model_dir(tmp_path / "model", pickle.dumps(classifier()))
    recorded = sha(folder / "model.pkl")
    (folder / "model.pkl").write_bytes(pickle.dumps(LeavesMarker(marker)))
    binding = resolve_binding(props(str(folder), recorded), tmp_path)
    with pytest.raises(BindingError) as caught:
        load_verified_pipeline(binding)
    assert caught.value.code == "hash_mismatch"
    assert not marker.exists()


def test_a_model_folder_without_a_sklearn_flavour_is_not_a_pipeline(tmp_path: Path) -> None:
    folder = mlflow_model_dir(tmp_path / "model", b"x", flavour="pytorch")
    with pytest.raises(BindingError) as caught:
        resolve_binding(props(str(folder), "ab" * 32), tmp_path)
    assert caught.value.code == "not_a_pipeline"
    assert "pytorch" in str(caught.value) and "scikit-learn" in str(caught.value)


def test_a_folder_without_mlmodel_is_a_missing_artifact(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    binding = resolve_binding(props(str(tmp_path / "model"), "ab" * 32), tmp_path)
    with pytest.raises(BindingError) as caught:
        load_verified_pipeline(binding)
    assert caught.value.code == "missing_artifact" and "MLmodel" in str(caught.value)


def test_non_local_uri_without_mlflow_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mlflow.artifacts", None)  # `import mlflow.artifacts` now raises ImportError
    with pytest.raises(BindingError) as caught:
        resolve_binding(props("runs:/abc/model", "ab" * 32), tmp_path)
    assert caught.value.code == "unresolvable_uri"
    assert "provenance[mlflow]" in str(caught.value)


def test_a_scheme_no_artifact_repository_handles(tmp_path: Path) -> None:
    roots = parse_roots(f"{tmp_path},nosuchscheme://bucket/", [])
    with pytest.raises(BindingError) as caught:
        resolve_binding(props("nosuchscheme://bucket/model.pkl", "ab" * 32), tmp_path, roots=roots)
    assert caught.value.code == "unresolvable_uri"
    assert "nosuchscheme://bucket/model.pkl" in str(caught.value)


# --- through MLflow, on the real world's store ----------------------------------------------------------------


@pytest.fixture
def tracking(real_world: RealWorld, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> RealWorld:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", real_world.mlflow_uri)
    monkeypatch.chdir(tmp_path)
    return real_world


@pytest.mark.slow
@pytest.mark.parametrize(
    "uri",
    [
        "runs:/{run}/model",
        "models:/credit_default/1",
        "models:/credit_default/Production",
        "runs:/{run}/model/model.pkl",
    ],
)
def test_uris_mlflow_resolves_are_downloaded_and_verified(tracking: RealWorld, tmp_path: Path, uri: str) -> None:
    champion = tracking.champion
    uri = uri.format(run=champion.run_id)
    cache = tmp_path / "cache"
    binding = resolve_binding(props(uri, sha(champion.artifact_path), str(tracking.holdout_csv)), tmp_path, cache)
    assert binding.artifact_path.is_relative_to(cache)  # a local copy, never the store's own file
    assert binding.artifact_path.read_bytes() == champion.artifact_path.read_bytes()
    pipeline = load_verified_pipeline(binding)
    frame, _ = load_eval_data(binding)
    assert pipeline.predict_proba(frame[list(champion.features)]).shape == (len(frame), 2)
    again = resolve_binding(props(uri, sha(champion.artifact_path), str(tracking.holdout_csv)), tmp_path, cache)
    assert again.artifact_path == binding.artifact_path  # a stable place: evidence and replays name the same file
    assert not (tmp_path / "mlruns").exists()  # MLflow's client did not litter the current directory


@pytest.mark.slow
def test_a_downloaded_artifact_that_changed_is_not_unpickled(tracking: RealWorld, tmp_path: Path) -> None:
    champion = tracking.champion
    uri = f"runs:/{champion.run_id}/model"
    wrong = hashlib.sha256(b"what the catalog registered").hexdigest()
    binding = resolve_binding(props(uri, wrong, str(tracking.holdout_csv)), tmp_path, tmp_path / "cache")
    with pytest.raises(BindingError) as caught:
        load_verified_pipeline(binding)
    assert caught.value.code == "hash_mismatch" and uri in str(caught.value)


@pytest.mark.slow
def test_missing_run_artifact(tracking: RealWorld, tmp_path: Path) -> None:
    with pytest.raises(BindingError) as caught:
        resolve_binding(props(f"runs:/{tracking.champion.run_id}/nothing-here", "ab" * 32), tmp_path, tmp_path / "c")
    assert caught.value.code == "missing_artifact"


@pytest.mark.slow
def test_mlflow_keys_reach_the_binding(tracking: RealWorld, tmp_path: Path) -> None:
    champion = tracking.champion
    extra = {MLFLOW_MODEL: "credit_default", MLFLOW_VERSION: "1", MLFLOW_RUN_ID: champion.run_id}
    binding = resolve_binding(
        props(f"{champion.artifact_uri}/model", sha(champion.artifact_path), str(tracking.holdout_csv), **extra),
        tmp_path,
    )
    assert (binding.mlflow_model, binding.mlflow_version, binding.mlflow_run_id) == (
        "credit_default",
        "1",
        champion.run_id,
    )
    assert binding.artifact_path == champion.artifact_path  # file:// to a local store: read in place
