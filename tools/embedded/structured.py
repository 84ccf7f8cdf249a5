"""Structured properties on the embedded catalog: the two GraphQL operations the MCP server's
`add_structured_properties` sends (`getStructuredProperty`, then `upsertStructuredProperties` per entity), and the
`structuredProperties` a dataset's schema fields carry in `GetEntity`, as DataHub answers them.

As in DataHub, a property must be defined first (a `propertyDefinition` aspect), may only be set on the
entity types its definition lists, and an upsert replaces the values of the properties it names and keeps the
others. A schema field exists when its dataset's schema has it.
"""

from __future__ import annotations

from typing import Any

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import StructuredPropertiesClass, StructuredPropertyValueAssignmentClass
from datahub.metadata.urns import Urn

from tools.embedded.store import LiteStore
from tools.errors import BadRequest

DEFINITION = "propertyDefinition"  # the aspect of StructuredPropertyDefinitionClass


class StructuredPropertyError(BadRequest):
    """A structured property write the catalog refuses (unknown property, wrong entity type, unknown field)."""


def definition(store: LiteStore, urn: str) -> dict[str, Any] | None:
    return store.aspects(urn).get(DEFINITION) if urn.startswith("urn:li:structuredProperty:") else None


def get_structured_property(store: LiteStore, variables: dict[str, Any]) -> dict[str, Any]:
    urn = variables["urn"]
    found = definition(store, urn)
    if found is None:
        return {"entity": None}
    value_type = str(found.get("valueType", "urn:li:dataType:datahub.string"))
    return {
        "entity": {
            "urn": urn,
            "type": "STRUCTURED_PROPERTY",
            "definition": {
                "qualifiedName": found.get("qualifiedName"),
                "displayName": found.get("displayName"),
                "entityTypes": [
                    {"urn": t, "type": "ENTITY_TYPE", "info": {"type": t.rsplit(".", 1)[-1].upper()}}
                    for t in found.get("entityTypes", [])
                ],
                "valueType": {"urn": value_type, "info": {"qualifiedName": value_type.rsplit(":", 1)[-1]}},
                "cardinality": found.get("cardinality", "SINGLE"),
            },
        }
    }


def upsert_structured_properties(store: LiteStore, variables: dict[str, Any]) -> dict[str, Any]:
    spec = variables["input"]
    asset = spec["assetUrn"]
    params = spec["structuredPropertyInputParams"]
    _require_asset(store, asset)
    kind = Urn.from_string(asset).entity_type
    for param in params:
        found = definition(store, param["structuredPropertyUrn"])
        if found is None:
            raise StructuredPropertyError(f"structured property {param['structuredPropertyUrn']} is not defined")
        allowed = [t.rsplit(".", 1)[-1] for t in found.get("entityTypes", [])]
        if kind not in allowed:
            raise StructuredPropertyError(
                f"structured property {param['structuredPropertyUrn']} applies to {', '.join(allowed)}, not {kind}"
            )
        if found.get("cardinality", "SINGLE") == "SINGLE" and len(param["values"]) > 1:
            raise StructuredPropertyError(f"structured property {param['structuredPropertyUrn']} takes one value")
    with store.locked():
        current = store.typed_aspects(asset).get("structuredProperties") or StructuredPropertiesClass(properties=[])
        named = {p["structuredPropertyUrn"] for p in params}
        kept = [p for p in current.properties if p.propertyUrn not in named]
        added = [
            StructuredPropertyValueAssignmentClass(
                propertyUrn=p["structuredPropertyUrn"],
                values=[v["numberValue"] if "numberValue" in v else str(v["stringValue"]) for v in p["values"]],
            )
            for p in params
        ]
        store.write(MetadataChangeProposalWrapper(entityUrn=asset, aspect=StructuredPropertiesClass(kept + added)))
    return {
        "upsertStructuredProperties": {
            "properties": [{"structuredProperty": {"urn": p.propertyUrn}} for p in kept + added]
        }
    }


def entries(store: LiteStore, urn: str) -> list[dict[str, Any]]:
    """An entity's structured properties as GetEntity returns them (`structuredPropertiesFields`)."""
    aspect = store.typed_aspects(urn).get("structuredProperties")
    result = []
    for assignment in aspect.properties if aspect is not None else []:
        prop = assignment.propertyUrn
        found = definition(store, prop) or {}
        result.append(
            {
                "structuredProperty": {
                    "urn": prop,
                    "definition": {
                        "displayName": found.get("displayName"),
                        "qualifiedName": found.get("qualifiedName"),
                    },
                    "__typename": "StructuredPropertyEntity",
                },
                "values": [
                    {"numberValue": v} if isinstance(v, int | float) else {"stringValue": v} for v in assignment.values
                ],
                "valueEntities": [],
            }
        )
    return result


def _require_asset(store: LiteStore, asset: str) -> None:
    urn = Urn.from_string(asset)
    if urn.entity_type != "schemaField":
        if not store.exists(asset):
            raise StructuredPropertyError(f"entity {asset} does not exist")
        return
    parent, field_path = urn.entity_ids[:2]
    schema = store.aspects(parent).get("schemaMetadata") or {}
    if field_path not in {f.get("fieldPath") for f in schema.get("fields", [])}:
        raise StructuredPropertyError(f"{parent} has no field {field_path}")
