"""The parts of a catalog entity Provenance reasons about. A leaf (pydantic only), so evidence and discovery results
load without the MCP stack: `provenance runs` reads evidence files and nothing else."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class EntitySummary(BaseModel):
    """The parts of a GetEntity answer Provenance reasons about."""

    urn: str
    type: str
    name: str | None = None
    description: str | None = None
    platform: str | None = None
    owners: list[str] = []
    tags: list[str] = []
    custom_properties: dict[str, str] = {}
    related_documents: list[str] = []
    raw: dict[str, Any] = {}

    @classmethod
    def from_graphql(cls, entity: dict[str, Any]) -> EntitySummary:
        props = entity.get("properties") or {}
        return cls(
            urn=entity["urn"],
            type=entity.get("type", ""),
            name=entity.get("name") or props.get("name"),
            description=entity.get("description") or props.get("description"),
            platform=(entity.get("platform") or {}).get("name"),
            owners=[o["owner"]["urn"] for o in (entity.get("ownership") or {}).get("owners", [])],
            tags=[t["tag"]["urn"] for t in (entity.get("tags") or {}).get("tags", [])],
            custom_properties={p["key"]: p.get("value", "") for p in props.get("customProperties") or []},
            related_documents=[d["urn"] for d in (entity.get("relatedDocuments") or {}).get("documents", [])],
            raw=entity,
        )
