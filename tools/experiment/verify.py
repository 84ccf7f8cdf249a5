"""Each derivation checked by execution, when a warehouse is reachable (`PROVENANCE_WAREHOUSE_URL`).

A derivation says: when the input column undergoes M, the output column `e(...)` undergoes M'. The warehouse checks
it on real rows: `SELECT e AS before, e[input := M(input)] AS after FROM <the one table e reads> LIMIT n` — the
column's own SQL run unchanged and with the change substituted — and every row must satisfy after = M'(before).
A disagreement makes the model INCOMPLETE quoting both; an expression over several tables (a join) is not checked,
and says so. Only SELECTs Provenance built run, read-only, as in tools/catalog/branch_counts.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from tools.catalog.branch_counts import ReadOnlyWarehouse, WarehouseError, warehouse_from_environment
from tools.mutations import Mutation
from tools.transforms.expressions import ColumnExpression
from tools.transforms.nodes import column_key
from tools.transforms.unions import through_union

SAMPLE_ROWS = 2000
NOT_VERIFIED = "not verified (no warehouse: set PROVENANCE_WAREHOUSE_URL to check each derivation on real rows)"


@dataclass(frozen=True)
class Check:
    agrees: bool
    said: str


def changed_sql(column: exp.Expr, mutation: Mutation) -> exp.Expr:
    """The SQL of the input column after the change (on every row)."""
    params = mutation.model_dump()
    c = column.copy()
    op = mutation.op
    if op == "scale":
        return exp.Paren(this=exp.Mul(this=c, expression=exp.Literal.number(params["factor"])))
    if op == "shift":
        return exp.Paren(this=exp.Add(this=c, expression=exp.Literal.number(params["offset"])))
    if op == "sign_flip":
        return exp.Paren(this=exp.Neg(this=c))
    if op == "null_inject":
        return exp.Nullif(this=c, expression=column.copy())  # NULL, of the column's own type
    if op in ("constant", "unseen_category"):
        value = params["value"]
        literal = exp.Literal.string(value) if isinstance(value, str) else exp.Literal.number(value)
        return literal if not isinstance(value, bool) else exp.Boolean(this=value)
    if op == "category_remap":
        ifs = [exp.If(this=exp.Literal.string(k), true=exp.Literal.string(v)) for k, v in params["mapping"].items()]
        return exp.Case(this=c, ifs=ifs, default=column.copy())
    raise ValueError(f"{op} is not checked by execution")


def value_after(mutation: Mutation, value: Any) -> Any:
    """One value under the operator, as the experiment applies it to a changed row (None: NULL)."""
    params = mutation.model_dump()
    if value is None and mutation.op not in ("constant", "unseen_category"):
        return None
    op = mutation.op
    if op == "null_inject":
        return None
    if op in ("constant", "unseen_category"):
        return params["value"]
    if op == "category_remap":
        return params["mapping"].get(str(value), value)
    number = float(value)
    if op == "scale":
        return number * params["factor"]
    if op == "shift":
        return number + params["offset"]
    if op == "sign_flip":
        return -number
    raise ValueError(f"{op} is not checked by execution")


def _same(x: Any, y: Any) -> bool:
    if x is None or y is None:
        return x is None and y is None
    try:
        return math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-9)
    except (TypeError, ValueError):
        return str(x) == str(y)


class Verifier:
    def __init__(self, warehouse: ReadOnlyWarehouse | None) -> None:
        self.warehouse = warehouse

    @classmethod
    def from_environment(cls) -> Verifier:
        return cls(warehouse_from_environment())

    def check(
        self, mutation: Mutation, expression: ColumnExpression, source: tuple[str, str], derived: Mutation | None
    ) -> Check:
        """Whether the derivation `source: mutation -> expression.output: derived` (None: unchanged) holds on the
        warehouse's rows."""
        if self.warehouse is None:
            return Check(True, NOT_VERIFIED)
        node = expression.expression
        branch = through_union(node, source)
        if branch is not None:
            node = branch.expression
        tables = {column_key(c)[0] for c in node.find_all(exp.Column)}
        if len(tables) != 1:
            return Check(True, f"not verified ({expression.output} reads {len(tables)} tables: a join)")
        try:
            after_node = node.transform(
                lambda n: changed_sql(n, mutation) if isinstance(n, exp.Column) and column_key(n) == source else n,
                copy=True,
            )
        except ValueError as exc:
            return Check(True, f"not verified ({exc})")
        (table,) = tables
        sql = exp.select(node.as_("before"), after_node.as_("after")).from_(table).limit(SAMPLE_ROWS)
        try:
            rows = self.warehouse.rows(sql.sql(dialect=expression.dialect), expression.dialect)
        except WarehouseError as exc:
            return Check(True, f"not verified ({exc})")
        for before, after in rows:
            expected = before if derived is None else value_after(derived, before)
            if not _same(after, expected):
                said = "unchanged" if derived is None else derived.describe(expression.output)
                return Check(
                    False,
                    f"the warehouse disagrees with the derivation ({said}): {expression.output} went from "
                    f"{before!r} to {after!r}, the derivation says {expected!r}",
                )
        return Check(True, f"verified by execution on {len(rows)} rows of {table}")
