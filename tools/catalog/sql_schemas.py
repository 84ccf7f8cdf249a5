"""The columns of the tables a dataset's SQL reads, from the catalog, so `*`, `t.*` and unqualified names resolve.

dbt writes `select * from renamed` and `select o.order_id, d.* from … d`; without the upstream tables' columns such a
query's outputs are unknown. DataHub already holds them: the dataset's `upstreamLineage.upstreams` name the tables
the SQL reads, and each one's `schemaMetadata` lists its fields (the warehouse source's, or the dbt source's from
`catalog.json`). A dbt node and its table are one thing seen twice (siblings.py), so both names are listed.

Read only when a first reading without schemas left a column unresolved: two `sdk_get_aspects` calls per discovery
at most (the upstreams of the datasets concerned, then the upstreams' schemas)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tools.catalog.datahub import CatalogReader
from tools.catalog.sdk_tools import ASSERTIONS
from tools.catalog.siblings import DBT_PLATFORM, Sibling
from tools.catalog.training_runs import dataset_parts

_INTEGER_TYPES = re.compile(
    r"^(tinyint|smallint|mediumint|int|integer|bigint|int2|int4|int8|serial|smallserial|bigserial|long|short|byte)"
    r"(\(\d+\))?( unsigned)?$"
)


def is_integer_type(schema_field: dict[str, Any]) -> bool:
    """A field whose native type is an integer type (every value a whole number)."""
    return bool(_INTEGER_TYPES.match(str(schema_field.get("nativeDataType") or "").strip().lower()))


def integer_inputs(upstream: frozenset[tuple[str, str]], integers: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The (table, column) pairs of an expression whose table the schemas type as integers (suffix match)."""
    found = []
    for table, column in sorted(upstream):
        parts = table.lower().split(".")
        for name, columns in integers.items():
            known = name.lower().split(".")
            shorter = min(len(parts), len(known))
            if shorter and parts[-shorter:] == known[-shorter:] and column.lower() in columns:
                found.append((table, column))
                break
    return found


def _dbt_twin(urn: str) -> str:
    _, name, env = dataset_parts(urn)
    return f"urn:li:dataset:(urn:li:dataPlatform:{DBT_PLATFORM},{name},{env})"


def unique_columns(assertions: list[dict[str, Any]]) -> list[str]:
    """The columns a passing-or-not dbt `unique` test declares unique, as DataHub's dbt source writes the test: an
    assertion whose aggregation is UNIQUE_PROPOTION (sic), operator EQUAL_TO, value 1.0, on one field."""
    found = []
    for info in assertions:
        for key in ("customAssertion", "datasetAssertion"):
            body = info.get(key) or {}
            value = ((body.get("parameters") or {}).get("value") or {}).get("value")
            if body.get("aggregation") != "UNIQUE_PROPOTION" or body.get("operator") != "EQUAL_TO":
                continue
            fields = body.get("fields") or ([body["field"]] if body.get("field") else [])
            if len(fields) == 1 and value is not None and float(value) == 1.0:
                found.append(field_name(str(fields[0]).rsplit(",", 1)[-1].rstrip(")")))
    return found


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
    """{qualified table name: column sets known to be unique}: the primary key where the schema marks one
    (`primaryKeys`, or fields with `isPartOfKey`, as DataHub's warehouse sources write it), and each column a dbt
    `unique` test covers (the dbt source's assertions, read through GMS's `Asserts` relationship)."""
    integer_columns: dict[str, set[str]] = field(default_factory=dict)
    """{qualified table name: its columns of an integer type} (`nativeDataType` int, integer, bigint, ...)."""
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
            # DataHub's sibling rule: the dbt node of a table has its qualified name (its tests are asserted on it)
            upstreams |= {_dbt_twin(urn) for urn in list(upstreams) if dataset_parts(urn)[0] != DBT_PLATFORM}
            schemas = await self.reader.sdk_aspects(sorted(upstreams), ["schemaMetadata", ASSERTIONS])
            for urn, value in schemas.items():
                for column in unique_columns(value.get(ASSERTIONS) or []):  # type: ignore[arg-type]
                    self.unique.setdefault(dataset_parts(urn)[1], []).append([column])
                fields = (value["schemaMetadata"] or {}).get("fields") or []
                name = dataset_parts(urn)[1]
                if not fields:
                    if dataset_parts(urn)[0] != DBT_PLATFORM:
                        self.problems.append(f"the catalog holds no schema for {name}")
                    continue
                self._schema.setdefault(name, [field_name(str(f["fieldPath"])) for f in fields])
                self.integer_columns.setdefault(
                    name, {field_name(str(f["fieldPath"])).lower() for f in fields if is_integer_type(f)}
                )
                key = [str(k) for k in (value["schemaMetadata"] or {}).get("primaryKeys") or []] or [
                    str(f["fieldPath"]) for f in fields if f.get("isPartOfKey")
                ]
                if key:
                    self.unique.setdefault(name, [[field_name(k) for k in key]])
        return dict(self._schema)

    async def own_keys(self, urn: str) -> list[str]:
        """A column set known to be unique in the dataset itself (its dbt node's `unique` tests, or its primary
        key); [] when none is known."""
        urns = sorted({urn, _dbt_twin(urn), *(s.urn for s in self.siblings.get(urn, []))})
        found = await self.reader.sdk_aspects(urns, ["schemaMetadata", ASSERTIONS])
        for value in found.values():
            columns = unique_columns(value.get(ASSERTIONS) or [])  # type: ignore[arg-type]
            if columns:
                return [columns[0]]
        for value in found.values():
            schema = value.get("schemaMetadata") or {}
            fields = schema.get("fields") or []
            key = [str(k) for k in schema.get("primaryKeys") or []] or [
                str(f["fieldPath"]) for f in fields if f.get("isPartOfKey")
            ]
            if key:
                return [field_name(k) for k in key]
        return []

    @property
    def schema(self) -> dict[str, list[str]]:
        """The columns read so far."""
        return dict(self._schema)
