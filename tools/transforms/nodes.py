"""Small readers of sqlglot nodes shared by the resolver and the derivation rules: identifier normalisation (as
Postgres does it), the (table, column) key of a base-table column, parentheses, constants and lossless casts."""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Literal

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.generator import Generator

Scalar = bool | int | float | str
CastKind = Literal["numeric", "string", "any", "none"]

_FLOATING = (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT, exp.DataType.Type.UDOUBLE)
_DECIMAL = (exp.DataType.Type.DECIMAL, exp.DataType.Type.BIGDECIMAL)
_TEXT = (exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR, exp.DataType.Type.NVARCHAR)
INTEGER_TYPES = tuple(exp.DataType.INTEGER_TYPES)


def normalise(identifier: exp.Identifier | str) -> str:
    """An unquoted identifier lower-cased (as Postgres folds it); a quoted one kept as written."""
    if isinstance(identifier, str):
        return identifier.lower()
    return str(identifier.this) if identifier.quoted else str(identifier.this).lower()


def dotted(parts: list[exp.Identifier]) -> str:
    return ".".join(normalise(part) for part in parts)


def column_key(column: exp.Column) -> tuple[str, str]:
    """(table, column) of a column qualified with its base table: ("db.raw.claims", "amount")."""
    qualifier = [part for part in column.parts[:-1] if isinstance(part, exp.Identifier)]
    return dotted(qualifier), normalise(column.this) if isinstance(column.this, exp.Identifier) else column.name


def is_source(node: exp.Expr, source: tuple[str, str]) -> bool:
    return isinstance(node, exp.Column) and column_key(node) == source


def mentions(node: exp.Expr, source: tuple[str, str]) -> bool:
    return any(column_key(column) == source for column in node.find_all(exp.Column))


def unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def literal(node: exp.Expr) -> Scalar | None:
    """The Python value of a constant (`100`, `-1`, `2.5`, `'US'`, `TRUE`, `(5)`); None when it is not one
    (NULL included)."""
    node = unparen(node)
    if isinstance(node, exp.Neg):
        inner = literal(node.this)
        return -inner if isinstance(inner, int | float) and not isinstance(inner, bool) else None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if not isinstance(node, exp.Literal):
        return None
    if node.is_string:
        return str(node.this)
    try:
        return int(node.this) if node.is_int else float(node.this)
    except ValueError:
        return None


def number(node: exp.Expr) -> int | float | None:
    value = literal(node)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def lossless_cast(node: exp.Expr, kind: CastKind) -> bool:
    """A cast that keeps every value of its kind exactly: numbers to a floating type or unparameterised
    NUMERIC/DECIMAL; strings to TEXT or VARCHAR without a length. A cast to an integer type rounds: never."""
    if not isinstance(node, exp.Cast) or node.to.expressions:
        return False
    numeric = node.to.is_type(*_FLOATING, *_DECIMAL)
    string = node.to.is_type(*_TEXT)
    return {"numeric": numeric, "string": string, "any": numeric or string, "none": False}[kind]


def peel(node: exp.Expr, kind: CastKind) -> exp.Expr:
    """The expression inside any parentheses and lossless casts of the given kind."""
    node = unparen(node)
    while lossless_cast(node, kind):
        node = unparen(node.this)
    return node


_GENERATORS = threading.local()


def render(node: exp.Expr, dialect: str | None = None) -> str:
    """`node.sql(dialect)` with one generator per dialect and thread: some dialects' generators take milliseconds
    to build (DuckDB's ~10 ms), and messages render many expressions."""
    cache: dict[str | None, Generator] = _GENERATORS.__dict__.setdefault("by_dialect", {})
    generator = cache.get(dialect)
    if generator is None:
        generator = cache[dialect] = Dialect.get_or_raise(dialect).generator()
    return generator.generate(node, copy=True)


def shown(node: exp.Expr) -> str:
    """A sub-expression as a message quotes it: columns by name alone where that is unambiguous."""
    return short_sql(node)


def short_sql(node: exp.Expr, dialect: str | None = None) -> str:
    """The SQL with columns written by name alone when no two upstream tables share that name (for messages)."""
    columns = list(node.find_all(exp.Column))
    tables_by_name: dict[str, set[str]] = {}
    for column in columns:
        table, name = column_key(column)
        tables_by_name.setdefault(name, set()).add(table)
    shown = node.copy()
    for column in list(shown.find_all(exp.Column)):
        table, name = column_key(column)
        if len(tables_by_name.get(name, ())) == 1:
            column.set("table", None)
            column.set("db", None)
            column.set("catalog", None)
    return render(shown, dialect)


def decimal_scale(to: exp.DataType) -> int | None:
    """s of NUMERIC(p, s) / DECIMAL(p, s); None for any other type."""
    if not to.is_type(*_DECIMAL) or len(to.expressions) != 2:
        return None
    value = to.expressions[1].this
    scale = getattr(value, "this", value)
    try:
        return int(str(scale))
    except ValueError:
        return None


def places(value: object) -> int:
    """Decimal places of a number as written in its shortest form (0 for integers; 15 significant digits)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 99
    if isinstance(value, int) or float(value).is_integer():
        return 0
    exponent = Decimal(f"{value:.15g}").normalize().as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def names_match(written: str, dataset_name: str) -> bool:
    """`raw.payments` written in SQL names the dataset `shop.raw.payments` (the database is the connection's)."""
    written, full = written.lower(), dataset_name.lower()
    return full == written or full.endswith("." + written)
