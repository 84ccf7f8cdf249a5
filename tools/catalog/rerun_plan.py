"""How the warehouse can re-run a downstream dataset with a change applied, without writing anything: the dataset's
own SQL (dbt's compiled code, a view's text), each dataset between it and the changed table inlined as a CTE in
its place, recursively, and the changed table itself read as `__provenance_changed` — a CTE the run defines as the
table unchanged, then changed (tools/experiment/rerun.py). Datasets off the lineage paths stay the live relations.

A plan is built only when a warehouse is configured and every dataset in between has SQL in the catalog; the rows
are compared by a key the catalog knows to be unique in the dataset (a primary key or a dbt `unique` test). Where
one is missing, there is no plan, and the reason is kept for the evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from tools.catalog.discovery import RerunPlan
from tools.catalog.training_runs import dataset_parts
from tools.errors import BadRequest
from tools.transforms.nodes import names_match

CHANGED = "__provenance_changed"
MAX_DEPTH = 20

SqlOf = Callable[[str], tuple[str, str | None] | None]
"""A dataset URN -> (its SQL, dialect), None when the catalog holds none."""


class Unplannable(BadRequest, ValueError):
    """Why the dataset cannot be re-run; the message names the dataset and what is missing."""


def table_name(table: exp.Table) -> str:
    return ".".join(part.name for part in table.parts).lower()


@dataclass
class _Inliner:
    source_name: str
    between: dict[str, str]  # urn -> qualified name, the datasets on the paths (never the target)
    sql_of: SqlOf
    ctes: list[exp.CTE] = field(default_factory=list)
    done: dict[str, str] = field(default_factory=dict)
    dialect: str | None = None

    def inline(self, urn: str, depth: int = 0) -> exp.Query:
        if depth > MAX_DEPTH:
            raise Unplannable(f"{dataset_parts(urn)[1]}: more than {MAX_DEPTH} datasets deep")
        found = self.sql_of(urn)
        if found is None:
            raise Unplannable(f"the catalog holds no SQL for {dataset_parts(urn)[1]}, which lies on the path")
        text, dialect = found
        self.dialect = self.dialect or dialect
        try:
            parsed = sqlglot.parse_one(text, read=dialect)
        except (ParseError, TokenError) as exc:
            raise Unplannable(f"the SQL of {dataset_parts(urn)[1]} is not readable: {str(exc)[:200]}") from exc
        if isinstance(parsed, exp.Create) and isinstance(parsed.expression, exp.Query):
            parsed = parsed.expression
        if not isinstance(parsed, exp.Query):
            raise Unplannable(f"the SQL of {dataset_parts(urn)[1]} is not a query")
        own = {cte.alias_or_name.lower() for cte in parsed.find_all(exp.CTE)}
        for table in list(parsed.find_all(exp.Table)):
            if not table.db and table.name.lower() in own:
                continue
            replacement = self._replacement(table_name(table), depth)
            if replacement is not None:
                alias = table.alias or table.name
                table.replace(exp.to_table(replacement).as_(alias))
        return parsed

    def _replacement(self, written: str, depth: int) -> str | None:
        if names_match(written, self.source_name):
            return CHANGED
        urn = next((u for u, name in self.between.items() if names_match(written, name)), None)
        if urn is None:
            return None
        if urn not in self.done:
            body = self.inline(urn, depth + 1)
            alias = f"__provenance_{len(self.done) + 1}"
            self.ctes.append(exp.CTE(this=body, alias=exp.TableAlias(this=exp.to_identifier(alias))))
            self.done[urn] = alias
        return self.done[urn]


def plan_rerun(
    target_urn: str,
    source_urn: str,
    source_columns: list[str],
    between: list[str],
    sql_of: SqlOf,
    key: list[str],
) -> RerunPlan:
    """The plan for `target_urn`; raises Unplannable saying what is missing."""
    if not key:
        raise Unplannable(
            f"no column of {dataset_parts(target_urn)[1]} is known to be unique (a dbt `unique` test or a primary "
            "key, ingested into the catalog, lets its rows be compared before and after)"
        )
    if not source_columns:
        raise Unplannable(f"the catalog holds no schema for {dataset_parts(source_urn)[1]}")
    source_name = dataset_parts(source_urn)[1]
    others = {u: dataset_parts(u)[1] for u in between if u != target_urn}
    others = {u: name for u, name in others.items() if not names_match(name.lower(), source_name)}
    inliner = _Inliner(source_name, others, sql_of)
    query = inliner.inline(target_urn)
    if inliner.ctes:
        existing = query.args.get("with_")
        ctes = inliner.ctes + (list(existing.expressions) if existing is not None else [])
        query.set("with_", exp.With(expressions=ctes))
    names = [dataset_parts(u)[1] for u in inliner.done]
    return RerunPlan(
        sql=query.sql(dialect=inliner.dialect),
        dialect=inliner.dialect,
        source_table=source_name,
        source_columns=source_columns,
        key=key,
        inlined=names,
    )
