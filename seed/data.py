"""Synthetic card transactions for the demo.

The fraud label is drawn from a known logistic model so that the demo's claims are checkable:
the label really depends on ``amount`` (so a dollars -> cents change must hurt), on
``merchant_category`` and ``country`` (so renamed categories matter), and more weakly on night
hours, young accounts and bursts of transactions. A latent noise term keeps even a perfect model
well below AUC 1.0, which makes degradation measurable rather than a cliff from perfection.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

DEFAULT_SEED: Final[int] = 20261202
DEFAULT_ROWS: Final[int] = 24_000

# The Feast feature view exposes ``amount`` as ``txn_amount``; models are trained on that name.
FEATURE_COLUMNS: Final[list[str]] = [
    "txn_amount",
    "merchant_category",
    "country",
    "hour",
    "account_age_days",
    "txn_count_1h",
]
LABEL_COLUMN: Final[str] = "is_fraud"
_SOURCE_TO_FEATURE: Final[dict[str, str]] = {"amount": "txn_amount"}

# category -> (sampling weight, median amount in dollars, fraud log-odds shift)
_CATEGORIES: Final[dict[str, tuple[float, float, float]]] = {
    "grocery": (0.25, 35.0, -1.2),
    "restaurants": (0.20, 30.0, -0.8),
    "fuel": (0.13, 45.0, -0.4),
    "travel": (0.08, 140.0, 0.4),
    "electronics": (0.10, 90.0, 0.8),
    "gaming": (0.08, 25.0, 1.1),
    "digital_goods": (0.10, 15.0, 1.3),
    "jewelry": (0.06, 120.0, 1.5),
}
# country -> (sampling weight, fraud log-odds shift)
_COUNTRIES: Final[dict[str, tuple[float, float]]] = {
    "US": (0.40, 0.0),
    "GB": (0.12, 0.1),
    "DE": (0.10, -0.2),
    "FR": (0.09, 0.0),
    "CA": (0.09, -0.1),
    "BR": (0.08, 0.9),
    "IN": (0.07, 0.7),
    "NG": (0.05, 1.6),
}
# Shoppers are mostly awake: fewer transactions at night, which is also when fraud concentrates.
_HOUR_WEIGHTS: Final[np.ndarray] = np.array(
    [2, 1.5, 1, 1, 1, 1.5, 3, 5, 6, 7, 7, 8, 9, 8, 7, 7, 7, 8, 9, 9, 8, 6, 4, 3], dtype=float
)

_INTERCEPT: Final[float] = -4.5
_AMOUNT_COEF: Final[float] = 1.4  # per unit of log(amount / 40)
_NIGHT_COEF: Final[float] = 0.6
_YOUNG_ACCOUNT_COEF: Final[float] = 1.0  # decays with account age (scale 45 days)
_BURST_COEF: Final[float] = 0.3  # per transaction in the last hour
_LATENT_NOISE_SD: Final[float] = 0.5


def _normalised(weights: list[float] | np.ndarray) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    normalised: np.ndarray = w / w.sum()  # typed: numpy 2.4's stubs (Python 3.11) make this Any
    return normalised


def generate_transactions(n_rows: int = DEFAULT_ROWS, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Return ``n_rows`` synthetic transactions; the same seed always yields an identical frame."""
    if n_rows <= 0:
        raise ValueError(f"n_rows must be positive, got {n_rows}")
    rng = np.random.default_rng(seed)

    cat_names = list(_CATEGORIES)
    cat_weights = _normalised([v[0] for v in _CATEGORIES.values()])
    cat_idx = rng.choice(len(cat_names), size=n_rows, p=cat_weights)
    cat_median = np.array([v[1] for v in _CATEGORIES.values()])[cat_idx]
    cat_shift = np.array([v[2] for v in _CATEGORIES.values()])[cat_idx]

    country_names = list(_COUNTRIES)
    country_weights = _normalised([v[0] for v in _COUNTRIES.values()])
    country_idx = rng.choice(len(country_names), size=n_rows, p=country_weights)
    country_shift = np.array([v[1] for v in _COUNTRIES.values()])[country_idx]

    amount = np.round(np.clip(cat_median * rng.lognormal(0.0, 0.9, size=n_rows), 0.5, 9_999.0), 2)
    hour = rng.choice(24, size=n_rows, p=_normalised(_HOUR_WEIGHTS))
    # Mixture: a minority of brand-new accounts plus an established population.
    young = rng.random(n_rows) < 0.12
    account_age_days = np.where(
        young, rng.integers(0, 30, size=n_rows), rng.exponential(900.0, size=n_rows).astype(np.int64) + 30
    )
    txn_count_1h = rng.poisson(0.7, size=n_rows)

    logit = (
        _INTERCEPT
        + _AMOUNT_COEF * np.log(amount / 40.0)
        + cat_shift
        + country_shift
        + _NIGHT_COEF * (hour < 6)
        + _YOUNG_ACCOUNT_COEF * np.exp(-account_age_days / 45.0)
        + _BURST_COEF * txn_count_1h
        + rng.normal(0.0, _LATENT_NOISE_SD, size=n_rows)
    )
    is_fraud = (rng.random(n_rows) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)

    return pd.DataFrame(
        {
            "transaction_id": [f"t{i:06d}" for i in range(1, n_rows + 1)],
            "amount": amount.astype(np.float64),
            "merchant_category": np.array(cat_names, dtype=object)[cat_idx],
            "country": np.array(country_names, dtype=object)[country_idx],
            "hour": hour.astype(np.int64),
            "account_age_days": account_age_days.astype(np.int64),
            "txn_count_1h": txn_count_1h.astype(np.int64),
            LABEL_COLUMN: is_fraud,
        }
    )


def to_feature_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Mirror the Feast feature view: rename source columns and keep only model inputs plus label."""
    return df.rename(columns=_SOURCE_TO_FEATURE)[[*FEATURE_COLUMNS, LABEL_COLUMN]].copy()
