"""A dbt node and the warehouse table it materialises are one thing, seen twice.

DataHub's dbt source writes a `dbt`-platform dataset per node and leaves the link to the warehouse table (the
`siblings` aspect) to the DataHub server's sibling hook. A real GMS therefore has the aspect; DataHub Lite (the
embedded catalog) has no hook, so there the hook's rule applies: a dbt node and the dataset of the same qualified
name on another platform (the dbt target platform) are siblings. Discovery walks both as one node, so a change
named at a dbt node reaches what reads its table, and the reverse.

A dbt node whose table cannot be found (none, or several of that name) is reported, never passed over: the lineage
beyond it may be missing from the catalog, so the coverage is incomplete.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tools.catalog.column_paths import field_urn
from tools.catalog.conventions import Conventions
from tools.catalog.datahub import CatalogReader, FineGrainedEdge
from tools.catalog.training_runs import dataset_parts

DBT_PLATFORM = "dbt"
RECIPE_ADVICE = (
    "ingest the warehouse with DataHub's source for it (e.g. `postgres`) into the same catalog, then the dbt source "
    "through a REST endpoint, which keeps the dbt-model -> table edges the datahub-lite sink drops: "
    "`provenance catalog ingest postgres.yml dbt.yml` (docs/own-datahub.md: On the dbt stack), or a DataHub server"
)


@dataclass(frozen=True)
class Sibling:
    urn: str
    how: str  # "siblings aspect" or "same name on postgres (DataHub's sibling rule)"


@dataclass
class SiblingFinder:
    """Siblings of datasets, cached per discovery; `unresolved` lists dbt nodes whose table was not found."""

    reader: CatalogReader
    conventions: Conventions
    unresolved: list[str] = field(default_factory=list)
    _known: dict[str, list[Sibling]] = field(default_factory=dict)
    _dbt_present: bool | None = None

    async def siblings(self, urns: list[str]) -> dict[str, list[Sibling]]:
        wanted = [u for u in dict.fromkeys(urns) if u not in self._known]
        if wanted and await self._catalog_has_dbt():
            aspects = await self.reader.sdk_aspects(wanted, ["siblings"])
            for urn in wanted:
                recorded = [s for s in (aspects[urn]["siblings"] or {}).get("siblings") or [] if s != urn]
                if recorded:
                    self._known[urn] = [Sibling(s, "siblings aspect") for s in sorted(recorded)]
                else:
                    self._known[urn] = await self._by_name(urn)
        for urn in wanted:
            self._known.setdefault(urn, [])
        return {u: self._known[u] for u in urns}

    async def _catalog_has_dbt(self) -> bool:
        """One search, once: catalogs without dbt nodes pay nothing more."""
        if self._dbt_present is None:
            only = f"entity_type = dataset AND platform = {DBT_PLATFORM}"
            self._dbt_present = bool(await self.reader.search("*", filter=only, num_results=1))
        return self._dbt_present

    async def _by_name(self, urn: str) -> list[Sibling]:
        platform, name, env = dataset_parts(urn)
        is_dbt = platform == DBT_PLATFORM
        only = "entity_type = dataset" + ("" if is_dbt else f" AND platform = {DBT_PLATFORM}")
        hits = await self.reader.search(name.rsplit(".", 1)[-1], filter=only, num_results=50)
        same = []
        for hit in hits:
            hit_platform, hit_name, hit_env = dataset_parts(hit.urn)
            if hit.urn == urn or hit_name.lower() != name.lower() or hit_env != env or hit_platform is None:
                continue
            if self.conventions.is_mirror(hit_platform) or (hit_platform == DBT_PLATFORM) != (not is_dbt):
                continue
            same.append(hit.urn)
        if is_dbt and len(same) != 1:
            found = f"{len(same)} datasets ({', '.join(sorted(same))})" if same else "no dataset"
            self.unresolved.append(
                f"dbt node {urn}: the table it materialises cannot be found ({found} of the same name on another "
                f"platform), so lineage beyond it may be missing; {RECIPE_ADVICE}"
            )
            return []
        return [Sibling(s, f"same name on {dataset_parts(s)[0]} (DataHub's sibling rule)") for s in sorted(same)]


SIBLING_TRANSFORM = "SIBLING"


def sibling_transform(sibling: Sibling) -> str:
    """The transform on an edge between a dbt node and its table: the same column, seen twice."""
    return f"{SIBLING_TRANSFORM}: {sibling.urn} is the same dbt node/table ({sibling.how})"


def with_sibling_edges(
    edges: dict[str, list[FineGrainedEdge]], pairs: list[tuple[str, Sibling]], columns: dict[str, set[str]]
) -> dict[str, list[FineGrainedEdge]]:
    """`edges` plus an edge both ways between siblings for every column either holds; an edge the catalog recorded
    between siblings (the dbt source's model -> table edge carries no transform) becomes a sibling edge too."""
    linked = {(a, s.urn): s for a, s in pairs} | {(s.urn, a): Sibling(a, s.how) for a, s in pairs}
    out: dict[str, list[FineGrainedEdge]] = {}
    for urn, recorded in edges.items():
        out[urn] = []
        for edge in recorded:
            sibling = linked.get((_dataset_of(edge.upstream), _dataset_of(edge.downstream)))
            out[urn].append(
                edge if sibling is None else edge.model_copy(update={"transform": sibling_transform(sibling)})
            )
    for (a, b), sibling in linked.items():
        for column in sorted(columns.get(a, set()) | columns.get(b, set())):
            up, down = field_urn(a, column), field_urn(b, column)
            if not any(e.upstream == up and e.downstream == down for e in out.get(b, [])):
                out.setdefault(b, []).append(
                    FineGrainedEdge(upstream=up, downstream=down, transform=sibling_transform(sibling))
                )
    return out


def _dataset_of(field_urn: str) -> str:
    return field_urn.removeprefix("urn:li:schemaField:(").removesuffix(")").rpartition(",")[0]


def without_dbt_twins(urns: list[str]) -> list[str]:
    """Candidates for a name, a dbt node and its same-name table counted once (as the table, which discovery walks
    together with the node): "matches several datasets" only when they are truly different datasets."""
    tables = {(name.lower(), env) for platform, name, env in map(dataset_parts, urns) if platform != DBT_PLATFORM}
    return [
        urn
        for urn in urns
        if dataset_parts(urn)[0] != DBT_PLATFORM or (dataset_parts(urn)[1].lower(), dataset_parts(urn)[2]) not in tables
    ]
