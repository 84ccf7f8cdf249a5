"""Which ML features and models depend on a dataset field, found through DataHub lineage over MCP.

DataHub's column lineage stops at datasets (schemaField -> schemaField edges only); features hang off
datasets and models off features. So: column-level downstream lineage (multi-hop) -> the landing columns ->
the features of each landing dataset whose name equals a landing column (column precision) -> the models
consuming those features -> their details. Only when no column lineage exists at all do we fall back to
dataset-level lineage and say so.
"""

from __future__ import annotations

import difflib
import time
from collections import deque
from typing import Literal

from pydantic import BaseModel, computed_field

from tools.catalog.datahub import CatalogReader, EntitySummary, FineGrainedEdge, SchemaField
from tools.catalog.session import CatalogError

IDENTITY_TRANSFORMS = frozenset({"", "NONE", "IDENTITY", "COPY", "CAST"})
UNREADABLE_TRANSFORM = "UNKNOWN (column lineage too large to read through MCP)"
PRODUCTION_TAG_NAMES = frozenset({"production", "prod"})
STAGE_PROPERTY_KEYS = ("mlflow.stage", "stage", "mlflow.alias", "mlflow.aliases", "lifecycle")
MAX_HOPS = 3  # the MCP server maps >= 3 to "3+", i.e. unlimited depth


class CatalogInputError(CatalogError):
    """The caller named something the catalog does not have; the message lists the closest matches."""


class LineageStep(BaseModel):
    dataset_urn: str
    column: str
    transform: str | None = None  # the transform on the edge INTO this column (None for the source)


class AffectedFeature(BaseModel):
    urn: str
    name: str
    dataset_urn: str
    column: str
    path: list[LineageStep]
    precision: Literal["column", "dataset"]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def non_identity_transforms(self) -> list[str]:
        return [s.transform for s in self.path[1:] if s.transform and s.transform.upper() not in IDENTITY_TRANSFORMS]


class AffectedModel(BaseModel):
    urn: str
    name: str
    production: bool
    production_evidence: str
    features: list[AffectedFeature]
    owners: list[str]
    tags: list[str]
    custom_properties: dict[str, str]
    related_documents: list[str]


class Discovery(BaseModel):
    dataset_urn: str
    field: str
    field_type: str
    field_native_type: str | None
    dataset: EntitySummary
    precision: Literal["column", "dataset", "none"]
    datasets_searched: list[str]
    features: list[AffectedFeature]
    models: list[AffectedModel]
    mcp_calls: int
    duration_ms: float

    @property
    def production_models(self) -> list[AffectedModel]:
        return [m for m in self.models if m.production]

    @property
    def other_models(self) -> list[AffectedModel]:
        return [m for m in self.models if not m.production]


def production_status(entity: EntitySummary) -> tuple[bool, str]:
    """DESIGN §4: the `production` tag (global tag here; MLflow stage tags are not exposed by GMS GraphQL)
    or an MLflow-style stage/alias property."""
    for tag in entity.tags:
        if tag.removeprefix("urn:li:tag:").lower() in PRODUCTION_TAG_NAMES:
            return True, f"tag {tag}"
    for key in STAGE_PROPERTY_KEYS:
        values = {v.strip().lower() for v in entity.custom_properties.get(key, "").split(",")}
        if values & PRODUCTION_TAG_NAMES:
            return True, f"property {key}={entity.custom_properties[key]}"
    return False, "no production tag or stage"


def closest(name: str, candidates: list[str], n: int = 3) -> list[str]:
    return difflib.get_close_matches(name, candidates, n=n, cutoff=0.3) or candidates[:n]


def _field_urn(dataset: str, column: str) -> str:
    return f"urn:li:schemaField:({dataset},{column})"


def _feature_name(urn: str) -> str:
    return urn.rsplit(",", 1)[-1].rstrip(")")


class Discoverer:
    def __init__(self, reader: CatalogReader) -> None:
        self.reader = reader

    async def require_dataset(self, urn: str) -> EntitySummary:
        if not urn.startswith("urn:li:dataset:"):
            raise CatalogInputError(f"'{urn}' is not a dataset URN; expected urn:li:dataset:(<platform>,<name>,<env>)")
        entity = await self.reader.get_entity(urn)
        if entity is not None:
            return entity
        name = urn.split(",")[1] if urn.count(",") >= 2 else urn
        hits = await self.reader.search(name.split(".")[-1], filter="entity_type = dataset", num_results=20)
        suggestions = closest(urn, [h.urn for h in hits])
        raise CatalogInputError(
            f"dataset {urn} is not in the catalog. Closest matches: {', '.join(suggestions) or 'none'}"
        )

    async def require_field(self, dataset_urn: str, field: str) -> SchemaField:
        fields = await self.reader.list_schema_fields(dataset_urn)
        for candidate in fields:
            if candidate.field_path == field:
                return candidate
        names = [f.field_path for f in fields]
        raise CatalogInputError(
            f"field '{field}' is not in {dataset_urn}. Closest matches: {', '.join(closest(field, names)) or 'none'}"
        )

    async def discover(self, dataset_urn: str, field: str) -> Discovery:
        started = time.perf_counter()
        calls_before = len(self.reader.session.calls)
        dataset = await self.require_dataset(dataset_urn)
        schema_field = await self.require_field(dataset_urn, field)

        hits = await self.reader.get_lineage(dataset_urn, column=field, max_hops=MAX_HOPS, max_results=200)
        landing = {h.urn: h.lineage_columns for h in hits if h.type == "DATASET"}
        precision: Literal["column", "dataset", "none"] = "column" if landing else "none"
        edges = await self.reader.fine_grained_lineage(sorted(landing))
        paths = _column_paths(dataset_urn, field, edges)

        features: list[AffectedFeature] = []
        searched = [dataset_urn, *sorted(landing)]
        direct: list[str] = []  # the datasets one hop downstream of the source
        for ds_urn in searched:
            columns = {field} if ds_urn == dataset_urn else set(landing[ds_urn])
            hits = await self.reader.get_lineage(ds_urn, max_hops=1)
            if ds_urn == dataset_urn:
                direct = sorted({h.urn for h in hits if h.type == "DATASET"})
            for hit in hits:
                name = hit.name or _feature_name(hit.urn)
                if hit.type == "MLFEATURE" and name in columns:
                    features.append(
                        AffectedFeature(
                            urn=hit.urn,
                            name=name,
                            dataset_urn=ds_urn,
                            column=name,
                            path=paths.get((ds_urn, name)) or _unreadable_path(dataset_urn, field, ds_urn, name),
                            precision="column",
                        )
                    )

        if not landing and features:
            precision = "column"  # features of this very dataset, matched by name: that is the column answer
        elif not landing and await self._column_lineage_leaves(dataset_urn, direct):
            precision = "column"  # the datasets downstream record column lineage, and none of it is this field's
        elif not landing:
            # No column lineage recorded: every feature downstream of the dataset may be affected.
            for hit in await self.reader.get_lineage(dataset_urn, max_hops=MAX_HOPS):
                if hit.type == "MLFEATURE":
                    precision = "dataset"
                    name = hit.name or _feature_name(hit.urn)
                    features.append(
                        AffectedFeature(
                            urn=hit.urn,
                            name=name,
                            dataset_urn=dataset_urn,
                            column=name,
                            path=[LineageStep(dataset_urn=dataset_urn, column=field)],
                            precision="dataset",
                        )
                    )

        consumers: dict[str, list[AffectedFeature]] = {}
        for feature in features:
            for hit in await self.reader.get_lineage(feature.urn, max_hops=1):
                if hit.type == "MLMODEL":
                    consumers.setdefault(hit.urn, []).append(feature)

        details = await self.reader.get_entities(sorted(consumers))
        models = []
        for urn, used in sorted(consumers.items()):
            entity = details[urn]
            if entity is None:
                raise CatalogError(f"model {urn} is in lineage but get_entities cannot read it")
            production, why = production_status(entity)
            models.append(
                AffectedModel(
                    urn=urn,
                    name=entity.name or urn,
                    production=production,
                    production_evidence=why,
                    features=used,
                    owners=entity.owners,
                    tags=entity.tags,
                    custom_properties=entity.custom_properties,
                    related_documents=entity.related_documents,
                )
            )
        return Discovery(
            dataset_urn=dataset_urn,
            field=field,
            field_type=schema_field.type,
            field_native_type=schema_field.native_data_type,
            dataset=dataset,
            precision=precision,
            datasets_searched=searched,
            features=features,
            models=models,
            mcp_calls=len(self.reader.session.calls) - calls_before,
            duration_ms=(time.perf_counter() - started) * 1e3,
        )

    async def _column_lineage_leaves(self, dataset_urn: str, direct: list[str]) -> bool:
        """True when every dataset directly downstream records column lineage from this dataset."""
        if not direct:
            return False
        recorded = await self.reader.fine_grained_lineage(direct)
        prefix = f"urn:li:schemaField:({dataset_urn},"
        return all(any(e.upstream.startswith(prefix) for e in recorded.get(urn, [])) for urn in direct)


def _unreadable_path(source: str, field: str, dataset_urn: str, column: str) -> list[LineageStep]:
    """Lineage reaches the column, but its column edges could not be read (e.g. an upstreamLineage aspect over the
    MCP server's size limit): the transform is unknown, which must not pass for identity."""
    return [
        LineageStep(dataset_urn=source, column=field),
        LineageStep(dataset_urn=dataset_urn, column=column, transform=UNREADABLE_TRANSFORM),
    ]


def _column_paths(
    source_dataset: str, field: str, edges: dict[str, list[FineGrainedEdge]]
) -> dict[tuple[str, str], list[LineageStep]]:
    """Shortest column path (with transforms) from the source field to every reachable column."""
    by_upstream: dict[str, list[FineGrainedEdge]] = {}
    for dataset_edges in edges.values():
        for edge in dataset_edges:
            by_upstream.setdefault(edge.upstream, []).append(edge)
    start = _field_urn(source_dataset, field)
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
