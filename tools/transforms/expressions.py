"""Each output column of one SQL statement (dbt compiled code, a view definition, CREATE TABLE ... AS, INSERT ...
SELECT) as an expression over base-table columns, read with sqlglot; `find_upstream` matches a DataHub dataset
column to one of its upstream columns.

Output names are normalised as Postgres does (unquoted lower-cased, quoted kept); so are the base columns in the
expressions, each an `exp.Column` qualified with its base table (`db.raw.claims.amount`). An output column that
cannot be followed exactly is left out of `columns` and listed in `unreadable` with the reason. Each column also
carries the base columns that pick or match the statement's rows (`row_columns`): a change to one of those changes
which rows exist, which no per-row derivation describes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from tools.errors import BadRequest
from tools.transforms.joins import RowNote, notes_of
from tools.transforms.nodes import column_key, normalise, render
from tools.transforms.resolve import resolve_query
from tools.transforms.sources import Env, Relation, Unreadable

ALL_COLUMNS = "*"
"""The `unreadable` key for outputs a `SELECT *` yields whose names are unknown (no schema for the table)."""


class SqlUnreadable(BadRequest, ValueError):
    """sqlglot cannot parse the SQL, or the statement yields no rows from a query; the message says why."""


@dataclass(frozen=True)
class ColumnExpression:
    output: str
    expression: exp.Expr
    """Over base-table columns only: every column an `exp.Column` qualified with its base table."""
    sql: str
    upstream: frozenset[tuple[str, str]]
    """(table, column) pairs the expression reads, e.g. ("db.raw.claims", "amount")."""
    dialect: str | None = None
    row_columns: frozenset[tuple[str, str]] = frozenset()
    """Base columns that decide which rows the statement yields (WHERE, JOIN ON/USING, QUALIFY, ORDER BY with
    LIMIT, in any SELECT it reads): changing one of them changes the rows, not just this column's values."""
    row_notes: frozenset[RowNote] = frozenset()
    """Base tables whose rows a JOIN repeats or reaches only where matched (joins.py)."""
    integers: frozenset[tuple[str, str]] = frozenset()
    """Base columns the catalog types as integers: a NUMERIC(p, s) cast of one (or of it / 100) loses nothing."""

    @classmethod
    def of(
        cls,
        output: str,
        expression: exp.Expr,
        dialect: str | None = None,
        row_columns: frozenset[tuple[str, str]] = frozenset(),
        row_notes: frozenset[RowNote] = frozenset(),
    ) -> ColumnExpression:
        upstream = frozenset(column_key(column) for column in expression.find_all(exp.Column))
        notes = row_notes | notes_of(expression)
        return cls(output, expression, render(expression, dialect), upstream, dialect, row_columns, notes)

    def notes_for(self, table: str) -> list[RowNote]:
        order = {"repeats": 0, "spreads": 1, "matched": 2}
        return sorted((note for note in self.row_notes if note.table == table), key=lambda n: (order[n.kind], n.reason))


@dataclass(frozen=True)
class SqlColumns:
    columns: dict[str, ColumnExpression] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)
    """Output column -> why it cannot be followed (`*` for the unknown outputs of a SELECT * without schema)."""
    target: str | None = None
    """The table a CREATE ... AS or INSERT INTO writes, dotted and normalised; None for a bare SELECT."""
    row_columns: frozenset[tuple[str, str]] = frozenset()
    """Base columns that pick, match, group or order the statement's rows: a change to one may alter every output."""


def _parse(sql: str, dialect: str | None) -> exp.Expr:
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (ParseError, TokenError) as exc:
        first = exc.errors[0] if isinstance(exc, ParseError) and exc.errors else {}
        where = f" at line {first.get('line')}, col {first.get('col')}" if first else ""
        detail = str(first.get("description") or str(exc).splitlines()[0] or type(exc).__name__)
        detail = detail.split(" <Token")[0].removesuffix(" but got")
        near = f" near {first['highlight']!r}" if first.get("highlight") else ""
        raise SqlUnreadable(f"sqlglot cannot parse the SQL{where}: {detail}{near}") from exc
    except ValueError as exc:  # an unknown dialect name
        raise SqlUnreadable(str(exc)) from exc
    if len(statements) != 1:
        raise SqlUnreadable(f"expected one SQL statement, found {len(statements)}")
    return statements[0]


def _target(node: exp.Expr) -> tuple[str | None, list[str] | None]:
    """The written table (dotted) and its listed columns (`INSERT INTO t (a, b)`, `CREATE VIEW v (a, b)`)."""
    listed = None
    if isinstance(node, exp.Schema):
        listed = [normalise(i) if isinstance(i, exp.Identifier) else i.name.lower() for i in node.expressions]
        node = node.this
    if not isinstance(node, exp.Table):
        return None, listed
    return ".".join(normalise(p) for p in node.parts if isinstance(p, exp.Identifier)), listed


def _query(statement: exp.Expr) -> tuple[exp.Expr, str | None, list[str] | None]:
    if isinstance(statement, exp.Create | exp.Insert):
        query = statement.expression
        if not isinstance(query, exp.Query):
            kind = "INSERT" if isinstance(statement, exp.Insert) else "CREATE"
            raise SqlUnreadable(f"the {kind} statement has no SELECT (only {type(query).__name__ or 'nothing'})")
        return (query, *_target(statement.this))
    if isinstance(statement, exp.Query):
        return statement, None, None
    raise SqlUnreadable(f"not a query: a {type(statement).__name__} statement")


def _by_position(relation: Relation, listed: list[str]) -> Relation:
    if relation.open:
        reason = f"the target's columns are listed by position, but {relation.open_reason()}"
        return Relation(tuple((name, Unreadable(reason)) for name in listed))
    if len(relation.columns) != len(listed):
        raise SqlUnreadable(f"{len(listed)} target columns listed but the SELECT yields {len(relation.columns)}")
    renamed = tuple((name, value) for name, (_, value) in zip(listed, relation.columns, strict=True))
    return Relation(renamed, row_columns=relation.row_columns, row_notes=relation.row_notes)


def column_expressions(
    sql: str,
    *,
    dialect: str | None = None,
    schema: Mapping[str, list[str]] | None = None,
    unique: Mapping[str, list[list[str]]] | None = None,
) -> SqlColumns:
    """Every output column of the statement as an expression over base-table columns (see the module doc);
    `schema` lists tables' columns, `unique` their unique column sets (primary keys, dbt `unique` tests)."""
    query, target, listed = _query(_parse(sql, dialect))
    relation = resolve_query(query, Env(schema or {}, unique=unique or {}, dialect=dialect))
    if listed is not None:
        relation = _by_position(relation, listed)
    result = SqlColumns(target=target, row_columns=relation.row_columns)
    for name, value in relation.columns:
        if name in result.columns or name in result.unreadable:
            result.columns.pop(name, None)
            result.unreadable[name] = "two output columns have this name"
        elif isinstance(value, Unreadable):
            result.unreadable[name] = value.reason
        else:
            result.columns[name] = ColumnExpression.of(name, value, dialect, relation.row_columns)
    if relation.open:
        result.unreadable[ALL_COLUMNS] = relation.open_reason()
    return result


def _parts(name: str) -> list[str]:
    return [part.strip('"`[]').lower() for part in name.split(".") if part]


def find_upstream(col_expr: ColumnExpression, dataset_name: str, column: str) -> tuple[str, str] | None:
    """The (table, column) of `col_expr.upstream` that is the DataHub dataset column: the column equal
    case-insensitively, and the table's dotted parts a suffix of the dataset name's parts (or the other way
    round). The longest such match wins; None when there is none or two match equally well."""
    wanted = _parts(dataset_name)
    best: list[tuple[int, tuple[str, str]]] = []
    for table, name in col_expr.upstream:
        parts = _parts(table)
        shorter = min(len(parts), len(wanted))
        if name.lower() != column.lower() or not shorter or parts[-shorter:] != wanted[-shorter:]:
            continue
        best.append((shorter, (table, name)))
    if not best:
        return None
    best.sort(key=lambda item: -item[0])
    if len(best) > 1 and best[0][0] == best[1][0]:
        return None
    return best[0][1]
