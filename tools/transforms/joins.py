"""How a JOIN maps each side's rows into the output, for carrying a change made to a share of one side's rows.

A change to every row of a table (fraction 1) reaches every output row built from it, whatever the join does: a row
repeated by a fan-out is a changed row repeated. A change to a random share of rows is carried with that share only
when each changed row lands in the output once, so for each base table a SELECT reads through a join this module
records what can break that (`RowNote`):

- `repeats`: a LEFT/INNER join to a side whose join key is not known to be unique repeats the other side's rows
  (uniqueness is known from the SQL itself — a GROUP BY or DISTINCT on the key — or from the catalog: a primary key
  or a dbt `unique` test, passed in `Env.unique`);
- `matched`: the right side of a LEFT join (either side of a FULL join) reaches only the output rows that found a
  match; the others get NULL whatever the change, so only NULL-preserving changes (scale, shift, nulls, a category
  remap, …) are carried, and only on every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlglot import exp

from tools.transforms.nodes import column_key, normalise

RowKind = Literal["repeats", "matched"]


@dataclass(frozen=True)
class RowNote:
    table: str
    kind: RowKind
    reason: str


def tables_of(node: exp.Expr) -> set[str]:
    return {column_key(column)[0] for column in node.find_all(exp.Column) if not column.is_star}


def _key_names(join: exp.Join, alias: str) -> list[str]:
    """The right side's columns the join matches on: USING names, or the `alias.col` of each equality in ON."""
    using = join.args.get("using") or []
    if using:
        return [normalise(i) if isinstance(i, exp.Identifier) else i.name.lower() for i in using]
    on = join.args.get("on")
    names: list[str] = []
    for eq in on.find_all(exp.EQ) if on is not None else []:
        for side in (eq.this, eq.expression):
            if isinstance(side, exp.Column) and side.table and normalise(side.args["table"]) == alias:
                names.append(normalise(side.this) if isinstance(side.this, exp.Identifier) else side.name)
    return names


def _describe(join: exp.Join) -> str:
    text = join.sql()
    return text if len(text) <= 160 else text[:157] + "..."


def join_notes(
    joins: list[exp.Join],
    sides: list[tuple[str, set[str], bool]],
    unique: list[list[frozenset[str]]],
) -> set[RowNote]:
    """`sides[i]` is (alias, base tables, exists) of the FROM source (i = 0) and each joined source; `unique[i]`
    the key sets known to be unique in it. Which base tables' rows may repeat or reach only matched rows."""
    notes: set[RowNote] = set()
    for index, join in enumerate(joins, start=1):
        alias, right_tables, _ = sides[index]
        left_tables = {t for _, tables, _ in sides[:index] for t in tables}
        kind = (join.args.get("kind") or "").upper()
        side = (join.side or "").upper()
        text = _describe(join)
        keys = frozenset(_key_names(join, alias))
        right_unique = bool(keys) and any(k <= keys for k in unique[index])
        if kind == "CROSS" or not keys:
            for table in left_tables | right_tables:
                notes.add(RowNote(table, "repeats", f"{text} pairs rows without a key"))
            continue
        if not right_unique:
            why = (
                f"{text}: each row is repeated for every match unless {alias}.{'/'.join(sorted(keys))} is unique "
                f"(a dbt `unique` test or a primary key on it, ingested into the catalog, proves it)"
            )
            notes |= {RowNote(table, "repeats", why) for table in left_tables}
        right_reason = f"{text}: a row of {alias} reaches every output row that matches it"
        notes |= {RowNote(table, "repeats", right_reason) for table in right_tables}
        if side in ("LEFT", "FULL"):
            matched = f"{text}: rows without a match in {alias} get NULL whatever the change"
            notes |= {RowNote(table, "matched", matched) for table in right_tables}
        if side in ("RIGHT", "FULL"):
            matched = f"{text}: rows without a match on the left get NULL whatever the change"
            notes |= {RowNote(table, "matched", matched) for table in left_tables}
    return notes
