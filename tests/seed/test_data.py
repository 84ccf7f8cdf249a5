"""The demo's claims rest on the label really depending on amount, category and country."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from seed.data import FEATURE_COLUMNS, LABEL_COLUMN, generate_transactions, to_feature_frame

EXPECTED_COLUMNS = [
    "transaction_id",
    "amount",
    "merchant_category",
    "country",
    "hour",
    "account_age_days",
    "txn_count_1h",
    "is_fraud",
]


@pytest.fixture(scope="module")
def transactions() -> pd.DataFrame:
    return generate_transactions()


def test_columns_and_dtypes(transactions: pd.DataFrame) -> None:
    assert list(transactions.columns) == EXPECTED_COLUMNS
    for column in ("transaction_id", "merchant_category", "country"):
        assert pd.api.types.is_string_dtype(transactions[column]), column
    assert pd.api.types.is_float_dtype(transactions["amount"])
    for column in ("hour", "account_age_days", "txn_count_1h", "is_fraud"):
        assert pd.api.types.is_integer_dtype(transactions[column]), column
    assert not transactions.isna().any().any()


def test_default_row_count_and_ids(transactions: pd.DataFrame) -> None:
    assert len(transactions) >= 20_000
    assert transactions["transaction_id"].is_unique
    assert transactions["transaction_id"].iloc[0] == "t000001"
    assert transactions["transaction_id"].str.fullmatch(r"t\d{6}").all()
    assert len(generate_transactions(n_rows=500)) == 500


def test_value_ranges(transactions: pd.DataFrame) -> None:
    amount = transactions["amount"]
    assert (amount > 0).all()
    assert np.array_equal(amount.to_numpy(), amount.round(2).to_numpy()), "amounts must be whole cents"
    assert 25 <= amount.median() <= 60
    assert amount.max() >= 1_000, "expected a long tail"
    assert transactions["hour"].between(0, 23).all()
    assert (transactions["account_age_days"] >= 0).all()
    assert (transactions["txn_count_1h"] >= 0).all()
    assert set(transactions["is_fraud"].unique()) == {0, 1}
    assert transactions["country"].str.fullmatch(r"[A-Z]{2}").all()
    assert transactions["merchant_category"].nunique() >= 6


def test_fraud_rate(transactions: pd.DataFrame) -> None:
    assert 0.03 <= transactions["is_fraud"].mean() <= 0.12


def test_label_depends_on_amount(transactions: pd.DataFrame) -> None:
    decile = pd.qcut(transactions["amount"], 10, labels=False)
    rates = transactions.groupby(decile)["is_fraud"].mean().to_numpy()
    assert rates[-1] >= 2 * rates[0]
    # Monotone-ish: rank correlation between decile and fraud rate close to 1.
    assert pd.Series(rates).corr(pd.Series(np.arange(10)), method="spearman") >= 0.9


def test_label_depends_on_category_and_country(transactions: pd.DataFrame) -> None:
    by_category = transactions.groupby("merchant_category")["is_fraud"].mean()
    assert by_category.max() >= 3 * by_category.min()
    assert by_category["jewelry"] > by_category["grocery"]
    by_country = transactions.groupby("country")["is_fraud"].mean()
    assert by_country.max() >= 2 * by_country.min()
    assert by_country["NG"] > by_country["US"]


def test_same_seed_same_frame_other_seed_differs() -> None:
    pd.testing.assert_frame_equal(generate_transactions(n_rows=2_000), generate_transactions(n_rows=2_000))
    other = generate_transactions(n_rows=2_000, seed=7)
    assert not other.equals(generate_transactions(n_rows=2_000))


def test_to_feature_frame_mirrors_feature_view(transactions: pd.DataFrame) -> None:
    features = to_feature_frame(transactions)
    assert list(features.columns) == [*FEATURE_COLUMNS, LABEL_COLUMN]
    assert np.array_equal(features["txn_amount"].to_numpy(), transactions["amount"].to_numpy())
    assert "amount" in transactions.columns, "must not mutate its input"


def test_rejects_non_positive_rows() -> None:
    with pytest.raises(ValueError):
        generate_transactions(n_rows=0)
