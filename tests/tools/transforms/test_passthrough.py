"""sqlglot's lineage as a second reader where Provenance's resolver stops (tools/transforms/passthrough.py)."""

from __future__ import annotations

from tools.transforms import column_expressions
from tools.transforms.passthrough import pass_through

SQL = "with s as (select * exclude (b) from raw.t) select a, c + 1 as d from s"
SCHEMA = {"raw.t": ["a", "b", "c"]}


def test_a_column_the_resolver_cannot_follow_is_confirmed_a_pass_through_or_quoted() -> None:
    assert "EXCEPT" in column_expressions(SQL, dialect="duckdb", schema=SCHEMA).unreadable["a"]
    assert pass_through(SQL, "duckdb", SCHEMA, "a", "shop.raw.t", "a") is True
    assert pass_through(SQL, "duckdb", SCHEMA, "d", "shop.raw.t", "c") == "sqlglot's lineage reads d as s.c + 1 AS d"
    wrong_column = pass_through(SQL, "duckdb", SCHEMA, "a", "shop.raw.t", "c")
    assert isinstance(wrong_column, str) and "not shop.raw.t.c" in wrong_column
    other_table = pass_through(SQL, "duckdb", SCHEMA, "a", "shop.raw.u", "a")
    assert isinstance(other_table, str)


def test_sql_neither_reader_can_read_says_nothing() -> None:
    assert pass_through("select nope(", "postgres", SCHEMA, "a", "raw.t", "a") is None
