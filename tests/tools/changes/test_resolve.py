"""A SQL model's dataset, resolved through the real embedded demo catalog (over the real MCP server): found by its
table name, narrowed by platform and name prefix, named explicitly, and never guessed when ambiguous or unknown."""

from __future__ import annotations

import asyncio

import datahub.emitter.mce_builder as builder
import datahub.metadata.schema_classes as m
import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper

from seed.catalog import KAFKA_TOPIC_URN, POSTGRES_TABLE_URN, write_to_lite
from tools.catalog.connection import open_catalog
from tools.catalog.datahub import CatalogReader
from tools.changes.resolve import FIX_HINT, CatalogResolver, MappingOptionError, Resolution, parse_explicit
from tools.settings import ProvenanceSettings

SNOWFLAKE_URN = builder.make_dataset_urn("snowflake", "analytics.marts.transactions", "PROD")
MISSING_URN = builder.make_dataset_urn("postgres", "nowhere.public.nothing", "PROD")


def _add_snowflake_twin(settings: ProvenanceSettings) -> None:
    """A second `transactions` table, on another platform: the name alone is then ambiguous."""
    write_to_lite(
        [
            MetadataChangeProposalWrapper(
                entityUrn=SNOWFLAKE_URN, aspect=m.DatasetPropertiesClass(name="transactions", description="twin")
            )
        ],
        settings.lite_db,
    )


async def _resolve_all(settings: ProvenanceSettings) -> dict[str, Resolution]:
    async with open_catalog(settings) as catalog:
        reader = CatalogReader(catalog.session)
        explicit = parse_explicit([f"transactions={SNOWFLAKE_URN}", f"models/gone.sql={MISSING_URN}"])
        return {
            "plain": await CatalogResolver(reader)("transactions", "models/transactions.sql"),
            "qualified": await CatalogResolver(reader)("public.transactions", "sql/tx.sql"),
            "kafka": await CatalogResolver(reader, platform="kafka")("transactions", "models/transactions.sql"),
            "postgres": await CatalogResolver(reader, platform="postgres")("transactions", "models/transactions.sql"),
            "prefix": await CatalogResolver(reader, name_prefix="payments.public")("transactions", "m.sql"),
            "explicit": await CatalogResolver(reader, explicit=explicit)("transactions", "models/transactions.sql"),
            "explicit-missing": await CatalogResolver(reader, explicit=explicit)("gone", "models/gone.sql"),
            "unknown": await CatalogResolver(reader)("no_such_model", "models/no_such_model.sql"),
        }


def test_models_resolve_through_the_demo_catalog(settings: ProvenanceSettings) -> None:
    _add_snowflake_twin(settings)
    found = asyncio.run(_resolve_all(settings))

    plain = found["plain"]
    assert plain.urn is None and "matches several datasets" in plain.reason
    assert POSTGRES_TABLE_URN in plain.reason and SNOWFLAKE_URN in plain.reason and FIX_HINT in plain.reason
    assert KAFKA_TOPIC_URN not in plain.reason  # payments.transactions.events is another table

    for key in ("qualified", "postgres", "prefix"):
        resolved = found[key]
        assert resolved.urn == POSTGRES_TABLE_URN, key
        assert resolved.fields is not None and "amount" in resolved.fields, key

    assert found["kafka"].urn is None and "on platform kafka" in found["kafka"].reason
    assert found["explicit"].urn == SNOWFLAKE_URN
    assert found["explicit-missing"].urn is None and "not in the catalog" in found["explicit-missing"].reason
    assert found["unknown"].urn is None and "no dataset named 'no_such_model'" in found["unknown"].reason


@pytest.mark.parametrize("pair", ["transactions", "=urn:li:dataset:(x)", "transactions=payments.public.transactions"])
def test_a_malformed_explicit_mapping_is_refused(pair: str) -> None:
    with pytest.raises(MappingOptionError, match="NAME=URN"):
        parse_explicit([pair])
