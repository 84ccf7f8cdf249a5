"""The trust boundary of a model binding (tools/experiment/trust.py): where model bytes and evaluation data may come
from, the registry's word on the hash, and skops files loaded without unpickling."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from tests.realworld.world import RealWorld, mlflow_client
from tests.tools.registry.mlflow_helpers import LeavesMarker
from tools.experiment.binding import (
    ARTIFACT_SHA256,
    ARTIFACT_URI,
    EVAL_DATA_URI,
    LABEL_COLUMN,
    MLFLOW_MODEL,
    MLFLOW_VERSION,
    BindingError,
)
from tools.experiment.loading import load_verified_pipeline
from tools.experiment.locate import resolve_binding
from tools.experiment.trust import ROOTS_ENV, configured_roots, parse_roots, registry_version
from tools.settings import ProvenanceSettings


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def props(artifact: str, digest: str, data: str, **extra: str) -> dict[str, str]:
    return {ARTIFACT_URI: artifact, ARTIFACT_SHA256: digest, EVAL_DATA_URI: data, LABEL_COLUMN: "y", **extra}


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(root, a fitted pipeline's joblib file in it, its evaluation CSV in it)."""
    root = tmp_path / "root"
    root.mkdir()
    frame = pd.DataFrame({"x": np.linspace(0, 1, 40), "y": [0, 1] * 20})
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(frame[["x"]], frame["y"])
    joblib.dump(model, root / "model.joblib")
    frame.to_csv(root / "eval.csv", index=False)
    return root, root / "model.joblib", root / "eval.csv"


def refused(properties: dict[str, str], base: Path, roots_text: str) -> BindingError:
    with pytest.raises(BindingError) as caught:
        resolve_binding(properties, base, roots=parse_roots(roots_text, []))
    return caught.value


# --- roots ----------------------------------------------------------------------------------------------------------


def test_files_inside_the_roots_resolve_and_load(world: tuple[Path, Path, Path]) -> None:
    root, model, data = world
    binding = resolve_binding(props("model.joblib", sha(model), "eval.csv"), root, roots=parse_roots(str(root), []))
    assert load_verified_pipeline(binding).predict_proba(pd.DataFrame({"x": [0.5]})).shape == (1, 2)


def test_a_pickle_outside_the_roots_is_never_unpickled(world: tuple[Path, Path, Path], tmp_path: Path) -> None:
    root, _, data = world
    marker, planted = tmp_path / "ran", tmp_path / "elsewhere" / "m.joblib"
    planted.parent.mkdir()
    joblib.dump(LeavesMarker(marker), planted)
    error = refused(props(str(planted), sha(planted), str(data)), root, str(root))
    assert error.code == "untrusted_location" and ROOTS_ENV in str(error) and str(root) in str(error)
    assert not marker.exists()


def test_a_link_out_of_a_root_is_refused_and_named(world: tuple[Path, Path, Path], tmp_path: Path) -> None:
    root, model, data = world
    outside = tmp_path / "outside.joblib"
    outside.write_bytes(model.read_bytes())
    (root / "link.joblib").symlink_to(outside)
    error = refused(props("link.joblib", sha(outside), str(data)), root, str(root))
    assert error.code == "untrusted_location" and f"a link to {outside}" in str(error)


def test_a_prefix_is_a_folder_not_a_string_prefix(world: tuple[Path, Path, Path], tmp_path: Path) -> None:
    root, model, data = world
    sibling = tmp_path / "root-evil"
    sibling.mkdir()
    (sibling / "m.joblib").write_bytes(model.read_bytes())
    assert (
        refused(props(str(sibling / "m.joblib"), sha(model), str(data)), root, str(root)).code == "untrusted_location"
    )
    error = refused(props(str(model), sha(model), "s3://bucket-evil/eval.csv"), root, f"{root},s3://bucket")
    assert error.code == "untrusted_location"


@pytest.mark.parametrize("data", ["/proc/self/environ", "/etc/passwd", "/dev/zero", "/sys/kernel/hostname"])
def test_system_files_are_refused_even_under_a_root_of_slash(world: tuple[Path, Path, Path], data: str) -> None:
    root, model, _ = world
    error = refused(props(str(model), sha(model), data), root, "/")
    assert error.code == "untrusted_location" and "system folder" in str(error)


def test_a_fifo_inside_a_root_is_not_a_file(world: tuple[Path, Path, Path]) -> None:
    root, model, _ = world
    os.mkfifo(root / "pipe.csv")
    assert refused(props(str(model), sha(model), "pipe.csv"), root, str(root)).code == "missing_eval_data"


@pytest.mark.parametrize("uri", ["https://127.0.0.1:9/m.pkl", "s3://someone/m.pkl", "gs://b/m.pkl", "hdfs://h/m"])
def test_remote_uris_need_a_listed_prefix(world: tuple[Path, Path, Path], uri: str) -> None:
    root, model, data = world
    error = refused(props(uri, sha(model), str(data)), root, str(root))
    assert error.code == "untrusted_location" and ROOTS_ENV in str(error)


def test_default_roots_are_the_home_and_the_catalog_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ROOTS_ENV, raising=False)
    settings = ProvenanceSettings(provenance_home=tmp_path / "home", provenance_lite_db=tmp_path / "cat" / "c.db")
    roots = configured_roots(settings=settings)
    assert roots.folders == ((tmp_path / "home").resolve(), (tmp_path / "cat").resolve()) and not roots.uri_prefixes
    monkeypatch.setenv(ROOTS_ENV, f" {tmp_path / 'models'} , s3://team-models/ml ,,")
    roots = configured_roots(settings=ProvenanceSettings(provenance_home=tmp_path / "home"))
    assert roots.folders == ((tmp_path / "models").resolve(),) and roots.uri_prefixes == ("s3://team-models/ml/",)


def test_registry_version_from_keys_or_a_models_uri() -> None:
    assert registry_version({MLFLOW_MODEL: "fraud", MLFLOW_VERSION: "3"}, "x") == ("fraud", "3")
    assert registry_version({}, "models:/fraud/7") == ("fraud", "7")
    assert registry_version({}, "models:/fraud/Production") is None
    assert registry_version({}, "/m.joblib") is None


# --- skops: scikit-learn models loaded without unpickling ----------------------------------------------------------


def _dump_skops(model: object, path: Path) -> None:
    """skops is imported here, not at the top: 2.4 s with the dask it pulls in, paid by every worker's collection."""
    import skops.io as sio

    sio.dump(model, path)


def test_a_skops_pipeline_loads_without_pickle(world: tuple[Path, Path, Path]) -> None:
    root, model, _ = world
    path = root / "model.skops"
    _dump_skops(joblib.load(model), path)
    binding = resolve_binding(props("model.skops", sha(path), "eval.csv"), root, roots=parse_roots(str(root), []))
    assert load_verified_pipeline(binding).predict_proba(pd.DataFrame({"x": [0.2]})).shape == (1, 2)


def test_a_skops_file_with_types_not_trusted_is_refused_until_listed(
    world: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _, data = world
    frame = pd.read_csv(data)
    path = root / "boosted.skops"
    _dump_skops(HistGradientBoostingClassifier(max_iter=3).fit(frame[["x"]], frame["y"]), path)
    binding = resolve_binding(props("boosted.skops", sha(path), "eval.csv"), root, roots=parse_roots(str(root), []))
    with pytest.raises(BindingError) as caught:
        load_verified_pipeline(binding)
    assert caught.value.code == "untrusted_types" and "TreePredictor" in str(caught.value)
    monkeypatch.setenv("PROVENANCE_SKOPS_TRUSTED", "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor")
    assert load_verified_pipeline(binding).predict_proba(frame[["x"]]).shape == (40, 2)


# --- the registry vouches ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_registry_hash_overrules_the_catalog(
    real_world_copy: RealWorld, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    world = real_world_copy
    champion = world.champion
    monkeypatch.setenv("MLFLOW_TRACKING_URI", world.mlflow_uri)
    monkeypatch.chdir(tmp_path)
    true = sha(champion.artifact_path)
    mlflow_client(world).set_model_version_tag(champion.name, champion.version, ARTIFACT_SHA256, true)
    data = tmp_path / "data" / "holdout.csv"
    data.parent.mkdir()
    data.write_bytes(world.holdout_csv.read_bytes())
    roots = parse_roots(str(data.parent), [])  # the MLflow store's folder is not a root
    assert not champion.artifact_path.is_relative_to(data.parent)
    keys = {MLFLOW_MODEL: champion.name, MLFLOW_VERSION: champion.version}
    artifact = str(champion.artifact_path)
    # the registry vouches for its own version's files, outside the roots
    binding = resolve_binding(props(artifact, true, str(data), **keys), tmp_path, roots=roots)
    assert load_verified_pipeline(binding) is not None
    # a catalog writer points the model at other bytes with their hash: the registry disagrees, nothing is read
    other = tmp_path / "other.joblib"
    joblib.dump({"not": "a model"}, other)
    with pytest.raises(BindingError) as caught:
        resolve_binding(props(artifact, sha(other), str(data), **keys), tmp_path, roots=roots)
    assert caught.value.code == "hash_disagrees" and champion.name in str(caught.value)
    # the evaluation data the version's run logged is vouched for too, where `provenance bind` found it
    logged = resolve_binding(
        props(artifact, true, str(world.holdout_csv), **keys), tmp_path, roots=parse_roots(str(tmp_path / "x"), [])
    )
    assert logged.eval_data_path == world.holdout_csv
    # without the registry's word, the store's folder is just another folder outside the roots
    with pytest.raises(BindingError) as caught:
        resolve_binding(props(artifact, true, str(data)), tmp_path, roots=roots)
    assert caught.value.code == "untrusted_location"
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    with pytest.raises(BindingError) as caught:
        resolve_binding(props(artifact, true, str(data), **keys), tmp_path, roots=roots)
    assert caught.value.code == "untrusted_location" and "set MLFLOW_TRACKING_URI" in str(caught.value)


@pytest.mark.slow
def test_an_unreachable_registry_is_incomplete_not_a_fallback(
    world: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, model, _ = world
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    keys = {MLFLOW_MODEL: "fraud", MLFLOW_VERSION: "1"}
    error = refused(props("model.joblib", sha(model), "eval.csv", **keys), root, str(root))
    assert error.code == "registry_unavailable" and "127.0.0.1:9" in str(error)
