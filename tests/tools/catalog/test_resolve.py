"""Names a person typed, resolved through the demo catalog: a misspelled table, dataset URN or model gets a
did-you-mean by edit distance (search matches whole words, so a typo finds nothing to rank), and a bare field
name's hint names a dataset that has that field."""

from __future__ import annotations

import pytest

from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN
from tests.shared_catalog import SharedCatalog
from tools.catalog.resolve import (
    CatalogInputError,
    read_as,
    require_dataset,
    require_field,
    resolve_field,
    resolve_model,
)


def _error(catalog: SharedCatalog, resolve: object) -> str:
    with pytest.raises(CatalogInputError) as caught:
        catalog.run(resolve)  # type: ignore[arg-type]
    return str(caught.value)


def test_a_misspelled_table_gets_a_did_you_mean(shared_catalog: SharedCatalog) -> None:
    message = _error(shared_catalog, lambda r: resolve_field(r, "payments.public.transactoins.amount"))
    assert "no dataset in the catalog matches 'payments.public.transactoins'" in message
    assert "did you mean payments.public.transactions.amount" in message


def test_a_misspelled_dataset_urn_lists_the_closest_datasets(shared_catalog: SharedCatalog) -> None:
    typo = POSTGRES_TABLE_URN.replace("transactions", "transactoins")
    message = _error(shared_catalog, lambda r: require_dataset(r, typo))
    assert (
        message.endswith(f"Closest matches: {POSTGRES_TABLE_URN}")
        or f"Closest matches: {POSTGRES_TABLE_URN}," in message
    )


def test_a_misspelled_model_gets_a_did_you_mean(shared_catalog: SharedCatalog) -> None:
    assert shared_catalog.run(lambda r: resolve_model(r, "fraud_detector")) == FRAUD_MODEL_URN
    message = _error(shared_catalog, lambda r: resolve_model(r, "fraud_detecotr"))
    assert message.startswith("no model named 'fraud_detecotr'; did you mean fraud_detector")


def test_a_bare_field_hint_names_a_dataset_that_has_it(shared_catalog: SharedCatalog) -> None:
    message = _error(shared_catalog, lambda r: resolve_field(r, "account_age_days"))
    listed = message.split("(", 1)[1].split(")")[0].split(", ")
    assert "'account_age_days' alone is ambiguous" in message and len(listed) >= 2
    example = message.split("e.g. '")[1].rstrip("'")
    assert example == listed[0] and example.endswith(".account_age_days")
    assert "payments.public.transactions.amount" not in message  # the old fixed hint, whatever the field


def test_a_bare_field_no_dataset_has_says_so(shared_catalog: SharedCatalog) -> None:
    message = _error(shared_catalog, lambda r: resolve_field(r, "no_such_column"))
    assert message == (
        "no dataset found for the field 'no_such_column'; name its dataset too, e.g. 'schema.table.no_such_column'"
    )


def test_a_table_that_is_not_there_is_asked_about_never_substituted(shared_catalog: SharedCatalog) -> None:
    """`billing.transactions` is no table of this catalog; answering about payments.public.transactions
    would test (and might publish) a verdict about another table."""
    message = _error(shared_catalog, lambda r: resolve_field(r, "billing.transactions.amount"))
    assert "no dataset named 'billing.transactions'" in message
    assert "did you mean payments.public.transactions.amount" in message


@pytest.mark.parametrize(
    "subject",
    [
        "payments.public.transactions.amount",
        "PAYMENTS.Public.Transactions.amount",
        "public.transactions.amount",
        "transactions.amount",
        "payments.transactions.amount",  # database.table: PostgreSQL's default schema left out
    ],
)
def test_a_name_resolves_when_it_is_the_table_or_its_tail(shared_catalog: SharedCatalog, subject: str) -> None:
    assert shared_catalog.run(lambda r: resolve_field(r, subject)) == (POSTGRES_TABLE_URN, "amount")


@pytest.mark.parametrize(
    ("subject", "said"),
    [
        ("payments.transactions.amount", "'payments.transactions.amount' read as payments.public.transactions.amount"),
        ("transactions.amount", "'transactions.amount' read as payments.public.transactions.amount"),
        ("payments.public.transactions.amount", None),
        ("PAYMENTS.public.transactions.AMOUNT", None),
        ("postgres:payments.public.transactions.amount", None),
        (f"urn:li:schemaField:({POSTGRES_TABLE_URN},amount)", None),
    ],
)
def test_an_expanded_name_is_said(subject: str, said: str | None) -> None:
    assert read_as(subject, POSTGRES_TABLE_URN, "amount") == said


def test_a_field_nothing_resembles_lists_the_fields_not_unrelated_matches(shared_catalog: SharedCatalog) -> None:
    """'region' is like no field of the table: naming transaction_id, merchant_category, amount as "closest" misled."""
    message = _error(shared_catalog, lambda r: require_field(r, POSTGRES_TABLE_URN, "region"))
    assert "Closest matches" not in message and "No close match; it has: account_age_days, amount," in message
    typo = _error(shared_catalog, lambda r: require_field(r, POSTGRES_TABLE_URN, "amuont"))
    assert typo.endswith("Closest matches: amount")
