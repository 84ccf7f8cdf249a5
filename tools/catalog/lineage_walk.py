"""Which ML features and models depend on a dataset field, found through DataHub lineage over MCP.

DataHub's column lineage stops at datasets (schemaField -> schemaField edges only); features hang off
datasets and models off features. So: column-level downstream lineage (multi-hop) -> the landing columns ->
the features of each landing dataset whose name equals a landing column (column precision) -> the models
consuming those features -> their details. Only when no column lineage exists at all do we fall back to
dataset-level lineage and say so.

Catalogs filled by DataHub's `mlflow` source have no features: there the link is the training run
(`training_runs.py`). Both links count; every model reached is listed with how it was reached, and what could not
be read is recorded in the coverage, so that "nothing depends on this field" is said only after the whole graph
was read. The result types are in `discovery.py`, the column paths in `column_paths.py`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Literal

from tools.catalog.calls import ToolCallRecord, collect_calls
from tools.catalog.column_paths import column_paths, is_unreadable, unreadable_path
from tools.catalog.conventions import Conventions, load_conventions
from tools.catalog.coverage import Coverage, ModelReach
from tools.catalog.datahub import CatalogReader, LineageHit, SchemaField
from tools.catalog.discovery import AffectedFeature, AffectedModel, Discovery, LineageStep
from tools.catalog.entity import EntitySummary
from tools.catalog.feast_registry import FeastRegistry, FeastRegistryError, registry_from_environment
from tools.catalog.feature_store import FeatureStoreLinker
from tools.catalog.feature_subject import FeatureSubject, FeatureSubjectError, resolve_features, source_only_fields
from tools.catalog.mlflow_live import LiveRegistry, RegistryState
from tools.catalog.production import AspectMarkers, needs_aspects, production_marker
from tools.catalog.resolve import CatalogInputError, dataset_name, require_dataset, require_field, resolve_field
from tools.catalog.row_uses import RowUses
from tools.catalog.session import CatalogToolError
from tools.catalog.siblings import Sibling, SiblingFinder, with_sibling_edges
from tools.catalog.sql_source import SqlSource, not_carried
from tools.catalog.training_runs import TrainingLink, TrainingRunLinker

log = logging.getLogger(__name__)

MAX_HOPS = 3  # the MCP server maps >= 3 to "3+", i.e. unlimited depth
MAX_LINEAGE_RESULTS = 200


def _feature_name(urn: str) -> str:
    return urn.rsplit(",", 1)[-1].rstrip(")")


class Discoverer:
    """Walks the catalog from one dataset field to the models that depend on it (`discover`)."""

    def __init__(
        self,
        reader: CatalogReader,
        conventions: Conventions | None = None,
        registry: LiveRegistry | None | Literal["environment"] = "environment",
        feast: FeastRegistry | None = None,
    ) -> None:
        """`registry` defaults to the MLflow registry MLFLOW_TRACKING_URI names (none when unset; None: no registry,
        as loaded once by tools/catalog/handle.py); `feast` to the Feast registry PROVENANCE_FEAST_REPO names (none
        when unset)."""
        self.reader = reader
        self.conventions = conventions or load_conventions()
        self.registry = LiveRegistry.from_environment() if registry == "environment" else registry
        self._source_only: dict[str, dict[str, SchemaField]] = {}
        self._hops: dict[str, list[LineageHit]] = {}
        self._row_uses = RowUses(reader)
        self.feast_problem: str | None = None  # PROVENANCE_FEAST_REPO set but unreadable: said where it matters
        try:
            self.feast = feast if feast is not None else registry_from_environment()
        except FeastRegistryError as exc:
            self.feast, self.feast_problem = None, str(exc)

    async def require_dataset(self, urn: str) -> EntitySummary:
        """The dataset's catalog entry, or a CatalogInputError naming the closest datasets (resolve.py). A dataset no
        source ingested but mlFeatures name as their source stands, with the features' names as its fields."""
        try:
            return await require_dataset(self.reader, urn)
        except CatalogInputError as missing:
            try:
                fields = self._source_only.get(urn) or await source_only_fields(self.reader, urn)
            except CatalogToolError as unreadable:  # a URN the catalog cannot even walk: the dataset is not there
                log.info("no mlFeature source check for %s: %s", urn, unreadable)
                raise missing from unreadable
            if not fields:
                raise
            self._source_only[urn] = fields
            return EntitySummary(
                urn=urn, type="DATASET", name=dataset_name(urn), description="known only as the source of mlFeatures"
            )

    async def field_names(self, dataset_urn: str) -> list[str]:
        """The dataset's fields (for one known only as the source of mlFeatures: the columns they read); call
        require_dataset first."""
        source_only = self._source_only.get(dataset_urn)
        if source_only is not None:
            return sorted(source_only)
        return [f.field_path for f in await self.reader.list_schema_fields(dataset_urn)]

    async def require_field(self, dataset_urn: str, field: str) -> SchemaField:
        """The field's schema entry, or a CatalogInputError naming the closest fields (resolve.py)."""
        source_only = self._source_only.get(dataset_urn)
        if source_only is None:
            return await require_field(self.reader, dataset_urn, field)
        if field in source_only:
            return source_only[field]
        raise CatalogInputError(
            f"field '{field}' is not read by any mlFeature of {dataset_urn} (the catalog has no schema for it; "
            f"its features read {', '.join(sorted(source_only))})"
        )

    async def resolve_features(self, text: str) -> list[FeatureSubject]:
        """The features a person named (a feature, a feature view, a feature service) and the columns they read."""
        return await resolve_features(self.reader, text, self.feast)

    async def resolve_subject(self, text: str) -> list[tuple[str, str]]:
        """The (dataset, field) pairs a person's words name: a dataset field (resolve.py's rules), else a feature,
        a feature view or a feature service (the columns they read). Neither: the field's error, naming both."""
        if text.strip().startswith(("urn:li:mlFeature:", "urn:li:mlFeatureTable:")):
            return _pairs(await self.resolve_features(text))
        try:
            return [await resolve_field(self.reader, text, self.conventions)]
        except CatalogInputError as as_field:
            try:
                return _pairs(await self.resolve_features(text))
            except FeatureSubjectError as as_feature:
                raise CatalogInputError(f"{as_field} (as a feature: {as_feature})") from as_field

    async def discover(self, dataset_urn: str, field: str) -> Discovery:
        with collect_calls() as calls:  # this discovery's calls only, whatever else the session serves meanwhile
            return await self._discover(dataset_urn, field, calls)

    async def _discover(self, dataset_urn: str, field: str, calls: list[ToolCallRecord]) -> Discovery:
        started = time.perf_counter()
        coverage = Coverage(conventions_sha256=self.conventions.sha256)
        dataset = await self.require_dataset(dataset_urn)
        schema_field = await self.require_field(dataset_urn, field)

        siblings = SiblingFinder(self.reader, self.conventions)
        landing, pairs, paths = await self._paths(coverage, siblings, dataset_urn, field)
        precision: Literal["column", "dataset", "none"] = "column" if landing else "none"

        features: list[AffectedFeature] = []
        searched = [dataset_urn, *sorted(landing)]
        direct: list[str] = []  # the datasets one hop downstream of the source
        linker = TrainingRunLinker(self.reader, self.conventions)
        run_links: list[tuple[str, TrainingLink]] = []  # (searched dataset, link)
        for ds_urn in searched:
            columns = {field} if ds_urn == dataset_urn else set(landing[ds_urn])
            hits = await self._one_hop(coverage, ds_urn)
            if ds_urn == dataset_urn:
                direct = sorted({h.urn for h in hits if h.type == "DATASET"})
            for hit in hits:
                name = hit.name or _feature_name(hit.urn)
                if hit.type == "MLFEATURE" and name in columns:
                    path = paths.get((ds_urn, name)) or unreadable_path(dataset_urn, field, ds_urn, name)
                    features.append(self._link(hit.urn, name, ds_urn, name, path, "column", "feature"))
            run_links += [(ds_urn, link) for link in await linker.links(ds_urn, columns, hits)]

        if not landing and features:
            precision = "column"  # features of this very dataset, matched by name: that is the column answer
        elif not landing and await self._column_lineage_leaves(dataset_urn, direct):
            precision = "column"  # the datasets downstream record column lineage, and none of it is this field's
        elif not landing:
            # No column lineage recorded: every feature downstream of the dataset may be affected.
            for hit in await self._lineage(coverage, dataset_urn, max_hops=MAX_HOPS):
                if hit.type == "MLFEATURE":
                    precision = "dataset"
                    name = hit.name or _feature_name(hit.urn)
                    step = [LineageStep(dataset_urn=dataset_urn, column=field)]
                    features.append(self._link(hit.urn, name, dataset_urn, name, step, "dataset", "feature"))

        store = FeatureStoreLinker(self.reader, self.feast, self.feast_problem)
        holders = {dataset_urn: {field}, **landing}
        for found in await store.features(holders, {f.urn for f in features}, coverage):
            source = [LineageStep(dataset_urn=dataset_urn, column=field)] if found.dataset_urn == dataset_urn else None
            path = (
                source
                or paths.get((found.dataset_urn, found.column))
                or unreadable_path(dataset_urn, field, found.dataset_urn, found.column)
            )
            path = [*path, LineageStep(dataset_urn=found.dataset_urn, column=found.name, note=found.note)]
            features.append(
                self._link(found.feature_urn, found.name, found.dataset_urn, found.column, path, "column", "feature")
            )
            precision = "column"

        consumers: dict[str, list[AffectedFeature]] = {}
        for feature in features:
            for hit in await self._lineage(coverage, feature.urn, max_hops=1):
                if hit.type == "MLMODEL":
                    consumers.setdefault(hit.urn, []).append(feature)
        # A mirror dataset matched by name from a table and from its dbt node is one link, not two: the shorter
        # path (the one without the sibling hop) stands for both.
        run_features: dict[tuple[str, str, str, str], AffectedFeature] = {}
        for ds_urn, link in run_links:
            source_path = [LineageStep(dataset_urn=dataset_urn, column=field)] if ds_urn == dataset_urn else None
            path = (
                source_path
                or paths.get((ds_urn, link.column))
                or unreadable_path(dataset_urn, field, ds_urn, link.column)
            )
            if link.mirror.how != "itself":
                path = [*path, LineageStep(dataset_urn=link.mirror.urn, column=link.column, note=link.mirror.note)]
            key = (link.model_urn, link.run_urn, link.column, link.mirror.urn)
            known = run_features.get(key)
            if known is None or len(path) < len(known.path):
                run_features[key] = self._link(
                    link.run_urn, link.column, ds_urn, link.column, path, link.precision, "training_run"
                )
        # A feature no model consumes in lineage (DataHub's mlflow source writes no model -> feature edge) reaches
        # the models trained on it through their runs' logged input (feature_store.py).
        consumed = {f.urn for used in consumers.values() for f in used}
        for linked in [
            f for f in features if f.link == "feature" and f.precision == "column" and f.urn not in consumed
        ]:
            for found_input in await store.training_inputs(linked.urn, linked.name):
                input_step = LineageStep(
                    dataset_urn=found_input.input_urn, column=found_input.column, note=found_input.note
                )
                for model_urn in await linker.run_models(found_input.run_urn):
                    key = (model_urn, found_input.run_urn, found_input.column, found_input.input_urn)
                    if key not in run_features:
                        run_features[key] = self._link(
                            found_input.run_urn,
                            found_input.column,
                            linked.dataset_urn,
                            found_input.column,
                            [*linked.path, input_step],
                            "column",
                            "training_run",
                        )
        for (model_urn, *_), feature in run_features.items():
            consumers.setdefault(model_urn, []).append(feature)

        models = await self._models(consumers, coverage)
        coverage.datasets_searched = searched
        coverage.mirrors = sorted({f"{m.urn} for {m.table_urn} ({m.how})" for m in linker.mirrors_found})
        coverage.not_linked = sorted(set(linker.notes) | set(store.not_linked))
        coverage.unreadable += sorted(set(store.unreadable))
        coverage.siblings = sorted({f"{a} = {b.urn} ({b.how})" for a, b in pairs})
        coverage.unreadable += sorted(set(siblings.unresolved))
        coverage.unreadable += sorted(
            {f"column transforms into {f.dataset_urn} ({f.column})" for f in features if is_unreadable(f.path)}
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
            mcp_calls=len(calls),
            duration_ms=(time.perf_counter() - started) * 1e3,
            coverage=coverage,
        )

    async def column_paths_to(self, dataset_urn: str, field: str) -> dict[tuple[str, str], list[LineageStep]]:
        """Every column the field reaches by column lineage, with the path to it, each step carrying its SQL
        expression or why it is unknown: what each downstream column undergoes, whether a model reads it or not."""
        coverage = Coverage(conventions_sha256=self.conventions.sha256)
        await self.require_field(dataset_urn, field)
        *_, paths = await self._paths(coverage, SiblingFinder(self.reader, self.conventions), dataset_urn, field)
        return paths

    async def _paths(
        self, coverage: Coverage, siblings: SiblingFinder, dataset_urn: str, field: str
    ) -> tuple[dict[str, set[str]], list[tuple[str, Sibling]], dict[tuple[str, str], list[LineageStep]]]:
        self._hops = {}
        landing, pairs = await self._landing(coverage, siblings, dataset_urn, field)
        edges = await self.reader.fine_grained_lineage(sorted(landing))
        edges = with_sibling_edges(edges, pairs, {dataset_urn: {field}, **landing})
        for edge in self._row_uses.edges:
            downstream = edge.downstream.removeprefix("urn:li:schemaField:(").rsplit(",", 1)[0]
            edges.setdefault(downstream, []).append(edge)
        paths = column_paths(dataset_urn, field, edges)
        by_urn = _sibling_map(pairs)
        return landing, pairs, await SqlSource(self.reader, self.conventions, by_urn).annotate(paths, edges)

    async def _landing(
        self, coverage: Coverage, siblings: SiblingFinder, dataset_urn: str, field: str
    ) -> tuple[dict[str, set[str]], list[tuple[str, Sibling]]]:
        """Every dataset (and its columns) the field reaches by column lineage, walking a dbt node and the table it
        materialises as one node: from each newly reached sibling the walk goes on (the embedded catalog's graph
        from a dbt node may dead-end where a real GMS would link the sibling)."""
        landing: dict[str, set[str]] = {}
        pairs: list[tuple[str, Sibling]] = []
        walked: set[tuple[str, str]] = set()
        frontier = [(dataset_urn, field)]
        row_uses = self._row_uses = RowUses(self.reader)
        while frontier:
            for urn, column in frontier:
                walked.add((urn, column))
                for hit in await self._lineage(coverage, urn, column=column, max_hops=MAX_HOPS):
                    if hit.type == "DATASET" and hit.urn != dataset_urn:
                        landing.setdefault(hit.urn, set()).update(hit.lineage_columns)
            holders = {dataset_urn: {field}, **landing}
            frontier = []
            for urn, found in (await siblings.siblings(sorted(holders))).items():
                for sibling in found:
                    if (urn, sibling) not in pairs:
                        pairs.append((urn, sibling))
                    for column in sorted(holders[urn]):
                        if (sibling.urn, column) in walked or sibling.urn == dataset_urn:
                            continue
                        landing.setdefault(sibling.urn, set()).add(column)
                        frontier.append((sibling.urn, column))
            # Columns reached with no column edge: a downstream SQL filters, joins, groups or orders by a column.
            row_uses.siblings = _sibling_map(pairs)
            holders = {dataset_urn: {field}, **landing}
            below = {u: [h.urn for h in await self._one_hop(coverage, u) if h.type == "DATASET"] for u in holders}
            for target, columns in (await row_uses.find(holders, below)).items():
                for column in sorted(columns):
                    if (target, column) not in walked and target != dataset_urn:
                        landing.setdefault(target, set()).add(column)
                        frontier.append((target, column))
        return landing, pairs

    async def _one_hop(self, coverage: Coverage, urn: str) -> list[LineageHit]:
        """The entities one hop downstream of a dataset, read once per discovery (the feature search reuses it)."""
        if urn not in self._hops:
            self._hops[urn] = await self._lineage(coverage, urn, max_hops=1)
        return self._hops[urn]

    def _link(
        self,
        urn: str,
        name: str,
        dataset_urn: str,
        column: str,
        path: list[LineageStep],
        precision: Literal["column", "dataset", "inputs"],
        link: Literal["feature", "training_run"],
    ) -> AffectedFeature:
        return AffectedFeature(
            urn=urn,
            name=name,
            dataset_urn=dataset_urn,
            column=column,
            path=path,
            precision=precision,
            link=link,
            non_identity_transforms=not_carried(path, self.conventions),
        )

    async def _lineage(
        self, coverage: Coverage, urn: str, *, column: str | None = None, max_hops: int
    ) -> list[LineageHit]:
        hits = await self.reader.get_lineage(urn, column=column, max_hops=max_hops, max_results=MAX_LINEAGE_RESULTS)
        if len(hits) >= MAX_LINEAGE_RESULTS:
            what = f"{urn} column {column}" if column else urn
            coverage.unreadable.append(f"downstream lineage of {what}: more than {MAX_LINEAGE_RESULTS} results")
        return hits

    async def _models(self, consumers: dict[str, list[AffectedFeature]], coverage: Coverage) -> list[AffectedModel]:
        details = await self.reader.get_entities(sorted(consumers))
        unreadable = [urn for urn, entity in details.items() if entity is None]
        coverage.unreadable += [f"model {urn}: in lineage, but get_entities cannot read it" for urn in unreadable]
        readable = {urn: e for urn, e in details.items() if e is not None}
        markers = self.conventions.production
        to_read = [urn for urn, e in readable.items() if needs_aspects(e, markers)]
        aspect_markers = await self.reader.marker_aspects(to_read)
        live: dict[str, RegistryState] = {}
        if self.registry is not None:
            live = await asyncio.to_thread(self.registry.states, sorted(readable))
        read = {
            urn: AspectMarkers(
                property_tags=aspect_markers.get(urn, ([], []))[0],
                aliases=aspect_markers.get(urn, ([], []))[1],
                registry_stage=live[urn].stage if urn in live else None,
                registry_aliases=live[urn].aliases if urn in live else [],
                registry_where=live[urn].where if urn in live else None,
            )
            for urn in readable
        }
        models = []
        for urn, entity in sorted(readable.items()):
            marker = production_marker(entity, markers, read[urn])
            used = consumers[urn]
            models.append(
                AffectedModel(
                    urn=urn,
                    name=entity.name or urn,
                    production=marker is not None,
                    production_evidence=marker or "no production marker; see conventions.yaml",
                    features=used,
                    owners=entity.owners,
                    tags=entity.tags,
                    custom_properties=entity.custom_properties,
                    related_documents=entity.related_documents,
                )
            )
            coverage.models_reached.append(
                ModelReach(
                    urn=urn,
                    name=entity.name or urn,
                    production=marker is not None,
                    marker=marker or "no production marker",
                    links=sorted({_describe(f) for f in used}),
                )
            )
        return models

    async def _column_lineage_leaves(self, dataset_urn: str, direct: list[str]) -> bool:
        """True when every dataset directly downstream records column lineage from this dataset."""
        if not direct:
            return False
        recorded = await self.reader.fine_grained_lineage(direct)
        prefix = f"urn:li:schemaField:({dataset_urn},"
        return all(any(e.upstream.startswith(prefix) for e in recorded.get(urn, [])) for urn in direct)


def _pairs(subjects: list[FeatureSubject]) -> list[tuple[str, str]]:
    return list(dict.fromkeys((s.dataset_urn, s.column) for s in subjects))


def _describe(link: AffectedFeature) -> str:
    if link.link == "feature":
        return f"feature {link.urn} (column {link.column}, {link.precision} precision)"
    notes = [s.note for s in link.path if s.note]
    tail = f"; {notes[-1]}" if notes else ""
    return f"training run {link.urn} (column {link.column}{tail})"


def _sibling_map(pairs: list[tuple[str, Sibling]]) -> dict[str, list[Sibling]]:
    """Each dataset's siblings, both ways round."""
    by_urn: dict[str, list[Sibling]] = {}
    for urn, sibling in pairs:
        by_urn.setdefault(urn, []).append(sibling)
        by_urn.setdefault(sibling.urn, []).append(Sibling(urn, sibling.how))
    return by_urn
