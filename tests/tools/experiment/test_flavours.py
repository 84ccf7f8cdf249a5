"""Models MLflow saved with its xgboost and lightgbm flavours (by MLflow itself, not files written to look like
them): found in the model folder, hashed, loaded from the hashed bytes and run as the originals."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import lightgbm
import mlflow.lightgbm
import mlflow.xgboost
import numpy as np
import pandas as pd
import pytest
import xgboost

from tools.catalog.discovery import AffectedFeature, AffectedModel
from tools.experiment.binding import ARTIFACT_SHA256, ARTIFACT_URI, EVAL_DATA_URI, LABEL_COLUMN, BindingError
from tools.experiment.flavours import model_file
from tools.experiment.loading import load_verified_pipeline
from tools.experiment.locate import resolve_binding
from tools.experiment.measure import measure_prepared
from tools.experiment.prepare import PreparedModel, prepare_model
from tools.experiment.runner import BaselineCache
from tools.mutations import parse_mutation


def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    data = pd.DataFrame({"amount": rng.gamma(2.0, 40.0, 400), "age": rng.integers(0, 3000, 400).astype(float)})
    data["fraud"] = ((data["amount"] > 90) ^ (rng.random(400) < 0.1)).astype(int)
    data["minutes"] = data["amount"] / 10 + rng.normal(0, 1, 400)
    return data


def save(folder: Path, flavour: str, model: Any) -> Path:
    saver = {"xgboost": mlflow.xgboost, "lightgbm": mlflow.lightgbm}[flavour]
    saver.save_model(model, str(folder), pip_requirements=[])
    return folder


def binding_properties(folder: Path, data_file: Path, label: str) -> dict[str, str]:
    found = model_file(folder, str(folder))
    digest = hashlib.sha256(found.path.read_bytes()).hexdigest()
    return {ARTIFACT_URI: str(folder), ARTIFACT_SHA256: digest, EVAL_DATA_URI: str(data_file), LABEL_COLUMN: label}


@pytest.mark.parametrize(
    ("flavour", "make", "label"),
    [
        ("xgboost", lambda: xgboost.XGBClassifier(n_estimators=8, max_depth=3), "fraud"),
        ("xgboost", lambda: xgboost.XGBRegressor(n_estimators=8, max_depth=3), "minutes"),
        ("lightgbm", lambda: lightgbm.LGBMClassifier(n_estimators=8, verbose=-1), "fraud"),
        ("lightgbm", lambda: lightgbm.LGBMRegressor(n_estimators=8, verbose=-1), "minutes"),
    ],
    ids=["xgboost-classifier", "xgboost-regressor", "lightgbm-classifier", "lightgbm-regressor"],
)
def test_a_boosted_model_saved_by_mlflow_loads_and_predicts_as_the_original(
    tmp_path: Path, flavour: str, make: Any, label: str
) -> None:
    data = frame()
    features = ["amount", "age"]
    original = make().fit(data[features], data[label])
    data_file = tmp_path / "eval.csv"
    data.to_csv(data_file, index=False)
    folder = save(tmp_path / "model", flavour, original)
    binding = resolve_binding(binding_properties(folder, data_file, label), tmp_path)
    loaded = load_verified_pipeline(binding)
    assert type(loaded) is type(original)
    assert list(loaded.feature_names_in_) == features  # the experiment reads the model's columns by name
    predict = "predict_proba" if label == "fraud" else "predict"
    np.testing.assert_allclose(getattr(loaded, predict)(data[features]), getattr(original, predict)(data[features]))
    if flavour == "xgboost":
        assert (
            binding.serialization_format == "xgboost"
            and binding.model_class == f"xgboost.sklearn.{type(original).__name__}"
        )
        assert not binding.artifact_path.read_bytes().startswith(b"\x80")  # XGBoost's own format, not a pickle


def test_a_tampered_xgboost_file_is_never_loaded(tmp_path: Path) -> None:
    data = frame()
    folder = save(
        tmp_path / "model", "xgboost", xgboost.XGBClassifier(n_estimators=4).fit(data[["amount"]], data["fraud"])
    )
    properties = binding_properties(folder, tmp_path / "eval.csv", "fraud")
    other = xgboost.XGBClassifier(n_estimators=9).fit(data[["amount"]], 1 - data["fraud"])
    other.save_model(str(model_file(folder, str(folder)).path))
    binding = resolve_binding(properties, tmp_path)
    with pytest.raises(BindingError) as caught:
        load_verified_pipeline(binding)
    assert caught.value.code == "hash_mismatch"


@pytest.mark.parametrize("flavour", ["xgboost", "lightgbm"])
def test_a_booster_without_the_scikit_learn_api_is_refused_with_what_to_log(tmp_path: Path, flavour: str) -> None:
    data = frame()
    if flavour == "xgboost":
        booster = xgboost.train({"max_depth": 2}, xgboost.DMatrix(data[["amount"]], label=data["fraud"]), 3)
    else:
        booster = lightgbm.train({"verbose": -1}, lightgbm.Dataset(data[["amount"]], label=data["fraud"]), 3)
    folder = save(tmp_path / "model", flavour, booster)
    with pytest.raises(BindingError) as caught:
        model_file(folder, "runs:/abc/model")
    assert caught.value.code == "not_a_pipeline"
    message = str(caught.value)
    assert "Booster" in message and "no scikit-learn API" in message and f"mlflow.{flavour}.log_model" in message


def test_an_xgboost_class_outside_the_allowlist_is_never_imported(tmp_path: Path) -> None:
    data = frame()
    folder = save(
        tmp_path / "model", "xgboost", xgboost.XGBClassifier(n_estimators=4).fit(data[["amount"]], data["fraud"])
    )
    text = (folder / "MLmodel").read_text().replace("xgboost.sklearn.XGBClassifier", "os.system")
    (folder / "MLmodel").write_text(text)
    with pytest.raises(BindingError, match="os.system, which has no scikit-learn API"):
        model_file(folder, str(folder))


@pytest.mark.parametrize(
    ("flavour", "make", "label", "task"),
    [
        ("xgboost", lambda: xgboost.XGBClassifier(n_estimators=20, max_depth=3), "fraud", "binary"),
        ("lightgbm", lambda: lightgbm.LGBMRegressor(n_estimators=20, verbose=-1), "minutes", "regression"),
    ],
    ids=["xgboost-classifier", "lightgbm-regressor"],
)
def test_the_experiment_measures_a_boosted_model_as_it_measures_a_pipeline(
    tmp_path: Path, flavour: str, make: Any, label: str, task: str
) -> None:
    data = frame()
    features = ["amount", "age"]
    folder = save(tmp_path / "model", flavour, make().fit(data[features], data[label]))
    data_file = tmp_path / "eval.csv"
    data[[*features, label]].to_csv(data_file, index=False)
    feature = AffectedFeature(
        urn="urn:li:mlFeature:(t,amount)", name="amount", dataset_urn="urn:li:dataset:x", column="amount", path=[],
        precision="column",
    )  # fmt: skip
    model = AffectedModel(
        urn=f"urn:li:mlModel:({flavour})", name=flavour, production=True, production_evidence="tag production",
        features=[feature], owners=[], tags=[], related_documents=[],
        custom_properties=binding_properties(folder, data_file, label),
    )  # fmt: skip
    mutation = parse_mutation("scale", {"factor": 100})
    prepared = prepare_model(model, mutation, tmp_path)
    assert isinstance(prepared, PreparedModel), prepared
    evidence = measure_prepared(prepared, mutation, BaselineCache()).evidence
    assert evidence.metrics is not None and evidence.metrics.task == task
    metrics = evidence.metrics
    assert metrics.n == len(data) and metrics.failures == 0
    # dollars to cents moves most predictions of a model that splits on amount
    moved = metrics.flip_rate if metrics.regression is None else metrics.regression.moved_share
    assert moved is not None and moved > 0.3
