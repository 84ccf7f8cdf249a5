"""How a JOIN maps each side's rows into the output, for carrying a change made to a share of one side's rows.

A change to every row of a table (fraction 1) reaches every output row built from it, whatever the join does: a row
repeated by a fan-out is a changed row repeated. A change to a random share of rows is carried with that share only
when each changed row lands in the output once, so for each base table a SELECT reads through a join this module
records what can break that (`RowNote`):

- `repeats`: a LEFT/INNER join to a side whose join key is not known to be unique repeats the other side's rows
  (uniqueness is known from the SQL itself — a GROUP BY or DISTINCT on the key — or from the catalog: a primary key
  or a dbt `unique` test, passed in `Env.unique`);
- `spreads`: a side joined on a key known to be unique (a dimension) reaches every output row that matches it, but
  each output row reads at most one of its rows: a change to a random share of its rows reaches each output row with
  that same probability (the rows sharing one dimension row change together);
- `matched`: the right side of a LEFT join (either side of a FULL join) reaches only the output rows that found a
  match; the others get NULL whatever the change, so only NULL-preserving changes (scale, shift, nulls, a category
  remap, …) are carried, and only on every row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from sqlglot import exp

from tools.transforms.nodes import column_key, normalise

RowKind = Literal["repeats", "spreads", "matched"]


@dataclass(frozen=True)
class RowNote:
    table: str
    kind: RowKind
    reason: str
    share: float | None = None
    """For `matched`: the share of output rows that found a match, when the warehouse counted it."""


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


def _left_keys(join: exp.Join, alias: str, aliases: list[str]) -> dict[int, set[str]]:
    """The left sides' columns the join matches on, by side: the other column of each equality in ON that
    involves the right side, or a USING name on every left side."""
    using = join.args.get("using") or []
    if using:
        names = {normalise(i) if isinstance(i, exp.Identifier) else i.name.lower() for i in using}
        return {i: set(names) for i in range(len(aliases))}
    on = join.args.get("on")
    found: dict[int, set[str]] = {}
    for eq in on.find_all(exp.EQ) if on is not None else []:
        pair = [eq.this, eq.expression]
        if not all(isinstance(c, exp.Column) and c.table for c in pair):
            continue
        tables = [normalise(c.args["table"]) for c in pair]
        if alias in tables:
            other = pair[1 - tables.index(alias)]
            qualifier = normalise(other.args["table"])
            if qualifier in aliases:
                name = normalise(other.this) if isinstance(other.this, exp.Identifier) else other.name
                found.setdefault(aliases.index(qualifier), set()).add(name)
    return found


def _same_rows(
    index: int,
    left: dict[int, set[str]],
    keys: frozenset[str],
    unique: list[list[frozenset[str]]],
    origins: list[str | None],
) -> bool:
    """Both sides project the rows of one table one for one and the join matches them on the same unique key:
    every left row finds its own row on the right (`orders o left join order_amounts a using (order_id)` where
    both are `select … from orders`)."""
    if len(origins) <= index or origins[index] is None or len(left) != 1:
        return False
    ((i, left_keys),) = left.items()
    return (
        origins[i] == origins[index]
        and left_keys == set(keys)
        and any(k <= keys for k in unique[index])
        and any(k <= frozenset(left_keys) for k in unique[i])
    )


def _describe(join: exp.Join) -> str:
    text = join.sql()
    return text if len(text) <= 160 else text[:157] + "..."


NOTES = "row_notes"
"""The `meta` key of a resolved expression node: the RowNotes of the joins its value came through."""


def notes_of(node: exp.Expr) -> frozenset[RowNote]:
    """Every RowNote recorded on the nodes of a resolved expression."""
    return frozenset(note for n in node.walk() for note in n.meta.get(NOTES, ()))


def join_notes(
    joins: list[exp.Join],
    sides: list[tuple[str, set[str]]],
    unique: list[list[frozenset[str]]],
    origins: list[str | None] | None = None,
    same_column: Callable[[int, int, str], bool] | None = None,
) -> dict[int, set[RowNote]]:
    """`sides[i]` is (alias, base tables) of the FROM source (i = 0) and each joined source; `unique[i]` the key
    sets known to be unique in it. Per side: how the joins may repeat its rows, or reach them only where matched."""
    notes: dict[int, set[RowNote]] = {i: set() for i in range(len(sides))}

    def add(index: int, kind: RowKind, reason: str) -> None:
        notes[index] |= {RowNote(table, kind, reason) for table in sides[index][1] or {sides[index][0]}}

    for index, join in enumerate(joins, start=1):
        alias = sides[index][0]
        kind = (join.args.get("kind") or "").upper()
        side = (join.side or "").upper()
        text = _describe(join)
        keys = frozenset(_key_names(join, alias))
        if kind == "CROSS" or not keys:
            for i in range(index + 1):
                add(i, "repeats", f"{text} pairs rows without a key")
            continue
        if not any(k <= keys for k in unique[index]):
            why = (
                f"{text}: each row is repeated for every match unless {alias}.{'/'.join(sorted(keys))} is unique "
                f"(a dbt `unique` test or a primary key on it, ingested into the catalog, proves it)"
            )
            for i in range(index):
                add(i, "repeats", why)
        left = _left_keys(join, alias, [a for a, _ in sides[:index]])
        left_unique = bool(left) and all(
            any(k <= keys_ for k in unique[i]) and not any(n.kind in ("repeats", "spreads") for n in notes[i])
            for i, keys_ in left.items()
        )
        if not left_unique:
            # Each output row still reads one row of a side joined on its unique key: the share per row is kept.
            spreads = any(k <= keys for k in unique[index])
            why = f"{text}: a row of {alias} reaches every output row that matches it"
            add(index, "spreads" if spreads else "repeats", why)
        same = _same_rows(index, left, keys, unique, origins or []) and all(
            same_column is not None and same_column(i, index, key) for i in left for key in keys
        )
        if side in ("LEFT", "FULL") and not same:
            add(index, "matched", f"{text}: rows without a match in {alias} get NULL whatever the change")
        if side in ("RIGHT", "FULL"):
            for i in range(index):
                add(i, "matched", f"{text}: rows without a match on the left get NULL whatever the change")
    return notes
