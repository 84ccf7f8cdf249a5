"""In-memory reverse lineage index over the aspects of a DataHub Lite file.

DataHub Lite only indexes browse paths, so answering "what is downstream of X" would mean scanning every
aspect on every query. The index is built once when the catalog opens and then updated per written aspect:
each (urn, aspect) pair remembers the edges it contributed, so rewriting an aspect replaces exactly those.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Direction = Literal["UPSTREAM", "DOWNSTREAM"]

# Aspects that create edges; everything else is ignored by the index.
INDEXED_ASPECTS = frozenset(
    {
        "upstreamLineage",
        "mlFeatureProperties",
        "mlModelProperties",
        "documentInfo",
        "mlPrimaryKeyProperties",
        "dataProcessInstanceInput",
        "dataProcessInstanceOutput",
        "assertionInfo",
    }
)


@dataclass(frozen=True)
class Edge:
    kind: Literal["entity", "field", "document", "assertion"]
    upstream: str
    downstream: str
    transform: str | None = None


def edges_from_aspect(urn: str, aspect_name: str, aspect: Mapping[str, Any]) -> list[Edge]:
    """The lineage edges one aspect contributes, following GMS's relationship annotations (docs/design.md §3.1)."""
    edges: list[Edge] = []
    if aspect_name == "upstreamLineage":
        for upstream in aspect.get("upstreams") or []:
            edges.append(Edge("entity", upstream["dataset"], urn))
        for fgl in aspect.get("fineGrainedLineages") or []:
            transform = fgl.get("transformOperation")
            for up in fgl.get("upstreams") or []:
                for down in fgl.get("downstreams") or []:
                    edges.append(Edge("field", up, down, transform))
    elif aspect_name in ("mlFeatureProperties", "mlPrimaryKeyProperties"):
        edges += [Edge("entity", source, urn) for source in aspect.get("sources") or []]
    elif aspect_name == "mlModelProperties":
        edges += [Edge("entity", feature, urn) for feature in aspect.get("mlFeatures") or []]
        # TrainedBy (isLineage): the model sits downstream of the jobs / runs that trained it.
        edges += [Edge("entity", job, urn) for job in aspect.get("trainingJobs") or []]
        # MemberOf is a lineage edge with isUpstream=false: the group sits downstream of the model.
        edges += [Edge("entity", urn, group) for group in aspect.get("groups") or []]
    elif aspect_name == "dataProcessInstanceInput":
        # Only inputEdges is a lineage relationship (DataProcessInstanceConsumes); the plain `inputs` list is not.
        edges += [Edge("entity", e["destinationUrn"], urn) for e in aspect.get("inputEdges") or []]
    elif aspect_name == "dataProcessInstanceOutput":
        # DataProcessInstanceProduces has isUpstream=false: the outputs sit downstream of the run.
        edges += [Edge("entity", urn, e["destinationUrn"]) for e in aspect.get("outputEdges") or []]
    elif aspect_name == "assertionInfo":
        # Asserts: the assertion is about the entity its custom / dataset assertion names (not lineage).
        for key, entity_key in (("customAssertion", "entity"), ("datasetAssertion", "dataset")):
            entity = (aspect.get(key) or {}).get(entity_key)
            if entity:
                edges.append(Edge("assertion", entity, urn))
    elif aspect_name == "documentInfo":
        edges += [Edge("document", related["asset"], urn) for related in aspect.get("relatedAssets") or []]
    return edges


@dataclass
class LineageIndex:
    _contributions: dict[tuple[str, str], list[Edge]] = field(default_factory=dict)
    _down: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(dict))
    _up: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(dict))
    # Two aspects may declare the same edge; it exists while at least one of them does.
    _refs: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    def replace(self, urn: str, aspect_name: str, aspect: Mapping[str, Any] | None) -> None:
        """Record the current value of one aspect (None = removed)."""
        if aspect_name not in INDEXED_ASPECTS:
            return
        for edge in self._contributions.pop((urn, aspect_name), []):
            self._unlink(edge)
        if aspect is None:
            return
        edges = edges_from_aspect(urn, aspect_name, aspect)
        self._contributions[(urn, aspect_name)] = edges
        for edge in edges:
            self._refs[(edge.kind, edge.upstream, edge.downstream)] += 1
            self._down[edge.kind].setdefault(edge.upstream, set()).add(edge.downstream)
            self._up[edge.kind].setdefault(edge.downstream, set()).add(edge.upstream)

    def _unlink(self, edge: Edge) -> None:
        ref = (edge.kind, edge.upstream, edge.downstream)
        self._refs[ref] -= 1
        if self._refs[ref] > 0:
            return
        self._refs.pop(ref, None)
        for table, key, value in (
            (self._down[edge.kind], edge.upstream, edge.downstream),
            (self._up[edge.kind], edge.downstream, edge.upstream),
        ):
            neighbours = table.get(key)
            if neighbours is not None:
                neighbours.discard(value)
                if not neighbours:
                    del table[key]

    def rebuild(self, rows: Iterable[tuple[str, str, Mapping[str, Any]]]) -> None:
        self._contributions.clear()
        self._down.clear()
        self._up.clear()
        self._refs.clear()
        for urn, aspect_name, aspect in rows:
            self.replace(urn, aspect_name, aspect)

    def neighbours(self, urn: str, direction: Direction, kind: Literal["entity", "field"]) -> set[str]:
        table = self._down if direction == "DOWNSTREAM" else self._up
        return table[kind].get(urn, set())

    def documents_about(self, asset_urn: str) -> set[str]:
        return self._down["document"].get(asset_urn, set())

    def assertions_about(self, entity_urn: str) -> set[str]:
        return self._down["assertion"].get(entity_urn, set())

    def paths(
        self, start: str, direction: Direction, max_degree: int, kind: Literal["entity", "field"], limit: int = 0
    ) -> list[list[str]] | None:
        """Every simple path from start, breadth first, up to max_degree hops (cycles are cut).

        With a limit, None as soon as more than `limit` paths exist (dense graphs stop early)."""
        found: list[list[str]] = []
        frontier = [[start]]
        for _ in range(max_degree):
            next_frontier = []
            for path in frontier:
                for nxt in sorted(self.neighbours(path[-1], direction, kind)):
                    if nxt not in path:
                        next_frontier.append([*path, nxt])
            found += next_frontier
            if limit and len(found) > limit:
                return None
            frontier = next_frontier
            if not frontier:
                break
        return found

    def edge_count(self) -> int:
        return sum(len(edges) for edges in self._contributions.values())
