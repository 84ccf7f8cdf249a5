"""The GraphQL operations the pinned mcp-server-datahub sends, answered from the Lite store.

Operations are dispatched by name. Anything else is refused with an error that names the operation, so a
new MCP server version that needs more surfaces immediately instead of returning wrong data.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import GlobalTagsClass, TagAssociationClass
from datahub.metadata.urns import Urn

from tools.embedded import structured
from tools.embedded.shapes import ENTITY_TYPE_BY_GRAPHQL, Shapes, entity_type, graphql_type
from tools.embedded.store import LiteStore
from tools.errors import BadRequest

AGENT_USER = {
    "urn": "urn:li:corpuser:provenance",
    "username": "provenance",
    "info": {"displayName": "Provenance", "fullName": "Provenance impact agent"},
}
# Guards the all-simple-paths walk on dense graphs; results past this are dropped, not silently wrong.
MAX_LINEAGE_PATHS = 20_000


class UnsupportedOperation(BadRequest):
    """A GraphQL operation or argument the embedded catalog does not implement."""


class GraphQLError(BadRequest):
    """A request the embedded catalog understood but cannot satisfy (e.g. an unknown tag)."""


def operation_name(query: str, declared: str | None) -> str:
    if declared:
        return declared
    match = re.search(r"\b(query|mutation)\s+(\w+)", query)
    if not match:
        raise UnsupportedOperation("anonymous GraphQL operations are not supported; name the operation")
    return match.group(2)


class GraphQLApi:
    def __init__(self, store: LiteStore) -> None:
        self.store = store
        self.shapes = Shapes(store)
        self.operation_counts: Counter[str] = Counter()
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "GetEntity": self._get_entity,
            "GetEntityLineage": self._lineage,
            "getRelatedDocuments": self._related_documents,
            "search": self._search,
            "documentSearch": self._document_search,
            "getTags": self._get_tags,
            "batchAddTags": self._batch_add_tags,
            "batchRemoveTags": self._batch_remove_tags,
            "getStructuredProperty": lambda v: structured.get_structured_property(self.store, v),
            "upsertStructuredProperties": lambda v: structured.upsert_structured_properties(self.store, v),
            "getMe": lambda _v: {"me": {"corpUser": AGENT_USER}},
            "getGlobalViewsSettings": lambda _v: {"globalViewsSettings": {"defaultView": None}},
            "getUserDefaultView": lambda _v: {"me": {"corpUser": {"settings": None}}},
        }

    @property
    def supported(self) -> list[str]:
        return sorted(self._handlers)

    def execute(self, query: str, variables: dict[str, Any] | None, declared_name: str | None) -> dict[str, Any]:
        name = operation_name(query, declared_name)
        handler = self._handlers.get(name)
        if handler is None:
            raise UnsupportedOperation(
                f"embedded DataHub does not support GraphQL operation '{name}'; supported: "
                f"{', '.join(self.supported)}. Point DATAHUB_GMS_URL at a real DataHub for this operation."
            )
        self.operation_counts[name] += 1
        return handler(variables or {})

    # ------------------------------------------------------------------ reads
    def _get_entity(self, v: dict[str, Any]) -> dict[str, Any]:
        urn = v["urn"]
        return {"entity": self.shapes.details(urn) if self.store.exists(urn) else None}

    def _related_documents(self, v: dict[str, Any]) -> dict[str, Any]:
        urn = v["urn"]
        documents = sorted(self.store.index.documents_about(urn))
        return {
            "entity": {
                "urn": urn,
                "type": graphql_type(urn),
                "relatedDocuments": {
                    "start": 0,
                    "count": len(documents),
                    "total": len(documents),
                    "documents": [self.shapes.preview(doc) for doc in documents],
                },
            }
        }

    def _lineage(self, v: dict[str, Any]) -> dict[str, Any]:
        spec = v["input"]
        urn, direction = spec["urn"], spec["direction"]
        filters = _and_filters(spec.get("orFilters"))
        degrees = filters.pop("degree", ["1"])
        max_degree = 1_000 if "3+" in degrees else max(int(d) for d in degrees)
        filters.pop("removed", None)  # nothing is soft-deleted in the embedded catalog
        entity_types = set(filters.pop("_entityType", []))
        if filters:
            raise UnsupportedOperation(f"GetEntityLineage filter fields not supported: {sorted(filters)}")
        self.store.sync()
        is_field = entity_type(urn) == "schemaField"
        paths = self.store.index.paths(
            urn, direction, max_degree, "field" if is_field else "entity", limit=MAX_LINEAGE_PATHS
        )
        if paths is None:
            raise GraphQLError(f"lineage of {urn} has more than {MAX_LINEAGE_PATHS} paths; narrow max_hops")
        results: dict[str, dict[str, Any]] = {}
        for path in paths:
            end = path[-1]
            key = Urn.from_string(end).entity_ids[0] if is_field else end
            if not self.store.exists(key):
                continue
            hit = results.setdefault(key, {"entity": self.shapes.preview(key), "degree": len(path) - 1, "paths": []})
            hit["degree"] = min(hit["degree"], len(path) - 1)
            if is_field:
                hit["paths"].append({"path": [self.shapes.path_node(node) for node in path]})
        types = set(spec.get("types") or [])
        if entity_types:
            types = types & entity_types if types else entity_types
        hits = [r for r in results.values() if not types or r["entity"]["type"] in types]
        hits.sort(key=lambda r: (r["degree"], r["entity"]["urn"]))
        start, count = int(spec.get("start", 0)), int(spec.get("count", 10))
        return {
            "searchAcrossLineage": {
                "start": start,
                "count": len(hits[start : start + count]),
                "total": len(hits),
                "facets": _type_facet(hits),
                "searchResults": hits[start : start + count],
            }
        }

    def _matching(self, query: str, types: list[str], filters: dict[str, list[str]]) -> list[str]:
        needles = [tok for tok in re.split(r"[\s+]+", query.replace("/q", "").strip().lower()) if tok not in ("", "*")]
        unknown = set(filters) - {"tags", "platform", "origin", "urn", "_entityType", "removed"}
        if unknown:
            raise UnsupportedOperation(f"search filter fields not supported by the embedded catalog: {sorted(unknown)}")
        wanted_types = set(types) | set(filters.get("_entityType", []))
        hits = []
        for urn in self.store.search_urns(needles):
            kind = entity_type(urn)
            if kind not in ENTITY_TYPE_BY_GRAPHQL.values() or kind == "schemaField":
                continue
            if wanted_types and graphql_type(urn) not in wanted_types:
                continue
            if "urn" in filters and urn not in filters["urn"]:
                continue
            if "platform" in filters and not any(p in urn for p in filters["platform"]):
                continue
            if "origin" in filters and not any(f",{o})" in urn for o in filters["origin"]):
                continue
            if "tags" in filters:
                tags = {t["tag"] for t in (self.store.aspects(urn).get("globalTags") or {}).get("tags", [])}
                if not tags & set(filters["tags"]):
                    continue
            hits.append(urn)
        return hits

    def _search(self, v: dict[str, Any]) -> dict[str, Any]:
        spec = v.get("input", v)
        filters = _and_filters(spec.get("orFilters"))
        filters.pop("removed", None)
        if "platform.keyword" in filters:  # the SDK's filter compiler targets the keyword sub-field
            filters.setdefault("platform", []).extend(filters.pop("platform.keyword"))
        hits = self._matching(spec.get("query") or "*", spec.get("types") or [], filters)
        start, count = int(spec.get("start", 0)), int(spec.get("count", 10))
        page = hits[start : start + count]
        previews = [{"entity": self.shapes.preview(urn)} for urn in page]
        return {
            "searchAcrossEntities": {
                "start": start,
                "count": len(page),
                "total": len(hits),
                "searchResults": previews,
                "facets": _type_facet([{"entity": {"type": graphql_type(u)}} for u in hits]),
            }
        }

    def _document_search(self, v: dict[str, Any]) -> dict[str, Any]:
        spec = v.get("input", v)
        hits = self._matching(spec.get("query") or "*", ["DOCUMENT"], {})
        start, count = int(spec.get("start", 0)), int(spec.get("count", 10))
        page = hits[start : start + count]
        return {
            "searchAcrossEntities": {  # the MCP server reads document searches in this shape
                "start": start,
                "count": len(page),
                "total": len(hits),
                "searchResults": [{"entity": self.shapes.preview(urn)} for urn in page],
                "facets": [],
            }
        }

    def _get_tags(self, v: dict[str, Any]) -> dict[str, Any]:
        entities = []
        for urn in v["urns"]:
            props = self.store.aspects(urn).get("tagProperties")
            entities.append({"urn": urn, "type": "TAG", "properties": {"name": props.get("name")}} if props else None)
        return {"entities": entities}

    # ------------------------------------------------------------------ writes
    def _batch_tags(self, v: dict[str, Any], add: bool) -> None:
        spec = v["input"]
        tag_urns: list[str] = spec["tagUrns"]
        missing = [t for t in tag_urns if "tagProperties" not in self.store.aspects(t)]
        if missing:
            raise GraphQLError(f"tag(s) {missing} do not exist; create the tag entities first")
        resources = spec["resources"]
        if any(resource.get("subResource") for resource in resources):
            raise UnsupportedOperation("column-level tags (subResource) are not supported by the embedded catalog")
        missing_entities = [r["resourceUrn"] for r in resources if not self.store.exists(r["resourceUrn"])]
        if missing_entities:  # checked up front so a batch is applied whole or not at all
            raise GraphQLError(f"entity {', '.join(missing_entities)} does not exist")
        for resource in resources:
            urn = resource["resourceUrn"]
            with self.store.locked():  # read-modify-write of globalTags must not interleave with another request
                current = self.store.typed_aspects(urn).get("globalTags") or GlobalTagsClass(tags=[])
                present = {t.tag for t in current.tags}
                if add:
                    new_tags = current.tags + [
                        TagAssociationClass(tag=t) for t in dict.fromkeys(tag_urns) if t not in present
                    ]
                else:
                    new_tags = [t for t in current.tags if t.tag not in tag_urns]
                if len(new_tags) != len(current.tags):
                    self.store.write(
                        MetadataChangeProposalWrapper(entityUrn=urn, aspect=GlobalTagsClass(tags=new_tags))
                    )

    def _batch_add_tags(self, v: dict[str, Any]) -> dict[str, Any]:
        self._batch_tags(v, add=True)
        return {"batchAddTags": True}

    def _batch_remove_tags(self, v: dict[str, Any]) -> dict[str, Any]:
        self._batch_tags(v, add=False)
        return {"batchRemoveTags": True}


def _and_filters(or_filters: list[dict[str, Any]] | None) -> dict[str, list[str]]:
    """Flatten the single AND-group the MCP server sends; OR of several groups is refused by name."""
    if not or_filters:
        return {}
    if len(or_filters) > 1:
        raise UnsupportedOperation("OR-combined filter groups are not supported by the embedded catalog")
    out: dict[str, list[str]] = {}
    for criterion in or_filters[0].get("and", []):
        if criterion.get("field") == "removed":
            continue  # the MCP server always excludes soft-deleted entities; Lite has none
        if criterion.get("negated"):
            raise UnsupportedOperation(f"negated filter on '{criterion.get('field')}' is not supported")
        values = criterion.get("values") or ([criterion["value"]] if criterion.get("value") else [])
        out.setdefault(criterion["field"], []).extend(values)
    return out


def _type_facet(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    counts = Counter(h["entity"]["type"] for h in hits)
    return [
        {
            "field": "_entityType",
            "displayName": "Type",
            "aggregations": [{"value": k, "count": c} for k, c in sorted(counts.items())],
        }
    ]
