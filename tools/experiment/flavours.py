"""Which file of an MLflow model directory holds the model, by the flavour MLflow saved it with, and loading the
one flavour that is not a pickle.

Three flavours hold a model with the scikit-learn API (`predict_proba` / `predict` on a DataFrame), which is what
the experiment runs:
- `sklearn`: `model.pkl`, pickle or cloudpickle (its `serialization_format`);
- `lightgbm` with an `LGBMClassifier` / `LGBMRegressor`: `model.pkl`, cloudpickle (MLflow's own loader);
- `xgboost` with an `XGBClassifier` / `XGBRegressor` (or their random-forest forms): XGBoost's own format
  (`model.xgb`, `.json`, `.ubj`), loaded the way MLflow loads it — an instance of the recorded class, then
  `load_model` — from the bytes that were hashed, never from the path a second time.
A bare LightGBM or XGBoost `Booster` has no scikit-learn API and is refused, as is any other flavour. The class of an
xgboost model is taken from an allowlist, never imported by the name the file gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from tools.experiment.binding import PICKLE_FORMATS, XGBOOST_FORMAT, BindingError

MLMODEL_FILE = "MLmodel"
LIGHTGBM_CLASSES = ("lightgbm.sklearn.LGBMClassifier", "lightgbm.sklearn.LGBMRegressor")
XGBOOST_CLASSES = (
    "xgboost.sklearn.XGBClassifier",
    "xgboost.sklearn.XGBRegressor",
    "xgboost.sklearn.XGBRFClassifier",
    "xgboost.sklearn.XGBRFRegressor",
)


class ModelFile(BaseModel):
    """The file of an MLflow model directory that holds the model, and how to load it."""

    model_config = ConfigDict(frozen=True)

    path: Path
    serialization_format: str  # pickle | cloudpickle | xgboost
    model_class: str | None = None  # the xgboost flavour's scikit-learn class (one of XGBOOST_CLASSES)
    flavour: str


def model_file(model_dir: Path, uri: str) -> ModelFile:
    """The model file of an MLflow model directory; BindingError("not_a_pipeline") when no flavour holds a model
    with the scikit-learn API."""
    try:
        meta = yaml.safe_load((model_dir / MLMODEL_FILE).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise BindingError("not_a_pipeline", f"{uri}: its {MLMODEL_FILE} file could not be read: {exc}") from exc
    flavours = meta.get("flavors") if isinstance(meta, dict) else None
    flavours = flavours if isinstance(flavours, dict) else {}
    if isinstance(flavours.get("sklearn"), dict):
        return _sklearn(model_dir, uri, flavours["sklearn"])
    if isinstance(flavours.get("lightgbm"), dict):
        return _boosted(model_dir, uri, flavours["lightgbm"], "lightgbm", LIGHTGBM_CLASSES, "cloudpickle")
    if isinstance(flavours.get("xgboost"), dict):
        return _boosted(model_dir, uri, flavours["xgboost"], "xgboost", XGBOOST_CLASSES, XGBOOST_FORMAT)
    names = ", ".join(sorted(flavours)) or "none"
    raise BindingError(
        "not_a_pipeline",
        f"{uri} is an MLflow model without a scikit-learn, xgboost or lightgbm flavour (flavours: {names}); "
        "only models with the scikit-learn API can be tested",
    )


def _sklearn(model_dir: Path, uri: str, flavour: dict[str, Any]) -> ModelFile:
    if not isinstance(flavour.get("pickled_model"), str):
        raise BindingError("not_a_pipeline", f"{uri}: its sklearn flavour names no pickled_model file")
    fmt = str(flavour.get("serialization_format") or "cloudpickle")
    if fmt not in PICKLE_FORMATS:
        raise BindingError(
            "not_a_pipeline", f"{uri}: unknown scikit-learn serialization format {fmt!r} (expected pickle/cloudpickle)"
        )
    return ModelFile(path=model_dir / flavour["pickled_model"], serialization_format=fmt, flavour="sklearn")


def _boosted(
    model_dir: Path, uri: str, flavour: dict[str, Any], name: str, classes: tuple[str, ...], fmt: str
) -> ModelFile:
    model_class = str(flavour.get("model_class") or f"{name}.core.Booster")
    if model_class not in classes:
        short = ", ".join(c.rsplit(".", 1)[1] for c in classes)
        raise BindingError(
            "not_a_pipeline",
            f"{uri} is an MLflow {name} model of class {model_class}, which has no scikit-learn API; log the model "
            f"as one of {short} (mlflow.{name}.log_model) so it can be tested",
        )
    if not isinstance(flavour.get("data"), str):
        raise BindingError("not_a_pipeline", f"{uri}: its {name} flavour names no data file")
    return ModelFile(
        path=model_dir / flavour["data"],
        serialization_format=fmt,
        model_class=model_class if fmt == XGBOOST_FORMAT else None,
        flavour=name,
    )


def load_xgboost(data: bytes, model_class: str | None, where: str) -> Any:
    """An XGBoost scikit-learn model from its own file format's bytes (MLflow's loader: the class, then load_model)."""
    if model_class not in XGBOOST_CLASSES:
        raise BindingError("not_a_pipeline", f"artifact {where}: {model_class!r} is not an XGBoost scikit-learn class")
    try:
        import xgboost
    except ImportError as exc:
        raise BindingError(
            "not_a_pipeline", f"artifact {where} is an XGBoost model and xgboost is not installed; install it"
        ) from exc
    model = getattr(xgboost, model_class.rsplit(".", 1)[1])()
    model.load_model(bytearray(data))
    return model
