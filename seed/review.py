"""The demo's second production model downstream of `amount`, of another task: a regressor that predicts how many
minutes a manual review of the transaction takes (`review_time_estimator`).

The review time is drawn from a known formula, so the demo's claims are checkable: it grows with the logarithm of
the amount (large payments get more scrutiny, saturating near the top), with the merchant category, and with bursts
of transactions on the account, plus noise. The model is a gradient-boosted tree ensemble on the raw `txn_amount`
(single-threaded, so its bytes are a pure function of the seed), so amounts sent in cents land beyond every split
it learnt and its predictions jump to the largest-amount leaves: a real regression of its error, not a rescaling.

The labels use their own random stream (derived from the seed), so adding this model changed no byte of the fraud
data, models or evaluation file.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

REVIEW_TIME: Final[str] = "review_time"
REVIEW_LABEL: Final[str] = "review_minutes"
REVIEW_EVAL_FILENAME: Final[str] = "review_eval.csv"
REVIEW_FEATURES: Final[list[str]] = ["txn_amount", "merchant_category", "txn_count_1h"]

_BASE_MINUTES: Final[float] = 2.0
_AMOUNT_MINUTES: Final[float] = 3.0  # per unit of log(1 + amount / 20)
_BURST_MINUTES: Final[float] = 0.8  # per transaction in the previous hour
_NOISE_SD: Final[float] = 1.0
# Categories whose payments reviewers check more carefully (extra minutes); the others add nothing.
_CATEGORY_MINUTES: Final[dict[str, float]] = {"travel": 2.0, "electronics": 1.5, "jewelry": 3.0, "digital_goods": 1.0}
_STREAM: Final[int] = 1  # child stream of the data seed reserved for the review times


def review_minutes(features: pd.DataFrame, seed: int) -> np.ndarray:
    """Review time in minutes (2 decimals, at least 0.5) for each row of the feature frame."""
    rng = np.random.default_rng([seed, _STREAM])
    category = features["merchant_category"].map(_CATEGORY_MINUTES).fillna(0.0).to_numpy(dtype=np.float64)
    minutes = (
        _BASE_MINUTES
        + _AMOUNT_MINUTES * np.log1p(features["txn_amount"].to_numpy(dtype=np.float64) / 20.0)
        + category
        + _BURST_MINUTES * features["txn_count_1h"].to_numpy(dtype=np.float64)
        + rng.normal(0.0, _NOISE_SD, size=len(features))
    )
    return np.round(np.maximum(minutes, 0.5), 2)


def build_review_time(seed: int) -> Pipeline:
    features = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), ["merchant_category"]),
            ("num", "passthrough", ["txn_amount", "txn_count_1h"]),
        ]
    )
    regressor = GradientBoostingRegressor(n_estimators=150, max_depth=3, learning_rate=0.1, random_state=seed)
    return Pipeline([("features", features), ("regressor", regressor)])
