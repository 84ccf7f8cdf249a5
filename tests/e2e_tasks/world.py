"""A small shop world for the task end-to-end tests: one Postgres table of orders, a Feast feature view over it
(identity column lineage), and five production models of three tasks and three libraries, registered in a DataHub
Lite file the embedded catalog serves, bound to joblib artifacts and one labelled evaluation CSV.

- ``returns_xgb``: XGBoost binary classifier (will the order be returned?) on order_value, items;
- ``margin_lgbm``: LightGBM regressor of the basket margin on order_value, items;
- ``margin_lgbm_misbound``: the same artifact bound with ``provenance.task=binary`` (a binding mistake);
- ``route_classifier``: scikit-learn multiclass classifier (fulfilment route: standard / express / manual) on
  region, channel, items; the route follows the channel, so an unseen channel value loses it;
- ``churn_scorer``: scikit-learn binary classifier on items, region, loyalty_points. Loyalty points exist only in
  the north region (8 % of orders) and move the churn odds there, so scaling them flips decisions in the north
  and nowhere else: the segment test.

Everything is a pure function of the seed; 6,000 training rows, 4,000 evaluation rows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datahub.metadata.schema_classes as m
import joblib
import lightgbm as lgb
import numpy as np
import pandas as pd
import xgboost as xgb
from datahub.metadata.urns import CorpGroupUrn, DatasetUrn, MlFeatureTableUrn, MlFeatureUrn, MlModelGroupUrn, MlModelUrn
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from seed.catalog import write_to_lite
from seed.catalog_builders import (
    Column,
    feature_table_mcps,
    mcps_for,
    ml_model_group_mcps,
    ml_model_mcps,
    ownership,
    schema_metadata,
    upstream_lineage,
)

SEED = 1515
TRAIN_ROWS, EVAL_ROWS = 6_000, 4_000
TABLE_URN = str(DatasetUrn("postgres", "shop.public.orders", "PROD"))
FEATURE_DATASET_URN = str(DatasetUrn("feast", "shop_features.order_features", "PROD"))
FEATURE_TABLE_URN = str(MlFeatureTableUrn("feast", "order_features"))
FEATURE_NAMESPACE = "shop_features.order_features"
GROUP_URN = str(MlModelGroupUrn("mlflow", "shop_models", "PROD"))
TEAM_URN = str(CorpGroupUrn("shop-ml"))
EVAL_FILE = "data/orders_eval.csv"
REGIONS = {"north": 0.08, "south": 0.30, "east": 0.31, "west": 0.31}
CHANNELS = {"web": 0.4, "app": 0.3, "store": 0.2, "phone": 0.1}
# (column, kind, Postgres type); every column reaches a feature of the same name.
COLUMNS = (
    ("order_value", "number", "numeric(12,2)"),
    ("items", "number", "integer"),
    ("region", "string", "varchar(16)"),
    ("channel", "string", "varchar(16)"),
    ("loyalty_points", "number", "numeric(6,2)"),
)


@dataclass(frozen=True)
class ShopModel:
    name: str
    features: tuple[str, ...]
    label: str
    task_key: str | None = None  # provenance.task, when the binding names it
    artifact: str = ""  # defaults to the model's own name

    @property
    def urn(self) -> str:
        return str(MlModelUrn("mlflow", self.name, "PROD"))


MODELS = {
    model.name: model
    for model in (
        ShopModel("returns_xgb", ("order_value", "items"), "returned"),
        ShopModel("margin_lgbm", ("order_value", "items"), "basket_margin"),
        ShopModel("margin_lgbm_misbound", ("order_value", "items"), "basket_margin", "binary", "margin_lgbm"),
        ShopModel("route_classifier", ("region", "channel", "items"), "route"),
        ShopModel("churn_scorer", ("items", "region", "loyalty_points"), "churned"),
    )
}


def orders(rows: int, seed: int) -> pd.DataFrame:
    """Orders with every model's label; amounts and points in whole cents."""
    rng = np.random.default_rng(seed)
    region = rng.choice(list(REGIONS), size=rows, p=list(REGIONS.values()))
    channel = rng.choice(list(CHANNELS), size=rows, p=list(CHANNELS.values()))
    order_value = np.round(np.clip(50 * rng.lognormal(0, 0.7, size=rows), 1, 5_000), 2)
    items = rng.poisson(2.0, size=rows) + 1
    loyalty = np.where(region == "north", np.round(rng.uniform(0, 2, size=rows), 2), 0.0)
    returned_logit = -1 + 1.2 * np.log(order_value / 50) + 0.3 * (items - 3) + rng.normal(0, 0.5, rows)
    margin = np.round(0.2 * order_value + 2 * items + rng.normal(0, 2, rows), 2)
    by_channel = np.select([channel == "phone", channel == "app"], ["manual", "express"], "standard")
    route = np.where(rng.random(rows) < 0.1, rng.choice(["manual", "express", "standard"], size=rows), by_channel)
    churn_logit = -0.8 + 0.6 * (items - 3) + 0.8 * loyalty + rng.normal(0, 0.3, rows)
    return pd.DataFrame(
        {
            "order_value": order_value,
            "items": items,
            "region": region,
            "channel": channel,
            "loyalty_points": loyalty,
            "returned": (rng.random(rows) < 1 / (1 + np.exp(-returned_logit))).astype(int),
            "basket_margin": margin,
            "route": route,
            "churned": (rng.random(rows) < 1 / (1 + np.exp(-churn_logit))).astype(int),
        }
    )


def _encoded(categorical: list[str], numeric: list[str], estimator: Any) -> Pipeline:
    columns = ColumnTransformer(
        [("cat", OneHotEncoder(handle_unknown="ignore"), categorical), ("num", StandardScaler(), numeric)]
    )
    return Pipeline([("features", columns), ("model", estimator)])


def fit_models(train: pd.DataFrame) -> dict[str, Any]:
    """The four artifacts (the misbound model reuses margin_lgbm's), fitted on DataFrames (feature_names_in_)."""
    fitted: dict[str, Any] = {
        "returns_xgb": xgb.XGBClassifier(n_estimators=60, max_depth=3, learning_rate=0.2, random_state=0, n_jobs=1),
        "margin_lgbm": lgb.LGBMRegressor(n_estimators=60, num_leaves=15, random_state=0, n_jobs=1, verbose=-1),
        "route_classifier": _encoded(["region", "channel"], ["items"], LogisticRegression(max_iter=1_000)),
        "churn_scorer": _encoded(["region"], ["items", "loyalty_points"], LogisticRegression(max_iter=1_000)),
    }
    for name, model in fitted.items():
        spec = MODELS[name]
        model.fit(train[list(spec.features)], train[spec.label])
    return fitted


def _catalog(bindings: dict[str, dict[str, str]]) -> list[Any]:
    columns = [Column(name, kind, native) for name, kind, native in COLUMNS]  # type: ignore[arg-type]
    feature_urn = {name: str(MlFeatureUrn(FEATURE_NAMESPACE, name)) for name, _, _ in COLUMNS}
    team = ownership((TEAM_URN, m.OwnershipTypeClass.TECHNICAL_OWNER))
    kinds = {"number": m.MLFeatureDataTypeClass.CONTINUOUS, "string": m.MLFeatureDataTypeClass.NOMINAL}
    return [
        *mcps_for(TABLE_URN, schema_metadata("postgres", "shop.public.orders", columns), team),
        *mcps_for(
            FEATURE_DATASET_URN,
            schema_metadata("feast", FEATURE_NAMESPACE, columns),
            upstream_lineage(TABLE_URN, FEATURE_DATASET_URN, [(name, name) for name, _, _ in COLUMNS]),
        ),
        *feature_table_mcps(
            FEATURE_TABLE_URN,
            FEATURE_DATASET_URN,
            [(feature_urn[name], kinds[kind], name) for name, kind, _ in COLUMNS],
            description="Feast feature view over shop.public.orders",
            owners=team,
        ),
        *ml_model_group_mcps(GROUP_URN, "Shop models", team),
        *(
            mcp
            for spec in MODELS.values()
            for mcp in ml_model_mcps(
                spec.urn,
                description=f"{spec.name} (task end-to-end world)",
                model_type="pipeline",
                tags=["production"],
                features=[feature_urn[name] for name in spec.features],
                group=GROUP_URN,
                custom_properties=bindings[spec.name],
                owners=team,
            )
        ),
    ]


@dataclass(frozen=True)
class ShopWorld:
    home: Path  # PROVENANCE_HOME: catalog.db, models/, data/
    eval_frame: pd.DataFrame
    models: dict[str, Any]  # artifact name -> the fitted model (as pickled)


def build_world(home: Path) -> ShopWorld:
    frame = orders(TRAIN_ROWS + EVAL_ROWS, SEED)
    train, evaluation = frame.iloc[:TRAIN_ROWS], frame.iloc[TRAIN_ROWS:].reset_index(drop=True)
    (home / "models").mkdir(parents=True, exist_ok=True)
    (home / "data").mkdir(parents=True, exist_ok=True)
    evaluation.to_csv(home / EVAL_FILE, index=False, float_format="%.2f")
    fitted = fit_models(train)
    digests = {}
    for name, model in fitted.items():
        path = home / "models" / f"{name}.joblib"
        joblib.dump(model, path)
        digests[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    bindings = {}
    for spec in MODELS.values():
        artifact = spec.artifact or spec.name
        bindings[spec.name] = {
            "provenance.artifact_uri": f"models/{artifact}.joblib",
            "provenance.artifact_sha256": digests[artifact],
            "provenance.eval_data_uri": EVAL_FILE,
            "provenance.label_column": spec.label,
            **({"provenance.task": spec.task_key} if spec.task_key else {}),
        }
    write_to_lite(_catalog(bindings), home / "catalog.db")
    return ShopWorld(home, pd.read_csv(home / EVAL_FILE), fitted)
