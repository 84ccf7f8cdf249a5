"""Structured properties on the embedded catalog, as the MCP server's `add_structured_properties` drives them
(`getStructuredProperty`, then `upsertStructuredProperties`), and as `GetEntity` returns them on schema fields."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import StructuredPropertyDefinitionClass

from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN
from tools.embedded.graphql import GraphQLApi
from tools.embedded.store import LiteStore
from tools.embedded.structured import StructuredPropertyError
from tools.tolerance.publish import TOLERANCE_PROPERTY_URN

AMOUNT = f"urn:li:schemaField:({POSTGRES_TABLE_URN},amount)"
OTHER = "urn:li:structuredProperty:io.example.owner_note"


@pytest.fixture
def api(catalog_db: Path) -> Iterator[GraphQLApi]:
    store = LiteStore(catalog_db)
    store.write(
        MetadataChangeProposalWrapper(
            entityUrn=OTHER,
            aspect=StructuredPropertyDefinitionClass(
                qualifiedName="io.example.owner_note",
                valueType="urn:li:dataType:datahub.string",
                entityTypes=["urn:li:entityType:datahub.schemaField"],
            ),  # cardinality SINGLE by default
        )
    )
    yield GraphQLApi(store)
    store.close()


def upsert(api: GraphQLApi, asset: str, values: dict[str, list[str]]) -> dict[str, Any]:
    params = [{"structuredPropertyUrn": p, "values": [{"stringValue": v} for v in vs]} for p, vs in values.items()]
    variables = {"input": {"assetUrn": asset, "structuredPropertyInputParams": params}}
    return api.execute("mutation upsertStructuredProperties { x }", variables, "upsertStructuredProperties")


def field_properties(api: GraphQLApi, field: str = "amount") -> dict[str, list[object]]:
    entity = api.execute("query GetEntity { x }", {"urn": POSTGRES_TABLE_URN}, "GetEntity")["entity"]
    [found] = [f for f in entity["schemaMetadata"]["fields"] if f["fieldPath"] == field]
    entries = (found.get("schemaFieldEntity") or {}).get("structuredProperties", {}).get("properties", [])
    return {e["structuredProperty"]["urn"]: [next(iter(v.values())) for v in e["values"]] for e in entries}


def test_the_seeded_definition_is_answered_as_the_mcp_server_asks_for_it(api: GraphQLApi) -> None:
    found = api.execute("query getStructuredProperty { x }", {"urn": TOLERANCE_PROPERTY_URN}, "getStructuredProperty")
    definition = found["entity"]["definition"]
    assert found["entity"]["type"] == "STRUCTURED_PROPERTY" and definition["cardinality"] == "MULTIPLE"
    assert definition["valueType"]["info"]["qualifiedName"] == "datahub.string"
    missing = api.execute("query getStructuredProperty { x }", {"urn": OTHER + "x"}, "getStructuredProperty")
    assert missing == {"entity": None}


def test_an_upsert_replaces_the_named_property_and_keeps_the_others(api: GraphQLApi) -> None:
    upsert(api, AMOUNT, {TOLERANCE_PROPERTY_URN: ["a: BLOCK from ×2", "b: no WARNING"], OTHER: ["kept"]})
    upsert(api, AMOUNT, {TOLERANCE_PROPERTY_URN: ["a: BLOCK from ×1.5"]})
    assert field_properties(api) == {OTHER: ["kept"], TOLERANCE_PROPERTY_URN: ["a: BLOCK from ×1.5"]}
    assert field_properties(api, "account_age_days") == {}  # another column is untouched


@pytest.mark.parametrize(
    ("asset", "values", "message"),
    [
        (AMOUNT, {OTHER + "x": ["v"]}, "is not defined"),
        (FRAUD_MODEL_URN, {TOLERANCE_PROPERTY_URN: ["v"]}, "applies to schemaField, not mlModel"),
        (f"urn:li:schemaField:({POSTGRES_TABLE_URN},nope)", {TOLERANCE_PROPERTY_URN: ["v"]}, "has no field nope"),
        (AMOUNT, {OTHER: ["one", "two"]}, "takes one value"),
    ],
)
def test_what_datahub_refuses_is_refused_and_nothing_is_written(
    api: GraphQLApi, asset: str, values: dict[str, list[str]], message: str
) -> None:
    with pytest.raises(StructuredPropertyError, match=message):
        upsert(api, asset, values)
    assert field_properties(api) == {}
