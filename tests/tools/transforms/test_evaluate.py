"""The evaluator (a column bound to one value, the others unknown) agrees with DuckDB where it answers, and says
`Depends` or raises NotEvaluable where it cannot answer exactly."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest
import sqlglot

from tools.transforms.evaluate import evaluate
from tools.transforms.nodes import Scalar
from tools.transforms.values import Depends, NotEvaluable

SOURCE = ("t", "x")

# expression over x, the value x holds (None: NULL)
AGREES: list[tuple[str, Scalar | None]] = [
    ("x * 2 + 1", 4), ("x * 2 + 1", None), ("x / 4", 6), ("-x - 0.5", 2.5), ("ABS(x)", -3), ("SQRT(x)", 16.0),
    ("LN(x)", 10.0), ("LOG(x)", 1000), ("LOG(2, x)", 32), ("EXP(x)", 1.5), ("CAST(x AS DOUBLE)", 3),
    ("CAST(x AS INTEGER)", 7.0), ("CAST(x AS VARCHAR)", 12), ("UPPER(x)", "ab c"), ("LOWER(TRIM(x))", "  Ab "),
    ("LTRIM(x)", "  a "), ("RTRIM(x)", "  a "), ("x || '-' || x", "q"), ("x || 'a'", None), ("CONCAT(x, 'a')", None),
    ("COALESCE(x, 0)", None), ("COALESCE(x, 0)", 5), ("COALESCE(NULL, x, 1)", None), ("NULLIF(x, 0)", 0),
    ("NULLIF(x, 0)", 2), ("x IS NULL", None), ("x IS NOT NULL", None), ("x IN ('a', 'b')", "b"),
    ("x IN ('a', NULL)", "c"), ("x NOT IN ('a', 'b')", None), ("x > 2 AND x < 5", 3), ("x > 2 OR x IS NULL", None),
    ("NOT (x = 'a')", None), ("x BETWEEN 1 AND 3", None), ("CASE WHEN x = 'a' THEN 'A' ELSE 'o' END", None),
    ("CASE x WHEN 'a' THEN 'A' WHEN 'b' THEN 'B' END", "b"), ("CASE WHEN x > 10 THEN 'big' END", 5),
    ("IF(x > 0, 'pos', 'neg')", -2), ("ROUND(x, 2)", None), ("SUBSTRING(x, 1, 2)", None),
    ("EXTRACT(DAY FROM x - TIMESTAMP '2024-01-01')", None), ("DATE_TRUNC('month', CAST(x AS TIMESTAMP))", None),
]  # fmt: skip


def duckdb_value(sql: str, value: Scalar | None) -> object:
    literal = "NULL" if value is None else repr(value) if not isinstance(value, str) else f"'{value}'"
    return duckdb.sql(f"SELECT {sql} FROM (SELECT {literal} AS x) AS t").fetchone()[0]  # type: ignore[index]


def node(sql: str) -> sqlglot.exp.Expr:
    expression = sqlglot.parse_one(f"SELECT {sql} FROM t", read="duckdb").expressions[0]
    for column in expression.find_all(sqlglot.exp.Column):
        column.set("table", sqlglot.exp.to_identifier("t"))
    return expression


@pytest.mark.parametrize(("sql", "value"), AGREES, ids=[f"{s}|{v!r}" for s, v in AGREES])
def test_agrees_with_duckdb(sql: str, value: Scalar | None) -> None:
    ours, theirs = evaluate(node(sql), SOURCE, value), duckdb_value(sql, value)
    if isinstance(theirs, int | float | Decimal) and not isinstance(theirs, bool):
        assert isinstance(ours, int | float) and not isinstance(ours, bool) and ours == pytest.approx(float(theirs))
    else:
        assert ours == theirs and type(ours) is type(theirs)


@pytest.mark.parametrize(
    ("sql", "value"),
    [("x * y", 2), ("COALESCE(x, y)", None), ("CASE WHEN y > 0 THEN x END", 1), ("x > 0 OR y > 0", -1),
     ("NOT (x IS NULL AND y = 1)", None), ("x IN ('a', y)", "b")],
)  # fmt: skip
def test_other_columns_make_it_depend(sql: str, value: Scalar | None) -> None:
    assert isinstance(evaluate(node(sql), SOURCE, value), Depends)


@pytest.mark.parametrize(
    ("sql", "value"),
    [("x * y", None), ("x > 0 AND y > 0", -1), ("x IS NULL OR y > 0", None), ("CASE WHEN x = 'a' AND y > 0 THEN 1 "
     "ELSE 0 END", "b"), ("COALESCE(y, 1) + x", None)],
)  # fmt: skip
def test_a_known_outcome_does_not_wait_for_other_columns(sql: str, value: Scalar | None) -> None:
    result = evaluate(node(sql), SOURCE, value)
    assert not isinstance(result, Depends)
    assert result == {"x * y": None, "x > 0 AND y > 0": False, "x IS NULL OR y > 0": True}.get(sql, result)


@pytest.mark.parametrize(
    ("sql", "value", "message"),
    [
        ("CAST(x AS INTEGER)", 2.5, "engines differ"),  # rounds half away or to even, by engine
        ("CAST(x AS VARCHAR)", 2.5, "engines differ"),  # '2.5' or '2.50...'
        ("x / 0", 1, "divides by zero"),
        ("ROUND(x, 1)", 2.25, "rounds it"),
        ("UPPER(x)", "straße", "ASCII"),
        ("x > 'b'", "a", "ordering"),
        ("x + 'a'", 1, "not a number"),
        ("LN(x)", 0, "undefined"),
        ("GREATEST(x, 1)", None, "not an expression this reads"),
    ],
)
def test_what_it_cannot_say_exactly_raises(sql: str, value: Scalar | None, message: str) -> None:
    with pytest.raises(NotEvaluable, match=message):
        evaluate(node(sql), SOURCE, value)


def test_integer_division_follows_the_dialect() -> None:
    postgres = sqlglot.parse_one("SELECT t.x / 4 FROM t", read="postgres").expressions[0]
    assert evaluate(postgres, SOURCE, 8) == 2
    with pytest.raises(NotEvaluable, match="integer division"):
        evaluate(postgres, SOURCE, 6)
    assert evaluate(postgres, SOURCE, 6.0) == 1.5
