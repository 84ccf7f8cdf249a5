"""What a downstream column undergoes, computed rather than reasoned: the warehouse re-runs the dataset's SQL
(tools/catalog/rerun_plan.py) over the changed table left as it is, then with the change applied inside the query,
and the two results are compared row by row on the dataset's unique key. Each column is then classified: the
simplest allowlisted operator that maps every changed row's old value to its new one (sign flip, scale, shift,
NULLs, a constant, a category remap), on the share of the rows it would alter that did change — or, when no
operator does, INCOMPLETE saying how the rows changed.

This reads today's data: the evidence says "re-run in the warehouse on N rows". Nothing is written: both runs are
single SELECTs in a read-only transaction (tools/catalog/branch_counts.py). A change to a share of the rows picks
them by a hash of each row (PostgreSQL's md5), so the two runs see the same rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from tools.catalog.branch_counts import ReadOnlyWarehouse, WarehouseError, relation_name, warehouse_from_environment
from tools.catalog.discovery import RerunPlan
from tools.catalog.rerun_plan import CHANGED
from tools.experiment.verify import Check, changed_sql, value_after
from tools.mutations import Mutation, parse_mutation
from tools.mutations.operators import PlanError

MAX_ROWS = 200_000
"""Larger datasets are not re-run whole (the model is INCOMPLETE saying so)."""


@dataclass(frozen=True)
class Effect:
    mutation: Mutation | None
    unchanged: bool
    said: str
    ran: bool = True
    """False when the dataset could not be re-run at all (`said` says why)."""

    @property
    def refused(self) -> bool:
        return self.mutation is None and not self.unchanged


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | Decimal):
        return float(value)
    return None


def _same(x: Any, y: Any) -> bool:
    if x is None or y is None:
        return x is None and y is None
    nx, ny = _number(x), _number(y)
    if nx is not None and ny is not None:
        return math.isclose(nx, ny, rel_tol=1e-9, abs_tol=1e-9)
    return bool(x == y)


def _plain(value: Any) -> str | int | float | bool | None:
    if value is None or isinstance(value, bool | str | int):
        return value
    number = _number(value)
    if number is not None:
        return int(number) if number.is_integer() and isinstance(value, Decimal) and value == int(value) else number
    raise ValueError(f"a value of type {type(value).__name__}")


def _constant_ratio(pairs: list[tuple[float, float]], ratio: bool) -> float | None:
    steps = [(y / x if ratio else y - x) for x, y in pairs if not ratio or x != 0]
    if not steps or (ratio and any(x == 0 for x, _ in pairs)):
        return None
    first = steps[0]
    return first if all(math.isclose(s, first, rel_tol=1e-6, abs_tol=1e-9) for s in steps) else None


def classify(pairs: list[tuple[Any, Any]]) -> tuple[str, dict[str, Any], float] | str | None:
    """(op, params, share of the rows the operator alters that did change) for the column's before/after values;
    None when no value changed; a sentence when no allowlisted operator explains the change."""
    changed = [(x, y) for x, y in pairs if not _same(x, y)]
    if not changed:
        return None
    olds, news = [x for x, _ in changed], [y for _, y in changed]

    def share(op_alters: int) -> float:
        return len(changed) / op_alters if op_alters else 1.0

    if all(y is None for y in news):
        return "null_inject", {}, share(sum(1 for x, _ in pairs if x is not None))
    if any(y is None for y in news) or any(x is None for x in olds) and not all(_same(y, news[0]) for y in news):
        return "some changed rows became NULL or came from NULL, with different values"
    numbers = [(_number(x), _number(y)) for x, y in changed]
    if all(a is not None and b is not None for a, b in numbers):
        floats = [(float(a), float(b)) for a, b in numbers if a is not None and b is not None]
        alterable = sum(1 for x, _ in pairs if _number(x) not in (None, 0.0))
        if all(math.isclose(b, -a, rel_tol=1e-9, abs_tol=1e-12) for a, b in floats):
            return "sign_flip", {}, share(alterable)
        factor = _constant_ratio(floats, ratio=True)
        if factor is not None and factor != 0:  # ×0 is the constant 0, below
            return "scale", {"factor": float(f"{factor:.12g}")}, share(alterable)
        offset = _constant_ratio(floats, ratio=False)
        if offset is not None:
            return "shift", {"offset": float(f"{offset:.12g}")}, share(sum(1 for x, _ in pairs if x is not None))
    remap = _remap(pairs, changed) if all(isinstance(v, str) for v in olds + news) else None
    if isinstance(remap, dict):  # exactly the rows holding some values changed: more faithful than a constant
        return "category_remap", {"mapping": remap}, 1.0
    if all(_same(y, news[0]) for y in news):
        value = _plain(news[0])
        return "constant", {"value": value}, share(sum(1 for x, _ in pairs if not _same(x, news[0])))
    if remap is not None:
        return remap
    return "the changed rows follow no one operator"


def _remap(pairs: list[tuple[Any, Any]], changed: list[tuple[Any, Any]]) -> dict[str, str] | str:
    """The mapping of old to new text values, when every row holding a mapped value changed the same way."""
    mapping: dict[str, str] = {}
    for x, y in changed:
        if mapping.setdefault(str(x), str(y)) != str(y):
            return f"{x!r} became several values"
    if any(_same(x, y) and x is not None and str(x) in mapping for x, y in pairs):
        return "a value changed on some of the rows holding it only (which ones depends on other columns)"
    return mapping


def _picked(fraction: float, seed: int) -> exp.Expr:
    """TRUE on a share of the rows, by a hash of each row (the same rows in every run)."""
    bound = int(fraction * 2**32)
    text = f"('x' || SUBSTR(MD5(CAST(__t AS TEXT) || '{seed}'), 1, 8))::BIT(32)::BIGINT < {bound}"
    return sqlglot.parse_one(text, read="postgres")


class Rerunner:
    def __init__(self, warehouse: ReadOnlyWarehouse | None) -> None:
        self.warehouse = warehouse
        self._runs: dict[tuple[str, str], tuple[dict[tuple[Any, ...], dict[str, Any]], int] | str] = {}
        self._baselines: dict[str, tuple[list[str], list[tuple[Any, ...]]]] = {}

    @classmethod
    def from_environment(cls) -> Rerunner:
        return cls(warehouse_from_environment())

    def _source(self, plan: RerunPlan, mutation: Mutation | None, column: str) -> exp.Select:
        table = exp.to_table(relation_name(plan.source_table, plan.dialect), dialect=plan.dialect).as_("__t")
        projections: list[exp.Expr] = []
        for name in plan.source_columns:
            value: exp.Expr = exp.column(name, table="__t", quoted=True)
            if mutation is not None and name.lower() == column.lower():
                after = changed_sql(value, mutation)
                if mutation.fraction < 1.0:
                    if plan.dialect != "postgres":
                        raise ValueError("re-running a change to a share of the rows is built for PostgreSQL only")
                    branch = exp.If(this=_picked(mutation.fraction, mutation.seed), true=after)
                    after = exp.Case(ifs=[branch], default=value.copy())
                value = after
            projections.append(exp.alias_(value, name, quoted=True))
        return exp.select(*projections).from_(table)

    def _run(self, plan: RerunPlan, mutation: Mutation | None, column: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        assert self.warehouse is not None
        query = sqlglot.parse_one(plan.sql, read=plan.dialect)
        if not isinstance(query, exp.Query):
            raise ValueError("the plan's SQL is not a query")
        alias = exp.TableAlias(this=exp.to_identifier(CHANGED))
        source = exp.CTE(this=self._source(plan, mutation, column), alias=alias)
        existing = query.args.get("with_")
        query.set("with_", exp.With(expressions=[source, *(existing.expressions if existing is not None else [])]))
        wrapped = exp.select("*").from_(query.subquery("__d")).limit(MAX_ROWS + 1)
        return self.warehouse.table(wrapped.sql(dialect=plan.dialect), plan.dialect)

    def _compared(self, plan: RerunPlan, mutation: Mutation, column: str) -> tuple[dict[Any, Any], int] | str:
        cached = self._runs.get((plan.sql, mutation.model_dump_json() + column))
        if cached is not None:
            return cached
        try:
            if plan.sql not in self._baselines:  # the unchanged run serves every change to this dataset
                self._baselines[plan.sql] = self._run(plan, None, column)
            names, before = self._baselines[plan.sql]
            _, after = self._run(plan, mutation, column)
        except (WarehouseError, ValueError, ParseError, TokenError) as exc:
            return f"not re-run in the warehouse: {exc}"
        if len(before) > MAX_ROWS or len(after) > MAX_ROWS:
            return f"not re-run: the dataset has more than {MAX_ROWS:,} rows"
        lowered = [n.lower() for n in names]
        missing = [k for k in plan.key if k.lower() not in lowered]
        if missing:
            return f"not re-run: the key {', '.join(missing)} is not a column of the dataset"
        index = [lowered.index(k.lower()) for k in plan.key]
        rows: dict[Any, Any] = {}
        for label, found in (("before", before), ("after", after)):
            keyed = {tuple(r[i] for i in index): dict(zip(lowered, r, strict=True)) for r in found}
            if len(keyed) != len(found):
                return f"not re-run: {'/'.join(plan.key)} repeats in the dataset ({label} the change)"
            rows[label] = keyed
        result = (rows, len(before))
        self._runs[(plan.sql, mutation.model_dump_json() + column)] = result
        return result

    def explains(
        self, plan: RerunPlan, mutation: Mutation, column: str, output: str, derived: Mutation | None
    ) -> Check:
        """Whether `derived` (None: unchanged), applied to the column's values before the change, gives its values
        after, on the share of the rows it alters. Agrees, saying so, when it cannot be checked."""
        compared = self._compared(plan, mutation, column) if self.warehouse is not None else "no warehouse"
        if isinstance(compared, str):
            return Check(True, f"not re-run ({compared})")
        rows, count = compared
        before, after, name = rows["before"], rows["after"], output.lower()
        where = f"re-run in the warehouse on {count:,} rows"
        if set(before) != set(after) or (before and name not in next(iter(before.values()))):
            return Check(False, f"{where}, the change alters which rows the dataset has")
        pairs = [(before[k][name], after[k][name]) for k in before]
        try:
            expected = [x if derived is None else value_after(derived, x) for x, _ in pairs]
        except (ValueError, TypeError) as exc:
            return Check(True, f"not re-run ({exc})")
        wrong = [(x, y) for (x, y), e in zip(pairs, expected, strict=True) if not _same(x, y) and not _same(y, e)]
        alterable = sum(1 for (x, _), e in zip(pairs, expected, strict=True) if not _same(x, e))
        changed = sum(1 for x, y in pairs if not _same(x, y))
        if wrong:
            x, y = wrong[0]
            return Check(False, f"{where}, {len(wrong)} rows of {output} changed otherwise (e.g. {x!r} -> {y!r})")
        if derived is None or alterable == 0:
            if changed:
                return Check(False, f"{where}, {changed} rows of {output} changed")
            return Check(True, f"confirmed: {output} unchanged, {where}")
        share, want = changed / alterable, derived.fraction
        if abs(share - want) > 0.02 + 3 * math.sqrt(want * (1 - want) / alterable):
            return Check(False, f"{where}, the change reached {share:.3f} of the rows it alters, not {want:g}")
        return Check(True, f"confirmed: {where}, {changed:,} of the {alterable:,} rows it alters changed as derived")

    def effect(self, plan: RerunPlan, mutation: Mutation, column: str, output: str) -> Effect:
        """What `output` of the plan's dataset undergoes when `column` of its changed table undergoes `mutation`."""
        if self.warehouse is None:
            return Effect(None, False, "not re-run (no warehouse: set PROVENANCE_WAREHOUSE_URL)", ran=False)
        compared = self._compared(plan, mutation, column)
        if isinstance(compared, str):
            return Effect(None, False, compared, ran=False)
        rows, count = compared
        before, after = rows["before"], rows["after"]
        where = f"re-run in the warehouse on {count:,} rows of the dataset (SQL of {', '.join(plan.inlined) or 'it'})"
        if set(before) != set(after):
            gone, new = len(set(before) - set(after)), len(set(after) - set(before))
            return Effect(None, False, f"{where}: the change removes {gone} and adds {new} rows of the dataset")
        name = output.lower()
        if before and name not in next(iter(before.values())):
            return Effect(None, False, f"{where}: {output} is not a column of the dataset")
        try:
            found = classify([(before[k][name], after[k][name]) for k in before])
        except ValueError as exc:
            return Effect(None, False, f"{where}: {output} holds {exc}, which no operator describes")
        if found is None:
            return Effect(None, True, f"{output}: unchanged, {where}")
        if isinstance(found, str):
            return Effect(None, False, f"{where}: {output}: {found}")
        op, params, share = found
        try:
            derived = parse_mutation(op, params, fraction=min(1.0, float(f"{share:.6g}")), seed=mutation.seed)
        except PlanError as exc:
            return Effect(None, False, f"{where}: {output} undergoes {op} {params}, outside the allowlist: {exc}")
        return Effect(derived, False, f"{output}: {derived.describe(output)}, {where}")
