"""Features as DataHub's `feast` source catalogues them, tied to the warehouse column they read, and the models
trained on them.

The feast source writes an mlFeature per feature (`mlFeatureProperties.sources`: the feature view's batch source)
and no column lineage; for PostgreSQL and every source but File, BigQuery, Snowflake, Kafka, Kinesis and Request
the source is `urn:li:dataset:(urn:li:dataPlatform:unknown,unknown,PROD)`. DataHub's mlflow source writes no model →
feature link: a model reaches its features through its training run's input, an `mlflow` dataset named after the
Feast feature service it was trained on. So, for the changed column (and every column it lands in):

- an mlFeature with the column's name whose source is that dataset is tied to it (matched by name: Feast reads a
  table column as the feature of the same name);
- an mlFeature whose source is unknown is tied through the Feast registry (`PROVENANCE_FEAST_REPO`, feast_registry.py)
  when its feature view reads that table, and otherwise makes the coverage incomplete, naming the feature and the
  fix — "nothing depends" is never said while such a feature shares the column's name;
- a linked feature reaches the models trained on a feature service holding it (the registry names the services)
  or, without a registry, on an mlflow dataset whose logged schema has a column of the feature's name (a name
  match, said so); the bound pipeline's inputs then decide whether the model reads it (prepare.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tools.catalog.coverage import Coverage
from tools.catalog.datahub import CatalogReader
from tools.catalog.feast_registry import FeastRegistry
from tools.catalog.training_runs import RUN_TYPE, dataset_parts

UNKNOWN_DATASET = "urn:li:dataset:(urn:li:dataPlatform:unknown,unknown,PROD)"
SEARCH_LIMIT = 100
MLFLOW_PLATFORM = "mlflow"
FEAST_REPO_ENV = "PROVENANCE_FEAST_REPO"


def feature_parts(urn: str) -> tuple[str, str]:
    """(namespace, name) of `urn:li:mlFeature:(<namespace>,<name>)`; the feast source's namespace is the view."""
    inner = urn.removeprefix("urn:li:mlFeature:(").removesuffix(")")
    namespace, _, name = inner.rpartition(",")
    return namespace, name


@dataclass(frozen=True)
class FeatureSourceLink:
    """An mlFeature tied to a column of a dataset the change reaches."""

    feature_urn: str
    name: str
    dataset_urn: str
    column: str
    note: str


@dataclass(frozen=True)
class TrainingInputLink:
    """A training run whose logged input holds a linked feature."""

    run_urn: str
    input_urn: str  # the mlflow dataset
    column: str
    note: str


@dataclass
class FeatureStoreLinker:
    reader: CatalogReader
    registry: FeastRegistry | None
    registry_problem: str | None = None  # PROVENANCE_FEAST_REPO is set but could not be read
    not_linked: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # the discovery moves these into its coverage
    _mlflow_schemas: dict[str, set[str]] | None = None

    async def features(
        self, holders: dict[str, set[str]], known: set[str], coverage: Coverage
    ) -> list[FeatureSourceLink]:
        """The mlFeatures named like a column in `holders` ({dataset: columns}) that read that dataset; `known`:
        features lineage already tied (skipped). Unknown sources without a registry go to the coverage."""
        columns = sorted({c for cs in holders.values() for c in cs})
        candidates: dict[str, str] = {}  # feature urn -> the column name it carries
        for column in columns:
            hits = await self.reader.search(column, filter="entity_type = mlFeature", num_results=SEARCH_LIMIT)
            if len(hits) >= SEARCH_LIMIT:
                coverage.unreadable.append(f"mlFeatures named {column}: more than {SEARCH_LIMIT} search results")
            for hit in hits:
                name = hit.name or feature_parts(hit.urn)[1]
                if name.lower() == column.lower() and hit.urn not in known:
                    candidates[hit.urn] = column
        if not candidates:
            return []
        props = await self.reader.sdk_aspects(sorted(candidates), ["mlFeatureProperties"])
        links: list[FeatureSourceLink] = []
        for urn, column in sorted(candidates.items()):
            sources = list(((props.get(urn) or {}).get("mlFeatureProperties") or {}).get("sources") or [])
            links += self._tie(urn, column, sources, holders, coverage)
        return links

    def _tie(
        self, urn: str, column: str, sources: list[str], holders: dict[str, set[str]], coverage: Coverage
    ) -> list[FeatureSourceLink]:
        namespace, name = feature_parts(urn)
        tied = [
            FeatureSourceLink(urn, name, s, column, f"matched by name: feature {name} of {namespace} reads {s}")
            for s in sources
            if column in holders.get(s, set())
        ]
        if tied:
            return tied
        if sources and UNKNOWN_DATASET not in sources:
            self.not_linked.append(f"{urn}: named like the column, but reads {', '.join(sources)}")
            return []
        if self.registry is None:
            fix = (
                f"the Feast registry could not be read: {self.registry_problem}"
                if self.registry_problem
                else f"set {FEAST_REPO_ENV} to the Feast repository so its feature view's table can be read"
            )
            coverage.unreadable.append(
                f"feature {urn}: named like the column {column}, but the catalog records its source as unknown "
                f"(DataHub's feast source writes that for PostgreSQL and most offline stores); {fix}, or ingest a "
                "source that records the link"
            )
            return []
        view = self.registry.view(namespace)
        if view is None:
            coverage.unreadable.append(
                f"feature {urn}: its source is unknown in the catalog and the Feast registry "
                f"({self.registry.where}) has no feature view {namespace}"
            )
            return []
        if view.table_urn is None:
            coverage.unreadable.append(
                f"feature {urn}: feature view {view.name} reads {view.source}, not a table Provenance can tie to "
                "a catalog dataset"
            )
            return []
        source_column = view.field_mapping.get(name, name)
        if source_column not in holders.get(view.table_urn, set()):
            self.not_linked.append(f"{urn}: feature view {view.name} reads {view.table_urn}, not this column")
            return []
        note = f"the Feast registry ({self.registry.where}): feature view {view.name} reads {view.source}"
        return [FeatureSourceLink(urn, name, view.table_urn, source_column, note)]

    async def training_inputs(self, feature_urn: str, name: str) -> list[TrainingInputLink]:
        """The training runs whose logged input holds the feature: a feature service of the registry that has it,
        or (no registry) an mlflow dataset whose logged schema has a column of its name."""
        namespace, _ = feature_parts(feature_urn)
        inputs: list[tuple[str, str]] = []  # (mlflow dataset, note)
        schemas = await self._mlflow_datasets()
        if self.registry is not None:
            services = self.registry.services_with(namespace, name)
            for urn, columns in schemas.items():
                logged = dataset_parts(urn)[1]
                if logged in services and name in columns:
                    inputs.append((urn, f"training data {logged} is the Feast feature service of that name"))
        else:
            for urn, columns in schemas.items():
                if name in columns:
                    logged = dataset_parts(urn)[1]
                    inputs.append((urn, f"matched by name: the logged training data {logged} has a column {name}"))
        links = []
        for input_urn, note in inputs:
            hits = await self.reader.get_lineage(input_urn, max_hops=1)
            for run in sorted({h.urn for h in hits if h.type == RUN_TYPE}):
                links.append(TrainingInputLink(run, input_urn, name, note))
        return links

    async def _mlflow_datasets(self) -> dict[str, set[str]]:
        """Every mlflow-platform dataset and its logged columns (read once per discovery)."""
        if self._mlflow_schemas is None:
            only = f"entity_type = dataset AND platform = {MLFLOW_PLATFORM}"
            hits = await self.reader.search("*", filter=only, num_results=SEARCH_LIMIT)
            self._mlflow_schemas = {
                h.urn: {f.field_path for f in await self.reader.list_schema_fields(h.urn)} for h in hits
            }
            if len(hits) >= SEARCH_LIMIT:
                self.unreadable.append(f"mlflow datasets: more than {SEARCH_LIMIT}, only the first were matched")
        return self._mlflow_schemas
