"""What a FROM clause reads, for the resolver: a base table (its columns known from a schema, or not), the output
of a CTE or subquery (`Relation`), or something not followed (`Opaque`: a lateral join, UNNEST, VALUES, ...)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from tools.transforms.joins import RowNote
from tools.transforms.nodes import dotted


@dataclass(frozen=True)
class Unreadable:
    reason: str


Resolved = exp.Expr | Unreadable


@dataclass(frozen=True)
class BaseTable:
    parts: tuple[exp.Identifier, ...]
    """catalog, db, table as written (the qualifier of the columns it gives)."""
    columns: tuple[str, ...] | None
    """From the schema; None when it is not known."""

    @property
    def name(self) -> str:
        return dotted(list(self.parts))

    def lookup(self, name: str) -> Resolved | None:
        if self.columns is not None:
            known = {column.lower(): column for column in self.columns}
            if name.lower() not in known:
                return None
            name = known[name.lower()]
        qualifier = dict(zip(("catalog", "db", "table")[3 - len(self.parts) :], self.parts, strict=True))
        copies = {key: part.copy() for key, part in qualifier.items()}
        return exp.Column(this=exp.Identifier(this=name, quoted=name != name.lower()), **copies)


@dataclass(frozen=True)
class Opaque:
    reason: str

    def lookup(self, name: str) -> Resolved | None:
        return Unreadable(f"column {name} comes from {self.reason}")


@dataclass(frozen=True)
class Relation:
    """The output columns of a query, CTE or subquery, in order."""

    columns: tuple[tuple[str, Resolved], ...]
    open: tuple[Source, ...] = ()
    """Sources whose `*` went through without known columns: a name not listed may come from them."""
    row_columns: frozenset[tuple[str, str]] = frozenset()
    """Base columns that decide which rows there are (WHERE, JOIN ON/USING, QUALIFY, ORDER BY with LIMIT), here
    or in the sources it reads."""
    row_notes: frozenset[RowNote] = frozenset()
    """Base tables whose rows a JOIN here or in a source may repeat, or reach only where matched (joins.py)."""
    unique: tuple[frozenset[str], ...] = ()
    """Sets of output columns known to identify a row (GROUP BY keys, DISTINCT, or a unique key passed through)."""
    origin: str | None = None
    """The base table whose rows these are, one for one, when the query only projects them (no filter, join,
    grouping, DISTINCT or LIMIT): two such relations of one origin joined on a unique key match every row."""

    def lookup(self, name: str) -> Resolved | None:
        for key, value in self.columns:
            if key == name:
                return value
        if len(self.open) == 1:
            return self.open[0].lookup(name)
        if self.open:
            return Unreadable(f"column {name} may come from any of several SELECT * sources (pass a schema)")
        return None

    def open_reason(self) -> str:
        tables = [source.name for source in self.open if isinstance(source, BaseTable)]
        others = [source.reason for source in self.open if isinstance(source, Opaque)]
        reasons = [f"SELECT * from {', '.join(tables)}: its columns are unknown without a schema"] if tables else []
        return "; ".join(reasons + [f"SELECT * through {reason}" for reason in others])


Source = BaseTable | Opaque | Relation


@dataclass(frozen=True)
class Env:
    schema: Mapping[str, list[str]]
    ctes: dict[str, Source] = field(default_factory=dict)
    unique: Mapping[str, list[list[str]]] = field(default_factory=dict)
    """Per table, column sets known to be unique in it (primary keys, dbt `unique` tests)."""
    cte_sql: dict[str, exp.CTE] = field(default_factory=dict)
    """The CTEs in scope as written, for SQL that must run on its own (a union branch's row count)."""
    dialect: str | None = None

    def table_unique(self, name: str) -> list[frozenset[str]]:
        found = _by_suffix(self.unique, name)
        return [frozenset(c.lower() for c in key) for key in found or []]

    def table_columns(self, name: str) -> tuple[str, ...] | None:
        found = _by_suffix(self.schema, name)
        return tuple(found) if found is not None else None


def _by_suffix(mapping: Mapping[str, list[Any]], name: str) -> list[Any] | None:
    """The entry whose key is the dotted name, else the one entry whose key ends like it (or which it ends like)."""
    wanted = name.lower().split(".")
    matches = []
    for key, columns in mapping.items():
        parts = key.lower().split(".")
        shorter = min(len(parts), len(wanted))
        if parts[-shorter:] == wanted[-shorter:]:
            matches.append((len(parts) == len(wanted) and parts == wanted, list(columns)))
    exact = [columns for is_exact, columns in matches if is_exact]
    if exact:
        return exact[0]
    return matches[0][1] if len(matches) == 1 else None
