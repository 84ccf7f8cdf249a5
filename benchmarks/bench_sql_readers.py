"""Which SQL reader resolves the columns of a dbt project written the style guide's way: the share
of model output columns each candidate gives an answer for, given the catalog's schemas (dbt's catalog.json).

    ours      tools.transforms.column_expressions (an expression over base columns, the joins and unions it came
              through, the rows it keeps: what derivation needs)
    sqlglot   sqlglot.lineage.lineage per column (a column graph, no expression)
    datahub   datahub.sql_parsing.sqlglot_lineage with a SchemaResolver (what DataHub's dbt and sql-queries
              sources record: column edges and a transform label)

The project is the style world's (tests/realworld/dbt_style_project), built for real: PostgreSQL, `dbt build` and
`dbt docs generate` (~30 s). Run: .venv/bin/python -m benchmarks.bench_sql_readers
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlglot.lineage

from tools.transforms import column_expressions


def _schemas(catalog: dict[str, Any]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for node in [*catalog["nodes"].values(), *catalog["sources"].values()]:
        meta = node["metadata"]
        name = f"{meta['database']}.{meta['schema']}.{meta['name']}".lower()
        out[name] = {c.lower(): str(v["type"]) for c, v in node["columns"].items()}
    return out


def _ours(sql: str, columns: list[str], schemas: dict[str, dict[str, str]]) -> set[str]:
    found = column_expressions(sql, dialect="postgres", schema={t: list(c) for t, c in schemas.items()})
    return {c for c in columns if c in found.columns}


def _sqlglot(sql: str, columns: list[str], schemas: dict[str, dict[str, str]]) -> set[str]:
    nested: dict[str, Any] = {}
    for name, cols in schemas.items():
        db, schema, table = name.split(".")
        nested.setdefault(db, {}).setdefault(schema, {})[table] = cols
    resolved = set()
    for column in columns:
        try:
            sqlglot.lineage.lineage(column, sql, schema=nested, dialect="postgres")
        except Exception:  # noqa: BLE001 - a reader that cannot answer is what is measured
            continue
        resolved.add(column)
    return resolved


def _datahub(sql: str, columns: list[str], schemas: dict[str, dict[str, str]]) -> set[str]:
    from datahub.sql_parsing.schema_resolver import SchemaResolver
    from datahub.sql_parsing.sqlglot_lineage import sqlglot_lineage

    resolver = SchemaResolver(platform="postgres", env="PROD")
    for name, cols in schemas.items():
        resolver.add_raw_schema_info(f"urn:li:dataset:(urn:li:dataPlatform:postgres,{name},PROD)", cols)
    result = sqlglot_lineage(sql, resolver, default_db="style_wh", default_schema="analytics")
    return {info.downstream.column.lower() for info in result.column_lineage or []} & set(columns)


READERS: dict[str, Callable[[str, list[str], dict[str, dict[str, str]]], set[str]]] = {
    "ours": _ours,
    "sqlglot": _sqlglot,
    "datahub": _datahub,
}


def measure(manifest: dict[str, Any], catalog: dict[str, Any]) -> dict[str, tuple[int, int, list[str]]]:
    schemas = _schemas(catalog)
    totals = {name: [0, 0, []] for name in READERS}
    for node in manifest["nodes"].values():
        if node["resource_type"] != "model" or node["config"]["materialized"] == "ephemeral":
            continue
        relation = f"{node['database']}.{node['schema']}.{node['alias']}".lower()
        columns = sorted(schemas.get(relation, {}))
        for name, reader in READERS.items():
            found = reader(node["compiled_code"], columns, schemas)
            totals[name][0] += len(found)
            totals[name][1] += len(columns)
            totals[name][2] += [f"{node['name']}.{c}" for c in columns if c not in found]  # type: ignore[operator]
    return {name: (int(a), int(b), list(c)) for name, (a, b, c) in totals.items()}  # type: ignore[call-overload]


def main() -> None:
    from tests.postgres import start_cluster
    from tests.realworld.dbt_style_world import build_style_world

    cluster = start_cluster()
    try:
        with tempfile.TemporaryDirectory() as folder:
            world = build_style_world(Path(folder), cluster)
            target = world.manifest_path.parent
            manifest = json.loads(world.manifest_path.read_text())
            catalog = json.loads((target / "catalog.json").read_text())
            for name, (resolved, total, missing) in measure(manifest, catalog).items():
                print(f"{name:8} {resolved}/{total} columns ({resolved / total:.1%}); not resolved: {missing}")
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
