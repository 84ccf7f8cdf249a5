"""The SQL behind a column edge that is not a recorded copy, read so a change can be carried through it.

DataHub's sql-queries source writes `SQL: <expr> AS "out"` on a computed column edge; dbt's column lineage carries
no transform at all, even for `a / b`. Where the transform is not a copy, this module finds the column's expression
over base-table columns (tools/transforms): from the transform text itself, else from the SQL that built the
dataset — the query entity the edge names (`queryProperties.statement`), the dataset's own `viewProperties`
(a view's definition; a dbt node's compiled code) or its dbt sibling's. What cannot be read stays unknown, with the
reason, and is never taken for a copy (the model is then INCOMPLETE `non_identity_transform`).

Reads go through the catalog session (sdk_get_aspects, recorded like the MCP calls): at most one call for the
views and one for the queries of a discovery, and none when every edge is a recorded copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from tools.catalog.branch_counts import BranchCounter
from tools.catalog.conventions import Conventions
from tools.catalog.datahub import CatalogReader, FineGrainedEdge
from tools.catalog.discovery import LineageStep
from tools.catalog.edge_copies import confirmed_copy
from tools.catalog.matched_counts import with_matched_counts
from tools.catalog.rerun_paths import with_rerun_plans
from tools.catalog.siblings import DBT_PLATFORM, SIBLING_TRANSFORM, Sibling
from tools.catalog.sql_schemas import UpstreamSchemas, integer_inputs
from tools.catalog.training_runs import dataset_parts
from tools.transforms.expressions import ColumnExpression, SqlColumns, SqlUnreadable, column_expressions, find_upstream
from tools.transforms.joins import RowNote
from tools.transforms.unions import UNION_ALL, counting_sql, with_counts

# DataHub platform -> sqlglot dialect, where they differ or exist; other platforms are parsed with the generic one.
DIALECTS = {
    "postgres": "postgres", "redshift": "redshift", "snowflake": "snowflake", "bigquery": "bigquery",
    "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite", "duckdb": "duckdb", "databricks": "databricks",
    "hive": "hive", "trino": "trino", "presto": "presto", "mssql": "tsql", "oracle": "oracle", "teradata": "teradata",
    "clickhouse": "clickhouse", "athena": "athena", "spark": "spark",
}  # fmt: skip

Key = tuple[str, str]
PICKS = "picks"
TRANSFORM = "the edge's transformOperation"

JINJA_ADVICE = (
    "raw dbt Jinja, not SQL (DataHub's dbt source records the compiled code only when the manifest has it: run "
    "`dbt compile` or `dbt docs generate` before ingesting)"
)


def is_jinja(sql: str) -> bool:
    return "{{" in sql or "{%" in sql


ROWS_TRANSFORM = "ROWS"
"""The transform of an edge row_uses.py adds: the downstream SQL picks or matches rows by the upstream column."""


def is_rows_edge(transform: str | None) -> bool:
    return bool(transform) and transform.split(":", 1)[0].strip().upper() == ROWS_TRANSFORM  # type: ignore[union-attr]


def is_sibling_edge(transform: str | None) -> bool:
    return bool(transform) and transform.split(":", 1)[0].strip().upper() == SIBLING_TRANSFORM  # type: ignore[union-attr]


def carries_as_is(step: LineageStep, conventions: Conventions) -> bool:
    """A recorded copy (conventions' identity transforms), the same column on a dbt node and its table, or a step
    that is no lineage edge (a mirror dataset standing for the table: `note` says how it was tied)."""
    if step.transform is None and step.note is not None:
        return True
    return conventions.is_identity(step.transform) or is_sibling_edge(step.transform)


def not_carried(path: list[LineageStep], conventions: Conventions) -> list[str]:
    """Why each step of `path` that neither carries the value as is nor has an expression is unknown."""
    return [
        step.unknown or step.transform or f"no transform recorded into {step.column}"
        for step in path[1:]
        if not carries_as_is(step, conventions) and step.expression is None
    ]


def _sql_head(transform: str | None) -> str | None:
    head, sep, rest = (transform or "").partition(":")
    return rest.strip() if sep and head.strip().upper() == "SQL" else None


def _from_transform(text: str, dialect: str | None) -> ColumnExpression:
    """`<expr> AS "out"` as DataHub's SQL parser writes it after `SQL:`."""
    try:
        node = sqlglot.parse_one(text, read=dialect)
    except (ParseError, TokenError) as exc:
        raise SqlUnreadable(f"cannot parse the transform {text!r}: {exc}") from exc
    if isinstance(node, exp.Alias):
        return ColumnExpression.of(node.alias, node.this, dialect)
    return ColumnExpression.of(node.sql(dialect=dialect), node, dialect)


@dataclass
class SqlSource:
    reader: CatalogReader
    conventions: Conventions
    siblings: dict[str, list[Sibling]]
    _parsed: dict[tuple[str, str | None, bool], SqlColumns | str] = field(default_factory=dict)
    _views: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    schemas: UpstreamSchemas = field(init=False)
    counter: BranchCounter | None = field(default_factory=BranchCounter.from_environment)
    rerun_problems: dict[str, str] = field(default_factory=dict)
    """Downstream datasets the warehouse cannot re-run with the change applied, and why (rerun_paths.py)."""

    def __post_init__(self) -> None:
        self.schemas = UpstreamSchemas(self.reader, self.siblings)

    def dialect(self, dataset_urn: str) -> str | None:
        platform = dataset_parts(dataset_urn)[0] or ""
        if platform == DBT_PLATFORM:
            tables = [dataset_parts(s.urn)[0] or "" for s in self.siblings.get(dataset_urn, [])]
            platform = tables[0] if tables else ""
        return DIALECTS.get(platform)

    async def annotate(
        self, paths: dict[Key, list[LineageStep]], edges: dict[str, list[FineGrainedEdge]]
    ) -> dict[Key, list[LineageStep]]:
        """`paths` with every step that is not a copy carrying its expression, or why it is unknown."""
        paths = self._declared_copies(paths)
        needs = [
            (key, i)
            for key, steps in paths.items()
            for i, step in enumerate(steps)
            if i > 0 and not carries_as_is(step, self.conventions)
        ]
        if not needs:
            return paths
        queries = {(e.upstream, e.downstream): e.query for recorded in edges.values() for e in recorded if e.query}
        wanted = {
            paths[key][i].dataset_urn
            for key, i in needs
            if _sql_head(paths[key][i].transform) is None and not is_rows_edge(paths[key][i].transform)
        }
        views = await self.views_of(sorted(wanted | {s.urn for urn in wanted for s in self.siblings.get(urn, [])}))
        statements = await self._aspect(sorted(set(queries.values())), "queryProperties")
        out = {key: list(steps) for key, steps in paths.items()}
        for key, i in needs:
            previous, step = out[key][i - 1], out[key][i]
            if is_rows_edge(step.transform):
                out[key][i] = step.model_copy(update={"unknown": str(step.transform).split(":", 1)[1].strip()})
                continue
            query = queries.get((_field(previous), _field(step)))
            out[key][i] = self._resolve(previous, step, views, statements.get(query or ""), query, {})
        # `select * from renamed`, `d.*`, an unqualified name in a join: read again with the upstream tables'
        # columns (and primary keys) from the catalog, only where the first reading needs them.
        # A join whose key may repeat rows is read again too: the catalog may know the key is unique.
        unresolved = [
            (key, i)
            for key, i in needs
            if not is_rows_edge(out[key][i].transform)
            and (out[key][i].expression is None or any(kind == "repeats" for kind, _ in out[key][i].row_notes))
        ]
        if unresolved:
            schema = await self.schemas.for_datasets(sorted({out[key][i].dataset_urn for key, i in unresolved}))
            for key, i in unresolved:
                previous, step = out[key][i - 1], paths[key][i]
                query = queries.get((_field(previous), _field(step)))
                again = self._resolve(previous, step, views, statements.get(query or ""), query, schema)
                if again.expression is not None or not out[key][i].unknown:
                    out[key][i] = again
                elif again.unknown and again.unknown != out[key][i].unknown:
                    out[key][i] = again.model_copy(update={"unknown": self._with_schema_problems(again.unknown)})
        counted = self._counted(await self._typed(self._through_ephemeral(out, views, statements, queries)))
        return await with_rerun_plans(with_matched_counts(counted, self.counter, self._relation), self)

    def _relation(self, urn: str) -> str | None:
        """The table or view the warehouse holds for a dataset (a dbt node's: its sibling's); None for an
        ephemeral model."""
        if dataset_parts(urn)[0] == DBT_PLATFORM:
            tables = [s.urn for s in self.siblings.get(urn, []) if dataset_parts(s.urn)[0] != DBT_PLATFORM]
            return dataset_parts(tables[0])[1] if tables else None
        return dataset_parts(urn)[1]

    def _through_ephemeral(
        self,
        paths: dict[Key, list[LineageStep]],
        views: dict[str, dict[str, Any]],
        statements: dict[str, dict[str, Any]],
        queries: dict[tuple[str, str], str],
    ) -> dict[Key, list[LineageStep]]:
        """dbt inlines an ephemeral model into the compiled SQL of the models that ref it, so their column reads the
        ephemeral model's own inputs: a step that does not read the previous (ephemeral) one is read against the
        step before it, and the ephemeral step then stands for what the compiled SQL already holds."""
        out = {key: list(steps) for key, steps in paths.items()}
        for steps in out.values():
            for i in range(2, len(steps)):
                step, middle, before = steps[i], steps[i - 1], steps[i - 2]
                if step.expression is not None or not self._ephemeral(middle.dataset_urn):
                    continue
                query = queries.get((_field(middle), _field(step)))
                fresh = step.model_copy(update={"unknown": None})
                again = self._resolve(before, fresh, views, statements.get(query or ""), query, self.schemas.schema)
                if again.expression is None:
                    continue
                steps[i] = again
                note = f"dbt ephemeral model: inlined in the compiled SQL of {dataset_parts(step.dataset_urn)[1]}"
                steps[i - 1] = middle.model_copy(
                    update={"transform": None, "note": note, "expression": None, "unknown": None, "row_notes": []}
                )
        return out

    def _ephemeral(self, urn: str) -> bool:
        """A dbt node with no table of its own (no sibling on the warehouse platform)."""
        return dataset_parts(urn)[0] == DBT_PLATFORM and not self.siblings.get(urn)

    async def _typed(self, paths: dict[Key, list[LineageStep]]) -> dict[Key, list[LineageStep]]:
        """Steps whose expression rounds or casts to NUMERIC(p, s) learn which of its inputs are integers (the
        cast is then lossless): the upstream schemas are read for them only."""
        wanted = [
            (key, i)
            for key, steps in paths.items()
            for i, step in enumerate(steps)
            if step.expression is not None and _rounds(step.expression)
        ]
        if not wanted:
            return paths
        await self.schemas.for_datasets(sorted({paths[key][i].dataset_urn for key, i in wanted}))
        out = {key: list(steps) for key, steps in paths.items()}
        for key, i in wanted:
            expression = step_expression(out[key][i])
            found = integer_inputs(expression.upstream, self.schemas.integer_columns)
            out[key][i] = out[key][i].model_copy(update={"integer_inputs": found})
        return out

    def _counted(self, paths: dict[Key, list[LineageStep]]) -> dict[Key, list[LineageStep]]:
        """Steps through a UNION ALL get each branch's row count from the warehouse, when one is configured."""
        if self.counter is None:
            return paths
        out = {key: list(steps) for key, steps in paths.items()}
        for steps in out.values():
            for i, step in enumerate(steps):
                if step.expression is None or UNION_ALL not in step.expression:
                    continue
                parsed = sqlglot.parse_one(step.expression, read=step.dialect)
                counts = self.counter.counts(counting_sql(parsed), step.dialect)
                counted = with_counts(parsed, counts)
                where = step.expression_from or ""
                if self.counter.problems:
                    where += f" (branch row counts: {'; '.join(dict.fromkeys(self.counter.problems))})"
                steps[i] = step.model_copy(
                    update={"expression": counted.sql(dialect=step.dialect), "expression_from": where}
                )
        return out

    def _declared_copies(self, paths: dict[Key, list[LineageStep]]) -> dict[Key, list[LineageStep]]:
        """Untransformed edges into a platform conventions.yaml declares (`copy_edge_platforms`) carry as is, noted as
        the user's assumption."""
        if not self.conventions.copy_edge_platforms:
            return paths
        out = {key: list(steps) for key, steps in paths.items()}
        for steps in out.values():
            for i, step in enumerate(steps):
                platform = dataset_parts(step.dataset_urn)[0]
                if i > 0 and not (step.transform or "").strip() and self.conventions.declares_copy(platform):
                    note = f"assumed a copy: conventions.yaml copy_edge_platforms lists {platform} (your declaration)"
                    steps[i] = step.model_copy(update={"transform": None, "note": note})
        return out

    def _with_schema_problems(self, unknown: str) -> str:
        missing = "; ".join(self.schemas.problems)
        return f"{unknown} (read with the catalog's schemas of the upstream tables; {missing})" if missing else unknown

    async def views_of(self, urns: list[str]) -> dict[str, dict[str, Any]]:
        """The datasets' `viewProperties`, each read once per discovery (the re-run plans read them again)."""
        missing = sorted(set(urns) - set(self._views))
        if missing:
            found = await self._aspect(missing, "viewProperties")
            self._views.update({urn: found.get(urn) for urn in missing})
        return {urn: view for urn in urns if (view := self._views.get(urn))}

    async def _aspect(self, urns: list[str], aspect: str) -> dict[str, dict[str, Any]]:
        found = await self.reader.sdk_aspects(urns, [aspect]) if urns else {}
        return {urn: value[aspect] for urn, value in found.items() if value.get(aspect)}  # type: ignore[misc]

    def _resolve(
        self,
        previous: LineageStep,
        step: LineageStep,
        views: dict[str, dict[str, Any]],
        statement: dict[str, Any] | None,
        query: str | None,
        schema: dict[str, list[str]],
    ) -> LineageStep:
        dialect = self.dialect(step.dataset_urn)
        text = _sql_head(step.transform)
        candidates: list[tuple[str, str]] = []  # (where, sql)
        if statement:
            candidates.append((f"query {query}", str((statement.get("statement") or {}).get("value") or "")))
        for urn in [step.dataset_urn, *(s.urn for s in self.siblings.get(step.dataset_urn, []))]:
            # dbt's source writes its raw Jinja to viewLogic and the compiled SQL to formattedViewLogic; a
            # warehouse view has only viewLogic. Compiled first, the raw text as a fall-back.
            view = views.get(urn) or {}
            for key in ("formattedViewLogic", "viewLogic"):
                if view.get(key):
                    candidates.append((f"viewProperties.{key} of {urn}", str(view[key])))
        problems: list[str] = []
        if text is not None:
            # DataHub's parser writes the expression over the CTE the column comes from (`"unioned"."amount"`), not
            # the upstream table: then the SQL that built the dataset is read instead, where there is one.
            try:
                parsed = _from_transform(text, dialect)
            except SqlUnreadable as exc:
                problems.append(str(exc))
            else:
                matched = self._matched(previous, step, parsed, TRANSFORM, problems)
                if matched.expression is not None or not candidates:
                    return (
                        matched if matched.expression is not None else step.model_copy(update={"unknown": problems[-1]})
                    )
        readable: list[tuple[str, str]] = []
        for where, sql in candidates:
            if is_jinja(sql):
                problems.append(f"{where}: {JINJA_ADVICE}")
                continue
            readable.append((where, sql))
            columns = self._columns(sql, dialect, schema)
            if isinstance(columns, str):
                problems.append(f"{where}: {columns}")
                continue
            expression = columns.columns.get(step.column) or columns.columns.get(step.column.lower())
            if expression is None:
                why = columns.unreadable.get(step.column.lower()) or columns.unreadable.get("*") or "not an output"
                problems.append(f"{where}: column {step.column}: {why}")
                continue
            resolved = self._matched(previous, step, expression, where, problems)
            if resolved.expression is not None:
                return resolved
        copied = confirmed_copy(previous, step, readable, dialect, schema, problems)
        if copied is not None:
            return copied
        looked = "; ".join(problems) or (
            "the edge records no transform, and neither a query, nor viewProperties on the dataset or its dbt "
            "node hold the SQL that built it"
        )
        return step.model_copy(update={"unknown": f"transform of {step.column} unknown: {looked}"})

    def _matched(
        self, previous: LineageStep, step: LineageStep, expression: ColumnExpression, where: str, problems: list[str]
    ) -> LineageStep:
        source = find_upstream(expression, dataset_parts(previous.dataset_urn)[1], previous.column)
        if source is None:
            problems.append(f"{where}: {step.column} = {expression.sql} does not read {previous.column}")
            return step
        notes: list[tuple[str, str]] = [(note.kind, note.reason) for note in expression.notes_for(source[0])]
        if source in expression.row_columns:
            notes.insert(0, (PICKS, f"the SQL also picks or matches rows by {source[1]}"))
        return step.model_copy(
            update={
                "expression": expression.sql,
                "expression_input": source,
                "expression_from": where,
                "dialect": expression.dialect,
                "row_notes": notes,
            }
        )

    def _columns(self, sql: str, dialect: str | None, schema: dict[str, list[str]]) -> SqlColumns | str:
        key = (sql, dialect, bool(schema))
        if key not in self._parsed:
            try:
                unique = self.schemas.unique if schema else {}
                self._parsed[key] = column_expressions(sql, dialect=dialect, schema=schema, unique=unique)
            except SqlUnreadable as exc:
                self._parsed[key] = f"SQL unreadable ({exc})"
        return self._parsed[key]


def step_expression(step: LineageStep) -> ColumnExpression:
    """The step's stored expression, parsed again (discovery results cross processes and checkpoints as text)."""
    assert step.expression is not None and step.expression_input is not None
    table = step.expression_input[0]
    picks = frozenset({step.expression_input}) if any(kind == PICKS for kind, _ in step.row_notes) else frozenset()
    kinds = ("repeats", "spreads", "matched")
    notes = frozenset(
        RowNote(table, kind, why, step.matched_share if kind == "matched" else None)  # type: ignore[arg-type]
        for kind, why in step.row_notes
        if kind in kinds
    )
    parsed = sqlglot.parse_one(step.expression, read=step.dialect)
    found = ColumnExpression.of(step.column, parsed, step.dialect, picks, notes)
    return replace(found, integers=frozenset(tuple(pair) for pair in step.integer_inputs))  # type: ignore[misc]


def _rounds(expression: str) -> bool:
    upper = expression.upper()
    return "ROUND(" in upper or "DECIMAL(" in upper or "NUMERIC(" in upper


def _field(step: LineageStep) -> str:
    return f"urn:li:schemaField:({step.dataset_urn},{step.column})"
