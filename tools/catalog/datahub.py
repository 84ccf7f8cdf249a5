"""Typed wrappers over the DataHub MCP tools Provenance uses. Reads and writes are separate classes, over separate
sessions: a `CatalogWriter` needs a `WriterSession` (an MCP server with mutations on), which only the publish step
opens, after approval; every other session is a reader whose server cannot write.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from tools.catalog.entity import EntitySummary
from tools.catalog.sdk_tools import SDK_ASPECTS_TOOL
from tools.catalog.session import CatalogSession, CatalogToolError, WriterSession

# get_aspect_history answers at most 10 URNs and 52,000 characters per call, each value up to 12,000 characters:
# 4 full-size upstreamLineage aspects fit one answer.
FINE_GRAINED_BATCH = 4


class SchemaField(BaseModel):
    field_path: str = Field(alias="fieldPath")
    type: str = "STRING"
    native_data_type: str | None = Field(default=None, alias="nativeDataType")
    nullable: bool = False
    description: str | None = None
    # qualified name -> value(s), as list_schema_fields returns them (e.g. io.provenance.tolerance, one per model)
    structured_properties: dict[str, Any] = Field(default_factory=dict, alias="structuredProperties")


class LineageHit(BaseModel):
    urn: str
    type: str
    name: str | None = None
    degree: int
    lineage_columns: list[str] = []


class FineGrainedEdge(BaseModel):
    upstream: str
    downstream: str
    transform: str | None = None
    query: str | None = None  # the query entity whose SQL made the edge (DataHub's sql-queries source links one)


class CatalogReader:
    def __init__(self, session: CatalogSession, *, remember: bool = False) -> None:
        """`remember`: answer a read asked again with the first answer (one run's reader, tools/catalog/handle.py:
        its nodes ask for a dataset's entity and fields more than once, and the catalog is asked once)."""
        self.session = session
        self._answers: dict[str, asyncio.Task[Any]] | None = {} if remember else None

    async def _read(self, name: str, arguments: dict[str, Any]) -> Any:
        if self._answers is None:
            return await self.session.call(name, arguments)
        key = json.dumps([name, arguments], sort_keys=True, default=str)
        answer = self._answers.get(key)
        if answer is None:  # the same read in flight is awaited, not sent twice
            answer = self._answers[key] = asyncio.ensure_future(self.session.call(name, arguments))
        try:
            result = await asyncio.shield(answer)
        except BaseException:
            if answer.done():  # a failed read is asked again next time, not remembered
                self._answers.pop(key, None)
            raise
        return copy.deepcopy(result)  # callers may change what they read; the remembered answer stays as read

    async def get_entities(self, urns: list[str]) -> dict[str, EntitySummary | None]:
        """Entities by URN; None for a URN the catalog does not know."""
        if not urns:
            return {}
        result = await self._read("get_entities", {"urns": urns})
        items = result if isinstance(result, list) else [result]
        out: dict[str, EntitySummary | None] = {}
        for urn, item in zip(urns, items, strict=True):
            out[urn] = None if "error" in item else EntitySummary.from_graphql(item)
        return out

    async def get_entity(self, urn: str) -> EntitySummary | None:
        return (await self.get_entities([urn]))[urn]

    async def list_schema_fields(self, urn: str) -> list[SchemaField]:
        fields: list[SchemaField] = []
        offset = 0
        while True:
            page = await self._read("list_schema_fields", {"urn": urn, "limit": 100, "offset": offset})
            fields += [SchemaField.model_validate(f) for f in page.get("fields", [])]
            offset += int(page.get("returned", 0))
            if not page.get("remainingCount") or not page.get("returned"):
                return fields

    async def get_lineage(
        self,
        urn: str,
        *,
        column: str | None = None,
        direction: Literal["up", "down"] = "down",
        max_hops: int = 1,
        max_results: int = 100,
    ) -> list[LineageHit]:
        args: dict[str, Any] = {
            "urn": urn,
            "upstream": direction == "up",
            "max_hops": max_hops,
            "max_results": max_results,
        }
        if column is not None:
            args["column"] = column
        result = await self._read("get_lineage", args)
        block = result.get("upstreams" if direction == "up" else "downstreams") or {}
        return [
            LineageHit(
                urn=hit["entity"]["urn"],
                type=hit["entity"].get("type", ""),
                name=hit["entity"].get("name"),
                degree=int(hit.get("degree", 1)),
                lineage_columns=hit.get("lineageColumns") or [],
            )
            for hit in block.get("searchResults", [])
        ]

    async def fine_grained_lineage(self, dataset_urns: list[str]) -> dict[str, list[FineGrainedEdge]]:
        """Column edges (with their transform) recorded on each dataset's upstreamLineage aspect.

        An aspect over the MCP server's 12,000-character limit comes back as a preview only; such a dataset yields
        no edges, so callers must treat a missing edge as unknown, not as absent.
        """
        out: dict[str, list[FineGrainedEdge]] = {urn: [] for urn in dataset_urns}
        for urn, value in (await self.current_aspects(dataset_urns, "upstreamLineage")).items():
            for fgl in value.get("fineGrainedLineages") or []:
                for up in fgl.get("upstreams") or []:
                    for down in fgl.get("downstreams") or []:
                        out.setdefault(urn, []).append(
                            FineGrainedEdge(
                                upstream=up,
                                downstream=down,
                                transform=fgl.get("transformOperation"),
                                query=fgl.get("query"),
                            )
                        )
        return out

    async def current_aspects(self, urns: list[str], aspect_name: str) -> dict[str, dict[str, Any]]:
        """The current value of one aspect per URN ({} when absent), read with get_aspect_history.

        One call per FINE_GRAINED_BATCH URNs: the MCP server takes at most 10 URNs per call and trims answers
        over 52,000 characters."""
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(urns), FINE_GRAINED_BATCH):
            result = await self._read(
                "get_aspect_history",
                {
                    "urns": urns[start : start + FINE_GRAINED_BATCH],
                    "aspect_names": [aspect_name],
                    "limit": 1,
                    "include_current": True,
                },
            )
            for item in result.get("results", []):
                if item.get("error"):
                    raise CatalogToolError("get_aspect_history", f"{item['urn']}: {item['error']}")
                out[item["urn"]] = (item.get("current") or {}).get("value") or {}
        return out

    async def sdk_aspects(self, urns: list[str], aspects: list[str]) -> dict[str, dict[str, dict[str, Any] | None]]:
        """{urn: {aspect: value or None}} for aspects the MCP server cannot serve (sdk_tools.SDK_ASPECTS); one call."""
        if not urns:
            return {}
        result = await self._read(SDK_ASPECTS_TOOL, {"urns": urns, "aspects": aspects})
        found = result.get("results") or {}
        return {urn: {a: (found.get(urn) or {}).get(a) for a in aspects} for urn in urns}

    async def marker_aspects(self, model_urns: list[str]) -> dict[str, tuple[list[str], list[str]]]:
        """(`mlModelProperties.tags`, `versionProperties.aliases`) per model: production markers the entity query
        does not return."""
        found = await self.sdk_aspects(model_urns, ["mlModelProperties", "versionProperties"])
        return {
            urn: (
                [str(t) for t in (value["mlModelProperties"] or {}).get("tags") or []],
                [
                    str(a["versionTag"])
                    for a in (value["versionProperties"] or {}).get("aliases") or []
                    if a.get("versionTag")
                ],
            )
            for urn, value in found.items()
        }

    async def search(self, query: str, *, filter: str | None = None, num_results: int = 10) -> list[EntitySummary]:
        args: dict[str, Any] = {"query": query, "num_results": num_results}
        if filter:
            args["filter"] = filter
        result = await self._read("search", args)
        return [EntitySummary.from_graphql(hit["entity"]) for hit in result.get("searchResults", [])]


class CatalogWriter:
    """Write tools. Constructed only by the publish step, after a person approved, from its writer session."""

    def __init__(self, session: WriterSession) -> None:
        if not isinstance(session, WriterSession):  # the annotation says it; this holds it for untyped callers too
            raise TypeError(
                f"CatalogWriter needs a WriterSession (mutations on), not a {type(session).__name__}: "
                "open one with tools.catalog.connection.open_writer"
            )
        self.session = session

    async def add_tags(self, tag_urns: list[str], entity_urns: list[str]) -> None:
        await self.session.call("add_tags", {"tag_urns": tag_urns, "entity_urns": entity_urns})

    async def remove_tags(self, tag_urns: list[str], entity_urns: list[str]) -> None:
        await self.session.call("remove_tags", {"tag_urns": tag_urns, "entity_urns": entity_urns})

    async def add_structured_properties(self, values: dict[str, list[str]], entity_urns: list[str]) -> None:
        """Upsert: each named property's values are replaced, the entity's other properties kept."""
        await self.session.call("add_structured_properties", {"property_values": values, "entity_urns": entity_urns})

    async def save_document(
        self,
        *,
        title: str,
        content: str,
        related_assets: list[str],
        urn: str | None = None,
        document_type: str = "Analysis",
        topics: list[str] | None = None,
    ) -> str:
        args: dict[str, Any] = {
            "document_type": document_type,
            "title": title,
            "content": content,
            "related_assets": related_assets,
        }
        if urn:
            args["urn"] = urn
        if topics:
            args["topics"] = topics
        result = await self.session.call("save_document", args)
        return str(result["urn"])
