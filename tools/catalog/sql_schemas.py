"""The columns of the tables a dataset's SQL reads, from the catalog, so `*`, `t.*` and unqualified names resolve.

dbt writes `select * from renamed` and `select o.order_id, d.* from … d`; without the upstream tables' columns such a
query's outputs are unknown. DataHub already holds them: the dataset's `upstreamLineage.upstreams` name the tables
the SQL reads, and each one's `schemaMetadata` lists its fields (the warehouse source's, or the dbt source's from
`catalog.json`). A dbt node and its table are one thing seen twice (siblings.py), so both names are listed.

Read only when a first reading without schemas left a column unresolved: two `sdk_get_aspects` calls per discovery
at most (the upstreams of the datasets concerned, then the upstreams' schemas)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tools.catalog.datahub import CatalogReader
from tools.catalog.siblings import Sibling
from tools.catalog.training_runs import dataset_parts


def field_name(field_path: str) -> str:
    """A v2 field path (`[version=2.0].[type=struct].a`) or a plain one, as the column name SQL uses."""
    parts = [p for p in field_path.split(".") if not p.startswith("[")]
    return parts[-1] if parts else field_path


@dataclass
class UpstreamSchemas:
    reader: CatalogReader
    siblings: dict[str, list[Sibling]]
    problems: list[str] = field(default_factory=list)
    """Upstream tables the catalog holds no schema for: their `*` stays unknown (said where it matters)."""
    unique: dict[str, list[list[str]]] = field(default_factory=dict)
    """{qualified table name: [its primary key's columns]} where the schema marks one (`primaryKeys`, or fields
    with `isPartOfKey`, as DataHub's warehouse sources write a primary key constraint)."""
    _schema: dict[str, list[str]] = field(default_factory=dict)
    _read: set[str] = field(default_factory=set)

    async def for_datasets(self, urns: list[str]) -> dict[str, list[str]]:
        """{qualified table name: its columns} for every table the datasets (and their dbt siblings) read."""
        wanted = sorted({u for urn in urns for u in [urn, *(s.urn for s in self.siblings.get(urn, []))]} - self._read)
        if wanted:
            self._read |= set(wanted)
            lineage = await self.reader.sdk_aspects(wanted, ["upstreamLineage"])
            upstreams = {
                str(u["dataset"])
                for value in lineage.values()
                for u in (value["upstreamLineage"] or {}).get("upstreams") or []
                if u.get("dataset")
            }
            upstreams |= {s.urn for urn in list(upstreams) for s in self.siblings.get(urn, [])}
            schemas = await self.reader.sdk_aspects(sorted(upstreams), ["schemaMetadata"])
            for urn, value in schemas.items():
                fields = (value["schemaMetadata"] or {}).get("fields") or []
                name = dataset_parts(urn)[1]
                if not fields:
                    self.problems.append(f"the catalog holds no schema for {name}")
                    continue
                self._schema.setdefault(name, [field_name(str(f["fieldPath"])) for f in fields])
                key = [str(k) for k in (value["schemaMetadata"] or {}).get("primaryKeys") or []] or [
                    str(f["fieldPath"]) for f in fields if f.get("isPartOfKey")
                ]
                if key:
                    self.unique.setdefault(name, [[field_name(k) for k in key]])
        return dict(self._schema)
