"""Models linked to data by their training runs, the link DataHub's `mlflow` source writes (no mlFeature entities).

model --trainingJobs--> dataProcessInstance (the MLflow run) --dataProcessInstanceInput--> datasets. In lineage
terms (GMS relationship annotations) the run sits downstream of its input datasets and the model downstream of
the run. The inputs are `mlflow`-platform datasets named like the logged data (e.g. `main.applicant_features`);
one stands for a warehouse table through lineage when the catalog records some, otherwise through the same
qualified name on the mirror platform — and the path says "matched by name".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tools.catalog.conventions import Conventions
from tools.catalog.datahub import CatalogReader, LineageHit

RUN_TYPE = "DATA_PROCESS_INSTANCE"


def dataset_parts(urn: str) -> tuple[str | None, str, str]:
    """(platform, qualified name, env) of a dataset URN."""
    inner = urn.removeprefix("urn:li:dataset:(").removesuffix(")")
    platform_urn, _, rest = inner.partition(",")
    name, _, env = rest.rpartition(",")
    platform = platform_urn.removeprefix("urn:li:dataPlatform:") if platform_urn.startswith("urn:li:") else None
    return platform, name, env


@dataclass(frozen=True)
class Mirror:
    """A dataset on a mirror platform that stands for a warehouse table."""

    urn: str
    table_urn: str
    how: Literal["lineage", "name", "itself"]

    @property
    def note(self) -> str:
        platform, name, _ = dataset_parts(self.urn)
        if self.how == "name":
            return f"matched by name: {platform} dataset {name} has the same qualified name (no lineage recorded)"
        if self.how == "lineage":
            return f"{platform} dataset {name} is downstream of the table in lineage"
        return f"logged training data ({platform})"


@dataclass(frozen=True)
class TrainingLink:
    model_urn: str
    run_urn: str
    mirror: Mirror
    column: str
    precision: Literal["column", "inputs"]  # inputs: the logged schema is unknown; the model's inputs decide


@dataclass
class TrainingRunLinker:
    """Finds the training runs (and their models) that consumed a table or its mirrors. Caches per discovery."""

    reader: CatalogReader
    conventions: Conventions
    notes: list[str] = field(default_factory=list)  # coverage: what was reached but not linked, and why
    mirrors_found: list[Mirror] = field(default_factory=list)
    _runs: dict[str, list[str]] = field(default_factory=dict)  # mirror/table urn -> run urns
    _models: dict[str, list[str]] = field(default_factory=dict)  # run urn -> model urns
    _schemas: dict[str, set[str]] = field(default_factory=dict)
    _mirror_platforms_present: set[str] | None = None

    async def links(self, table_urn: str, columns: set[str], downstream: list[LineageHit]) -> list[TrainingLink]:
        """Every (model, run, column) reached from `columns` of `table_urn` through a training run."""
        out: list[TrainingLink] = []
        self._runs.setdefault(table_urn, sorted({h.urn for h in downstream if h.type == RUN_TYPE}))
        targets = [Mirror(table_urn, table_urn, "itself")] + await self._mirrors(table_urn, downstream)
        for mirror in targets:
            runs = self._runs.get(mirror.urn)
            if runs is None:
                hits = await self.reader.get_lineage(mirror.urn, max_hops=1)
                runs = self._runs[mirror.urn] = sorted({h.urn for h in hits if h.type == RUN_TYPE})
            if not runs:
                continue
            if mirror.how != "itself":
                self.mirrors_found.append(mirror)
            logged = await self._schema(mirror.urn)
            for run in runs:
                for model in await self.run_models(run):
                    for column in sorted(columns):
                        if logged and column not in logged:
                            self.notes.append(
                                f"{model}: its training run {run} read {mirror.urn}, which has no column {column}"
                            )
                            continue
                        precision: Literal["column", "inputs"] = "column" if logged else "inputs"
                        out.append(TrainingLink(model, run, mirror, column, precision))
        return out

    async def _mirrors(self, table_urn: str, downstream: list[LineageHit]) -> list[Mirror]:
        platform, name, env = dataset_parts(table_urn)
        if self.conventions.is_mirror(platform):
            return []
        by_lineage = [
            Mirror(h.urn, table_urn, "lineage")
            for h in downstream
            if h.type == "DATASET" and self.conventions.is_mirror(dataset_parts(h.urn)[0])
        ]
        by_name = []
        for mirror_platform in sorted(await self._present_mirror_platforms()):
            hits = await self.reader.search(
                name.rsplit(".", 1)[-1],
                filter=f"entity_type = dataset AND platform = {mirror_platform}",
                num_results=50,
            )
            for hit in hits:
                hit_platform, hit_name, hit_env = dataset_parts(hit.urn)
                same = hit_name.lower() == name.lower() and hit_env == env
                if same and hit_platform == mirror_platform and hit.urn not in {m.urn for m in by_lineage}:
                    by_name.append(Mirror(hit.urn, table_urn, "name"))
        return by_lineage + by_name

    async def _present_mirror_platforms(self) -> set[str]:
        """Mirror platforms that hold any dataset at all: one search each, then no name searches where none do."""
        if self._mirror_platforms_present is None:
            present = set()
            for platform in self.conventions.mirror_platforms:
                only = f"entity_type = dataset AND platform = {platform}"
                hits = await self.reader.search("*", filter=only, num_results=1)
                if hits:
                    present.add(platform)
            self._mirror_platforms_present = present
        return self._mirror_platforms_present

    async def _schema(self, urn: str) -> set[str]:
        if urn not in self._schemas:
            self._schemas[urn] = {f.field_path for f in await self.reader.list_schema_fields(urn)}
        return self._schemas[urn]

    async def run_models(self, run_urn: str) -> list[str]:
        if run_urn not in self._models:
            hits = await self.reader.get_lineage(run_urn, max_hops=1)
            self._models[run_urn] = sorted({h.urn for h in hits if h.type == "MLMODEL"})
            if not self._models[run_urn]:
                self.notes.append(f"training run {run_urn} produced no model that the catalog knows")
        return self._models[run_urn]
