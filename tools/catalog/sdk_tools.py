"""Reads the pinned MCP server cannot make, as tools of the same catalog session (recorded and replayed alike).

`mlModelProperties.tags` is a production marker in real catalogs, but the MCP server's entity query does not
select it and its `get_aspect_history` only serves an allowlist of governance aspects (no mlModelProperties).
So that one aspect is read with the DataHub SDK from the same GMS, read-only.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

MODEL_PROPERTIES_TOOL = "sdk_get_model_properties"


def model_properties_tool(gms_url: str, gms_token: str) -> BaseTool:
    graph: Any = None

    def read(urns: list[str]) -> tuple[str, dict[str, Any]]:
        """The current mlModelProperties aspect of each model URN (null when absent)."""
        nonlocal graph
        from datahub.ingestion.graph.client import DatahubClientConfig, DataHubGraph
        from datahub.metadata.schema_classes import MLModelPropertiesClass

        if graph is None:
            graph = DataHubGraph(DatahubClientConfig(server=gms_url, token=gms_token or None))
        results = {}
        for urn in urns:
            aspect = graph.get_aspect(urn, MLModelPropertiesClass)
            results[urn] = aspect.to_obj() if aspect is not None else None
        result = {"results": results}
        return json.dumps(result), {"structured_content": result}

    return StructuredTool.from_function(
        func=read,
        name=MODEL_PROPERTIES_TOOL,
        description=read.__doc__ or "",
        response_format="content_and_artifact",
    )
