"""Column paths through DataHub's fine-grained (schemaField -> schemaField) lineage: the shortest path, with the
transform on each edge, from the changed field to every column it reaches. A column that lineage reaches but whose
edges could not be read gets a path ending in UNREADABLE_TRANSFORM, which must never pass for identity."""

from __future__ import annotations

from collections import deque

from tools.catalog.datahub import FineGrainedEdge
from tools.catalog.discovery import LineageStep

UNREADABLE_TRANSFORM = "UNKNOWN (column lineage too large to read through MCP)"


def field_urn(dataset: str, column: str) -> str:
    return f"urn:li:schemaField:({dataset},{column})"


def is_unreadable(path: list[LineageStep]) -> bool:
    return any(s.transform == UNREADABLE_TRANSFORM for s in path)


def unreadable_path(source: str, field: str, dataset_urn: str, column: str) -> list[LineageStep]:
    """Lineage reaches the column, but its column edges could not be read (e.g. an upstreamLineage aspect over the
    MCP server's size limit): the transform is unknown, which must not pass for identity."""
    return [
        LineageStep(dataset_urn=source, column=field),
        LineageStep(dataset_urn=dataset_urn, column=column, transform=UNREADABLE_TRANSFORM),
    ]


def column_paths(
    source_dataset: str, field: str, edges: dict[str, list[FineGrainedEdge]]
) -> dict[tuple[str, str], list[LineageStep]]:
    """Shortest column path (with transforms) from the source field to every reachable column."""
    by_upstream: dict[str, list[FineGrainedEdge]] = {}
    for dataset_edges in edges.values():
        for edge in dataset_edges:
            by_upstream.setdefault(edge.upstream, []).append(edge)
    start = field_urn(source_dataset, field)
    paths: dict[str, list[LineageStep]] = {start: [LineageStep(dataset_urn=source_dataset, column=field)]}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        for edge in by_upstream.get(current, []):
            if edge.downstream in paths:
                continue
            inner = edge.downstream.removeprefix("urn:li:schemaField:(").removesuffix(")")
            dataset, _, column = inner.rpartition(",")
            paths[edge.downstream] = [
                *paths[current],
                LineageStep(dataset_urn=dataset, column=column, transform=edge.transform),
            ]
            queue.append(edge.downstream)
    return {(steps[-1].dataset_urn, steps[-1].column): steps for steps in paths.values()}
