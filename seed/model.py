"""Train the three demo production models and write them, with their evaluation splits, to disk.

The artifacts are content-addressed downstream (sha256 in the catalog and in evidence reports), so
every byte must be a pure function of the seed: no timestamps, no paths and no unseeded randomness
end up in the pickles or the CSV.

* ``fraud_detector`` standard-scales raw ``txn_amount`` (no log), so a dollars -> cents change is a
  real, measurable regression rather than a rank-preserving shift; its imputers absorb injected nulls.
* ``merchant_risk`` is the control: it never reads an amount-derived feature and deliberately has no
  imputer, so nulls in ``account_age_days`` make inference fail instead of silently degrading.
* ``review_time`` is a regressor downstream of the same amount (``seed/review.py``): the demo's second task. It is
  evaluated on the same rows as the fraud models, in its own file with its own label.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import IO, Final

import joblib
import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import mean_absolute_error, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from seed.data import (
    DEFAULT_ROWS,
    DEFAULT_SEED,
    FEATURE_COLUMNS,
    LABEL_COLUMN,
    generate_transactions,
    to_feature_frame,
)
from seed.review import (
    REVIEW_EVAL_FILENAME,
    REVIEW_FEATURES,
    REVIEW_LABEL,
    REVIEW_TIME,
    build_review_time,
    review_minutes,
)
from tools import atomic

FRAUD_DETECTOR: Final[str] = "fraud_detector"
MERCHANT_RISK: Final[str] = "merchant_risk"
EVAL_FILENAME: Final[str] = "fraud_eval.csv"
DECISION_THRESHOLD: Final[float] = 0.5
EVAL_FRACTION: Final[float] = 0.3

_FRAUD_NUMERIC: Final[list[str]] = ["txn_amount", "hour", "account_age_days", "txn_count_1h"]
_CATEGORICAL: Final[list[str]] = ["merchant_category", "country"]
_RISK_NUMERIC: Final[list[str]] = ["hour", "account_age_days"]
MODEL_FEATURES: Final[dict[str, list[str]]] = {
    FRAUD_DETECTOR: [*_FRAUD_NUMERIC, *_CATEGORICAL],
    MERCHANT_RISK: [*_CATEGORICAL, *_RISK_NUMERIC],
    REVIEW_TIME: list(REVIEW_FEATURES),
}


class ModelArtifact(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    artifact_path: Path
    artifact_sha256: str
    features: list[str]
    eval_auc: float | None = None  # classifiers: ROC AUC on the evaluation split
    eval_mae: float | None = None  # regressors: mean absolute error on the evaluation split (label units)


class DemoArtifacts(BaseModel):
    model_config = ConfigDict(frozen=True)

    out_dir: Path
    fraud_detector: ModelArtifact
    merchant_risk: ModelArtifact
    eval_data_path: Path
    eval_data_sha256: str
    label_column: str = LABEL_COLUMN
    review_time: ModelArtifact
    review_eval_path: Path  # the same rows as eval_data_path, with the review time label
    review_eval_sha256: str
    review_label_column: str = REVIEW_LABEL

    @property
    def models(self) -> dict[str, ModelArtifact]:
        return {FRAUD_DETECTOR: self.fraud_detector, MERCHANT_RISK: self.merchant_risk, REVIEW_TIME: self.review_time}


def _classifier(seed: int) -> LogisticRegression:
    # Linear on purpose: a later benchmark compares experiment overhead with raw predict_proba at 1M rows.
    return LogisticRegression(class_weight="balanced", max_iter=2_000, random_state=seed)


def build_fraud_detector(seed: int) -> Pipeline:
    numeric = Pipeline([("impute", SimpleImputer(strategy="median")), ("scale", StandardScaler())])
    categorical = Pipeline(
        [
            ("impute", SimpleImputer(strategy="most_frequent")),
            ("onehot", OneHotEncoder(handle_unknown="ignore")),
        ]
    )
    features = ColumnTransformer([("num", numeric, _FRAUD_NUMERIC), ("cat", categorical, _CATEGORICAL)])
    return Pipeline([("features", features), ("classifier", _classifier(seed))])


def build_merchant_risk(seed: int) -> Pipeline:
    # No SimpleImputer anywhere: StandardScaler passes NaN through and LogisticRegression rejects it.
    features = ColumnTransformer(
        [
            ("num", StandardScaler(), _RISK_NUMERIC),
            ("cat", OneHotEncoder(handle_unknown="ignore"), _CATEGORICAL),
        ]
    )
    return Pipeline([("features", features), ("classifier", _classifier(seed))])


def eval_csv_bytes(frame: pd.DataFrame, label: str = LABEL_COLUMN) -> bytes:
    """Serialise with fixed formatting so the bytes depend only on the values, not on the platform."""
    columns = [*FEATURE_COLUMNS, label]
    text = frame[columns].to_csv(index=False, float_format="%.2f", lineterminator="\n")
    return str(text).encode("utf-8")


def read_eval_frame(source: Path | IO[bytes]) -> pd.DataFrame:
    """Load the evaluation split with the same dtypes the models were trained on."""
    return pd.read_csv(source, dtype={"merchant_category": str, "country": str})


def _model_bytes(model: Pipeline) -> bytes:
    buffer = io.BytesIO()
    joblib.dump(model, buffer)
    return buffer.getvalue()


def _write_if_changed(path: Path, content: bytes) -> str:
    """Write atomically and only when needed, so re-seeding never disturbs readers of an equal file."""
    if not (path.is_file() and path.read_bytes() == content):
        # SHARED: the usual umask-derived mode (other tools read these files), not the private 0600.
        atomic.write_atomically(path, content, mode=atomic.SHARED)
    return hashlib.sha256(content).hexdigest()


def _auc(model: Pipeline, frame: pd.DataFrame, features: list[str]) -> float:
    scores = model.predict_proba(frame[features])[:, 1]
    return float(roc_auc_score(frame[LABEL_COLUMN].to_numpy(), scores))


def train_demo_models(out_dir: Path, seed: int = DEFAULT_SEED, n_rows: int = DEFAULT_ROWS) -> DemoArtifacts:
    """Generate data, fit the three models and write byte-reproducible artifacts into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = to_feature_frame(generate_transactions(n_rows=n_rows, seed=seed))
    frame[REVIEW_LABEL] = review_minutes(frame, seed)  # the regressor's label; the fraud files never hold it
    train, evaluation = train_test_split(
        frame, test_size=EVAL_FRACTION, stratify=frame[LABEL_COLUMN], random_state=seed % 2**32
    )
    csv_bytes = eval_csv_bytes(evaluation)
    eval_path = out_dir / EVAL_FILENAME
    eval_sha = _write_if_changed(eval_path, csv_bytes)
    # Score on the frame as downstream readers will see it (parsed back from the CSV bytes).
    eval_frame = read_eval_frame(io.BytesIO(csv_bytes))

    artifacts: dict[str, ModelArtifact] = {}
    builders = {FRAUD_DETECTOR: build_fraud_detector, MERCHANT_RISK: build_merchant_risk}
    for name, build in builders.items():
        features = MODEL_FEATURES[name]
        model = build(seed)
        model.fit(train[features], train[LABEL_COLUMN].to_numpy(dtype=np.int64))
        path = out_dir / f"{name}.joblib"
        artifacts[name] = ModelArtifact(
            name=name,
            artifact_path=path,
            artifact_sha256=_write_if_changed(path, _model_bytes(model)),
            features=list(features),
            eval_auc=_auc(model, eval_frame, features),
        )

    review, review_path, review_sha = _train_review_time(out_dir, train, evaluation, seed)
    return DemoArtifacts(
        out_dir=out_dir,
        fraud_detector=artifacts[FRAUD_DETECTOR],
        merchant_risk=artifacts[MERCHANT_RISK],
        eval_data_path=eval_path,
        eval_data_sha256=eval_sha,
        label_column=LABEL_COLUMN,
        review_time=review,
        review_eval_path=review_path,
        review_eval_sha256=review_sha,
        review_label_column=REVIEW_LABEL,
    )


def _train_review_time(
    out_dir: Path, train: pd.DataFrame, evaluation: pd.DataFrame, seed: int
) -> tuple[ModelArtifact, Path, str]:
    """Fit the review-time regressor on the fraud models' training rows; its evaluation file holds the same
    evaluation rows with the review time label."""
    csv_bytes = eval_csv_bytes(evaluation, label=REVIEW_LABEL)
    eval_path = out_dir / REVIEW_EVAL_FILENAME
    eval_sha = _write_if_changed(eval_path, csv_bytes)
    evaluation = read_eval_frame(io.BytesIO(csv_bytes))  # as downstream readers will see it
    model = build_review_time(seed)
    model.fit(train[REVIEW_FEATURES], train[REVIEW_LABEL].to_numpy(dtype=np.float64))
    path = out_dir / f"{REVIEW_TIME}.joblib"
    predicted = model.predict(evaluation[REVIEW_FEATURES])
    artifact = ModelArtifact(
        name=REVIEW_TIME,
        artifact_path=path,
        artifact_sha256=_write_if_changed(path, _model_bytes(model)),
        features=list(REVIEW_FEATURES),
        eval_mae=float(mean_absolute_error(evaluation[REVIEW_LABEL].to_numpy(), predicted)),
    )
    return artifact, eval_path, eval_sha
