"""GraphQL entity shapes, built from Lite aspects, limited to the fields the pinned MCP server's queries
request (`mcp_server_datahub/gql/entity_details.gql`). Returning more than a real GMS would would let
Provenance depend on fields production never sends, so nothing extra is added here.
"""

from __future__ import annotations

from typing import Any

from datahub.metadata.urns import Urn

from tools.embedded import structured
from tools.embedded.store import LiteStore

GRAPHQL_TYPE = {
    "dataset": "DATASET",
    "mlFeature": "MLFEATURE",
    "mlPrimaryKey": "MLPRIMARY_KEY",
    "mlModel": "MLMODEL",
    "mlModelGroup": "MLMODEL_GROUP",
    "mlFeatureTable": "MLFEATURE_TABLE",
    "schemaField": "SCHEMA_FIELD",
    "document": "DOCUMENT",
    "tag": "TAG",
    "corpuser": "CORP_USER",
    "corpGroup": "CORP_GROUP",
    "dataPlatform": "DATA_PLATFORM",
    "dataJob": "DATA_JOB",
    "dataProcessInstance": "DATA_PROCESS_INSTANCE",
    "dataFlow": "DATA_FLOW",
    "dashboard": "DASHBOARD",
    "chart": "CHART",
    "container": "CONTAINER",
    "glossaryTerm": "GLOSSARY_TERM",
    "domain": "DOMAIN",
}
ENTITY_TYPE_BY_GRAPHQL = {v: k for k, v in GRAPHQL_TYPE.items()}

SCHEMA_TYPES = {
    "NumberType": "NUMBER",
    "StringType": "STRING",
    "BooleanType": "BOOLEAN",
    "DateType": "DATE",
    "TimeType": "TIME",
    "BytesType": "BYTES",
    "EnumType": "ENUM",
    "NullType": "NULL",
    "ArrayType": "ARRAY",
    "MapType": "MAP",
    "RecordType": "STRUCT",
    "UnionType": "UNION",
    "FixedType": "FIXED",
}


def entity_type(urn: str) -> str:
    return Urn.from_string(urn).entity_type


def graphql_type(urn: str) -> str:
    kind = entity_type(urn)
    return GRAPHQL_TYPE.get(kind, kind.upper())


def _key_value(props: dict[str, str] | None) -> list[dict[str, str]]:
    return [{"key": k, "value": v} for k, v in sorted((props or {}).items())]


class Shapes:
    def __init__(self, store: LiteStore) -> None:
        self.store = store

    def platform(self, urn: str) -> dict[str, Any] | None:
        parts = Urn.from_string(urn).entity_ids
        for part in parts:
            if isinstance(part, str) and part.startswith("urn:li:dataPlatform:"):
                return {"urn": part, "name": part.rsplit(":", 1)[1]}
        return None

    def tags(self, aspects: dict[str, Any]) -> dict[str, Any] | None:
        global_tags = aspects.get("globalTags")
        if not global_tags:
            return None
        out = []
        for assoc in global_tags.get("tags", []):
            props = self.store.aspects(assoc["tag"]).get("tagProperties") or {}
            out.append(
                {
                    "tag": {
                        "urn": assoc["tag"],
                        "properties": {
                            "name": props.get("name", assoc["tag"].removeprefix("urn:li:tag:")),
                            "description": props.get("description"),
                        },
                    }
                }
            )
        return {"tags": out}

    def ownership(self, aspects: dict[str, Any]) -> dict[str, Any] | None:
        ownership = aspects.get("ownership")
        if not ownership:
            return None
        owners = []
        for owner in ownership.get("owners", []):
            owner_aspects = self.store.aspects(owner["owner"])
            info = owner_aspects.get("corpUserInfo") or owner_aspects.get("corpGroupInfo") or {}
            entry: dict[str, Any] = {"urn": owner["owner"]}
            if info:
                entry["properties"] = {"displayName": info.get("displayName"), "email": info.get("email")}
            owners.append({"owner": entry, "type": owner.get("type")})
        return {"owners": owners}

    def preview(self, urn: str) -> dict[str, Any]:
        """The entity as GetEntity / searchAcrossLineage return it (without the dataset schema)."""
        aspects = self.store.aspects(urn)
        kind = entity_type(urn)
        ids = Urn.from_string(urn).entity_ids
        entity: dict[str, Any] = {"urn": urn, "type": graphql_type(urn)}
        platform = self.platform(urn)
        if platform:
            entity["platform"] = platform
        if kind == "dataset":
            props = aspects.get("datasetProperties") or {}
            entity["name"] = props.get("name") or ids[1]
            entity["properties"] = {
                "name": props.get("name"),
                "qualifiedName": props.get("qualifiedName"),
                "description": props.get("description"),
                "customProperties": _key_value(props.get("customProperties")),
            }
        elif kind in ("mlFeature", "mlPrimaryKey"):
            props = aspects.get("mlFeatureProperties") or aspects.get("mlPrimaryKeyProperties") or {}
            entity.update(
                name=ids[1],
                description=props.get("description"),
                properties={"customProperties": _key_value(props.get("customProperties"))},
            )
        elif kind in ("mlModel", "mlModelGroup"):
            props = aspects.get("mlModelProperties") or aspects.get("mlModelGroupProperties") or {}
            entity.update(
                name=props.get("name") or ids[1],
                description=props.get("description"),
                origin=ids[2] if len(ids) > 2 else None,
                properties={"customProperties": _key_value(props.get("customProperties"))},
            )
        elif kind == "mlFeatureTable":
            props = aspects.get("mlFeatureTableProperties") or {}
            entity.update(
                name=ids[1],
                description=props.get("description"),
                featureTableProperties={"mlFeatures": [{"urn": f} for f in props.get("mlFeatures", [])]},
            )
        elif kind == "document":
            info = aspects.get("documentInfo") or {}
            # On OSS the server comments out the #[NEWER_GMS] Document fields; only the title survives.
            entity["info"] = {"title": info.get("title")}
        elif kind == "tag":
            props = aspects.get("tagProperties") or {}
            entity.update(
                name=props.get("name"),
                properties={"name": props.get("name"), "description": props.get("description")},
            )
        elif kind in ("corpuser", "corpGroup"):
            info = aspects.get("corpUserInfo") or aspects.get("corpGroupInfo") or {}
            entity.update(username=ids[0], properties={"displayName": info.get("displayName")})
        sub_types = aspects.get("subTypes")
        if sub_types:
            entity["subTypes"] = {"typeNames": sub_types.get("typeNames", [])}
        entity["ownership"] = self.ownership(aspects)
        entity["tags"] = self.tags(aspects)
        return entity

    def schema(self, urn: str) -> dict[str, Any] | None:
        schema = self.store.aspects(urn).get("schemaMetadata")
        if not schema:
            return None
        fields = []
        for field in schema.get("fields", []):
            type_name = next(iter(field["type"]["type"].keys())).rsplit(".", 1)[-1]
            fields.append(
                {
                    "fieldPath": field["fieldPath"],
                    "type": SCHEMA_TYPES.get(type_name, "STRING"),
                    "nativeDataType": field.get("nativeDataType"),
                    "nullable": field.get("nullable", False),
                    "description": field.get("description"),
                    "isPartOfKey": field.get("isPartOfKey", False),
                }
            )
            properties = structured.entries(self.store, f"urn:li:schemaField:({urn},{field['fieldPath']})")
            if properties:
                fields[-1]["schemaFieldEntity"] = {"structuredProperties": {"properties": properties}}
        return {"name": schema.get("schemaName"), "platformUrn": schema.get("platform"), "fields": fields}

    def details(self, urn: str) -> dict[str, Any]:
        entity = self.preview(urn)
        if entity_type(urn) == "dataset":
            entity["schemaMetadata"] = self.schema(urn)
        return entity

    def path_node(self, urn: str) -> dict[str, Any]:
        if entity_type(urn) == "schemaField":
            parent, field_path = Urn.from_string(urn).entity_ids[:2]
            return {
                "urn": urn,
                "type": "SCHEMA_FIELD",
                "fieldPath": field_path,
                "parent": {"urn": parent, "type": graphql_type(parent)},
            }
        return {"urn": urn, "type": graphql_type(urn)}
