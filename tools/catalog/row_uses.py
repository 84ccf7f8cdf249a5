"""Columns a change reaches without a column edge: a downstream SQL that filters, joins, groups or orders rows by the
changed column (`where payment_status = 'success'`, `left join customers using (customer_id)`, `row_number() over
(partition by customer_id …)`) may change every one of its output columns, and DataHub records no column-level
lineage for such a use. Without this, a change to a status or a join key would reach no column: a silent PASS.

For each dataset that holds a changed column, the datasets one hop downstream whose SQL (a view's definition, a dbt
node's compiled code) uses the column that way are found; every output column of theirs is then reached through an
edge whose transform is `ROWS: <why>`, which is never carried (the model is INCOMPLETE quoting why), and the walk
goes on from those columns. A downstream dataset whose SQL is unknown is not assumed either way: its column edges
(if any) are all there is, as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tools.catalog.column_paths import field_urn
from tools.catalog.datahub import CatalogReader, FineGrainedEdge
from tools.catalog.siblings import Sibling
from tools.catalog.sql_source import DIALECTS, ROWS_TRANSFORM, is_jinja
from tools.catalog.training_runs import dataset_parts
from tools.transforms.expressions import SqlColumns, SqlUnreadable, column_expressions


def _matches(table: str, dataset_name: str) -> bool:
    parts, wanted = table.lower().split("."), dataset_name.lower().split(".")
    shorter = min(len(parts), len(wanted))
    return shorter > 0 and parts[-shorter:] == wanted[-shorter:]


@dataclass
class RowUses:
    reader: CatalogReader
    siblings: dict[str, list[Sibling]] = field(default_factory=dict)
    edges: list[FineGrainedEdge] = field(default_factory=list)
    """The `ROWS:` edges found so far (upstream field -> each output column of the dataset whose rows it picks)."""
    _checked: set[tuple[str, str]] = field(default_factory=set)
    _sql: dict[str, SqlColumns | None] = field(default_factory=dict)

    async def find(self, holders: dict[str, set[str]], hits: dict[str, list[str]]) -> dict[str, set[str]]:
        """New (dataset -> columns) reached through row uses of the holders' columns; `hits` lists each holder's
        datasets one hop downstream."""
        pending = {
            (urn, column)
            for urn, columns in holders.items()
            for column in columns
            if (urn, column) not in self._checked
        }
        if not pending:
            return {}
        self._checked |= pending
        downstream = sorted({d for urn, _ in pending for d in hits.get(urn, [])})
        if not downstream:
            return {}
        with_siblings = sorted({u for d in downstream for u in [d, *(s.urn for s in self.siblings.get(d, []))]})
        views = await self.reader.sdk_aspects(with_siblings, ["viewProperties"])
        found: dict[str, set[str]] = {}
        for urn, column in sorted(pending):
            name = dataset_parts(urn)[1]
            for target in hits.get(urn, []):
                outputs, why = self._uses(target, views, name, column)
                if not outputs:
                    continue
                for output in outputs:
                    self.edges.append(
                        FineGrainedEdge(
                            upstream=field_urn(urn, column),
                            downstream=field_urn(target, output),
                            transform=f"{ROWS_TRANSFORM}: {why}",
                        )
                    )
                found.setdefault(target, set()).update(outputs)
        return found

    def _uses(
        self, target: str, views: dict[str, dict[str, dict[str, object] | None]], name: str, column: str
    ) -> tuple[list[str], str]:
        for urn in [target, *(s.urn for s in self.siblings.get(target, []))]:
            parsed = self._parsed(urn, views)
            if parsed is None:
                continue
            if any(_matches(table, name) and col.lower() == column.lower() for table, col in parsed.row_columns):
                outputs = sorted({*parsed.columns, *(c for c in parsed.unreadable if c != "*")})
                why = (
                    f"the SQL of {dataset_parts(target)[1]} filters, joins, groups or orders rows by {column}: "
                    "a change to it may alter every column"
                )
                return outputs, why
        return [], ""

    def _parsed(self, urn: str, views: dict[str, dict[str, dict[str, object] | None]]) -> SqlColumns | None:
        """The dataset's SQL read once per discovery, however many changed columns it is checked for."""
        if urn not in self._sql:
            view = views.get(urn, {}).get("viewProperties") or {}
            sql = str(view.get("formattedViewLogic") or view.get("viewLogic") or "")
            parsed = None
            if sql and not is_jinja(sql):
                try:
                    parsed = column_expressions(sql, dialect=DIALECTS.get(dataset_parts(urn)[0] or ""))
                except SqlUnreadable:
                    parsed = None
            self._sql[urn] = parsed
        return self._sql[urn]
