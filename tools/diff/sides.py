"""Where each changed dataset lives on each side of a pull request, and the key that pairs its rows.

The relations: `--relation NAME=BASE:HEAD` first, then dbt's two manifests (each model's `relation_name` on each
side), then the schema swap (`--base-schema analytics --head-schema ci_pr_123`: the catalog's table in the other
schema; without `--base-schema`, the catalog's own). The key: `--key`, else the catalog's primary key, else a dbt
`unique` test on one column (as DataHub's dbt source writes it); no key is refused, naming `--key`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.catalog.branch_counts import relation_name
from tools.catalog.datahub import CatalogReader
from tools.catalog.sdk_tools import ASSERTIONS
from tools.catalog.siblings import DBT_PLATFORM
from tools.catalog.sql_schemas import field_name, unique_columns
from tools.catalog.training_runs import dataset_parts
from tools.errors import BadRequest

_ONE_DATABASE = ("postgres", "redshift", "duckdb")  # a connection reads one database: `schema.table`


class SidesError(BadRequest, ValueError):
    """A relation or key of the diff cannot be named from what was given."""


def _relation(qualified: str, dialect: str) -> str:
    parts = qualified.replace('"', "").replace("`", "").split(".")
    return ".".join(parts[1:]) if dialect in _ONE_DATABASE and len(parts) == 3 else ".".join(parts)


def read_manifest(path: Path, dialect: str) -> dict[str, str]:
    """{model name: relation} of a dbt manifest's models, seeds and snapshots."""
    try:
        nodes: dict[str, Any] = json.loads(path.read_text()).get("nodes") or {}
    except (OSError, ValueError) as exc:
        raise SidesError(f"{path}: not a readable dbt manifest.json ({exc}); pass target/manifest.json") from exc
    return {
        str(node["name"]): _relation(str(node["relation_name"]), dialect)
        for node in nodes.values()
        if node.get("resource_type") in ("model", "seed", "snapshot") and node.get("relation_name")
    }


@dataclass(frozen=True)
class RelationMap:
    dialect: str
    base_schema: str | None = None
    head_schema: str | None = None
    explicit: dict[str, tuple[str, str]] = field(default_factory=dict)  # table or qualified name -> (base, head)
    base_manifest: dict[str, str] = field(default_factory=dict)
    head_manifest: dict[str, str] = field(default_factory=dict)

    def describe(self) -> tuple[str, str]:
        if self.base_manifest or self.head_manifest:
            return "the base dbt manifest", "the head dbt manifest"
        if self.head_schema:
            return f"schema {self.base_schema or '(the catalog’s)'}", f"schema {self.head_schema}"
        return "the relations named by --relation", "the relations named by --relation"

    def sides(self, dataset_urn: str) -> tuple[str, str] | None:
        """(base, head) of the dataset; None when nothing given names its head side."""
        _, name, _ = dataset_parts(dataset_urn)
        here = _relation(relation_name(name, "postgres") if self.dialect in _ONE_DATABASE else name, self.dialect)
        table = here.rsplit(".", 1)[-1]
        for wanted in (name, here, table):
            if wanted in self.explicit:
                return self.explicit[wanted]
        if table in self.head_manifest:
            return self.base_manifest.get(table, here), self.head_manifest[table]
        if self.head_schema:
            parts = here.split(".")

            def in_schema(schema: str) -> str:
                return ".".join([*parts[:-2], schema, table]) if len(parts) >= 2 else f"{schema}.{table}"

            return (in_schema(self.base_schema) if self.base_schema else here), in_schema(self.head_schema)
        return None


def parse_relations(pairs: list[str]) -> dict[str, tuple[str, str]]:
    """`NAME=BASE:HEAD` flags as {NAME: (BASE, HEAD)}."""
    found = {}
    for pair in pairs:
        name, eq, sides = pair.partition("=")
        base, colon, head = sides.partition(":")
        if not eq or not colon or not (name.strip() and base.strip() and head.strip()):
            raise SidesError(
                f"--relation {pair!r}: expected NAME=BASE:HEAD, e.g. claim_features=analytics.claim_features:"
                "ci_pr_7.claim_features"
            )
        found[name.strip()] = (base.strip(), head.strip())
    return found


async def catalog_key(reader: CatalogReader, dataset_urn: str) -> tuple[list[str], str] | None:
    """The dataset's key from the catalog: its primary key, or one column a dbt `unique` test covers."""
    platform, name, env = dataset_parts(dataset_urn)
    twin = f"urn:li:dataset:(urn:li:dataPlatform:{DBT_PLATFORM},{name},{env})"
    urns = [dataset_urn] if platform == DBT_PLATFORM else [dataset_urn, twin]
    found = await reader.sdk_aspects(urns, ["schemaMetadata", ASSERTIONS])
    for value in found.values():
        schema = value.get("schemaMetadata") or {}
        fields = schema.get("fields") or []
        key = [str(k) for k in schema.get("primaryKeys") or []] or [
            field_name(str(f["fieldPath"])) for f in fields if f.get("isPartOfKey")
        ]
        if key:
            return key, "the catalog's primary key"
    for value in found.values():
        unique = unique_columns(value.get(ASSERTIONS) or [])  # type: ignore[arg-type]
        if unique:
            return [unique[0]], f"a dbt unique test on {unique[0]}"
    return None
