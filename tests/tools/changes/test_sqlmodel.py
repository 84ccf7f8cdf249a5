"""One version of a SQL model: its table, its output columns by name with their lines, parse errors with theirs."""

from __future__ import annotations

import pytest

from tools.changes.sqlmodel import MAX_SQL_CHARACTERS, SqlParseError, canonical, parse_model


def test_output_columns_by_name_with_their_first_line() -> None:
    model = parse_model("SELECT\n  id,\n  t.Amount,\n  ROUND(\n    fee, 2) AS fee_rounded,\n  qty * 2\nFROM t")
    assert list(model.columns) == ["id", "amount", "fee_rounded", "qty * 2"]
    assert [c.line for c in model.columns.values()] == [2, 3, 4, 6]
    assert model.columns["amount"].name == "Amount"
    assert canonical(model.columns["fee_rounded"].expression) == "ROUND(fee, 2)"
    assert model.table is None and not model.has_star


@pytest.mark.parametrize(
    ("sql", "table"),
    [
        ("CREATE TABLE analytics.tx AS SELECT a FROM t", "analytics.tx"),
        ("CREATE OR REPLACE VIEW v_tx AS SELECT a FROM t", "v_tx"),
        ("INSERT INTO db.s.tx SELECT a FROM t", "db.s.tx"),
        ("SET search_path = x; CREATE TABLE tx AS SELECT a FROM t", "tx"),
    ],
)
def test_the_table_a_statement_builds(sql: str, table: str) -> None:
    model = parse_model(sql)
    assert model.table == table
    assert list(model.columns) == ["a"]


def test_the_final_select_of_a_cte_and_the_first_branch_of_a_union() -> None:
    model = parse_model("WITH s AS (SELECT x, y FROM t) SELECT x AS a, y AS b FROM s UNION ALL SELECT 1, 2")
    assert list(model.columns) == ["a", "b"]


def test_a_star_is_remembered() -> None:
    model = parse_model("SELECT *, amount * 100 AS cents FROM t")
    assert model.has_star and list(model.columns) == ["cents"]


@pytest.mark.parametrize(
    ("sql", "line", "needle"),
    [
        ("SELECT a,\n  b\nFROM WHERE (", 3, "line 3"),
        ("SELECT 'unterminated FROM t", 1, ""),
        ("DROP TABLE t", 1, "no SELECT"),
    ],
)
def test_unparseable_sql_raises_with_a_line(sql: str, line: int, needle: str) -> None:
    with pytest.raises(SqlParseError) as caught:
        parse_model(sql)
    assert caught.value.line == line
    assert needle in str(caught.value)
    assert "<Token" not in str(caught.value)


def test_a_column_starting_with_a_keyword_is_placed_on_the_keywords_line() -> None:
    sql = (
        "WITH s AS (SELECT a, b FROM t)\nSELECT DISTINCT\n  CASE\n    WHEN a = 'x' THEN 'y' END AS c,\n"
        "  COALESCE(\n    0, b) AS d,\n  CAST(\n    a AS INT) AS e\nFROM s"
    )
    assert [c.line for c in parse_model(sql).columns.values()] == [3, 5, 7]


def test_lines_in_a_later_statement_count_from_the_top_of_the_file() -> None:
    model = parse_model("SET x = 1;\n\nSELECT\n  (\n    a + 1) AS b\nFROM t;\n")
    assert model.columns["b"].line == 4


def test_parsing_is_bounded_by_size_and_depth() -> None:
    with pytest.raises(SqlParseError, match="more than the"):
        parse_model("select 1 as x " + " " * MAX_SQL_CHARACTERS)
    with pytest.raises(SqlParseError, match="nested too deeply"):
        parse_model("select " + "(" * 5000 + "1" + ")" * 5000 + " as x")
