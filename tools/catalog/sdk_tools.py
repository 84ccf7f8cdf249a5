"""Reads the pinned MCP server cannot make, as a tool of the same catalog session (recorded and replayed alike).

The MCP server's entity query does not select several aspects Provenance reasons about, and its
`get_aspect_history` only serves an allowlist of governance aspects. So these few aspects are read with the DataHub
SDK from the same GMS, read-only: `mlModelProperties.tags` and `versionProperties.aliases` (production markers
real catalogs write), `viewProperties.viewLogic` (a view's or dbt model's SQL), `queryProperties.statement` (the
SQL of a query entity DataHub's sql-queries source links to a column edge) and `siblings` (a dbt node and the
warehouse table it materialises, linked by DataHub's sibling hook), and `upstreamLineage.upstreams` with the
upstreams' `schemaMetadata` (the columns behind a `SELECT *`, sql_schemas.py; aspects over the MCP server's
12,000-character limit would come back as previews).
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

SDK_ASPECTS_TOOL = "sdk_get_aspects"
ASSERTIONS = "assertions"
"""Not an aspect: the `assertionInfo` of every assertion on the entity (GMS's `Asserts` relationship), as a list.
DataHub's dbt source writes each dbt test as one (a `unique` test: aggregation UNIQUE_PROPOTION, value 1.0)."""
SDK_ASPECTS = frozenset(
    {
        "mlModelProperties",
        "versionProperties",
        "viewProperties",
        "queryProperties",
        "siblings",
        "mlFeatureProperties",
        "mlFeatureTableProperties",
        "upstreamLineage",
        "schemaMetadata",
        ASSERTIONS,
    }
)


def sdk_aspects_tool(gms_url: str, gms_token: str) -> BaseTool:
    graph: Any = None

    def read(urns: list[str], aspects: list[str]) -> tuple[str, dict[str, Any]]:
        """The current value of each named aspect (mlModelProperties, versionProperties, viewProperties,
        queryProperties, siblings, mlFeatureProperties, mlFeatureTableProperties, upstreamLineage,
        schemaMetadata; `assertions`: the assertionInfo of the entity's assertions, a list) of each URN:
        {urn: {aspect: value or null}}."""
        nonlocal graph
        from datahub.ingestion.graph.client import DatahubClientConfig, DataHubGraph
        from datahub.metadata.schema_classes import ASPECT_NAME_MAP

        unknown = sorted(set(aspects) - SDK_ASPECTS)
        if unknown:
            raise ValueError(f"aspect(s) {unknown} not readable here; readable: {', '.join(sorted(SDK_ASPECTS))}")
        if graph is None:
            graph = DataHubGraph(DatahubClientConfig(server=gms_url, token=gms_token or None))
        results: dict[str, dict[str, Any]] = {}
        for urn in urns:
            results[urn] = {}
            for aspect in aspects:
                if aspect == ASSERTIONS:
                    results[urn][aspect] = _assertions(graph, urn)
                    continue
                value = graph.get_aspect(urn, ASPECT_NAME_MAP[aspect])
                results[urn][aspect] = value.to_obj() if value is not None else None
        result = {"results": results}
        return json.dumps(result), {"structured_content": result}

    return StructuredTool.from_function(
        func=read,
        name=SDK_ASPECTS_TOOL,
        description=read.__doc__ or "",
        response_format="content_and_artifact",
    )


def _assertions(graph: Any, urn: str) -> list[dict[str, Any]]:
    from datahub.ingestion.graph.openapi import RelationshipDirection
    from datahub.metadata.schema_classes import AssertionInfoClass

    found = []
    for related in graph.get_related_entities(urn, ["Asserts"], RelationshipDirection.INCOMING):
        info = graph.get_aspect(related.urn, AssertionInfoClass)
        if info is not None:
            found.append(info.to_obj())
    return found
