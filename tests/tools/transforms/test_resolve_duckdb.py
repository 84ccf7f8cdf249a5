"""Property: over a generated schema, random chains of CTEs with `select *`, `alias.*`, renames, subqueries, USING
and ON joins resolve (column_expressions with the schema) to the base column DuckDB actually returns in each output
column. Every value column of every base table holds its own marker values, so the engine's answer is read off the
output: which (table, column) its values came from."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.transforms import column_expressions

ROWS = 6
TABLES = {
    "raw.orders": ["id", "amount", "status", "region"],
    "raw.customers": ["id", "amount", "tier"],  # `amount` in two tables: only a qualifier or the schema tells them
    "raw.regions": ["id", "label", "status"],
}


def _marker(table: str, column: str, row: int) -> int:
    """Distinct per (table, column, row); `id` is 0..ROWS-1 in every table, so every join on ids matches."""
    if column == "id":
        return row
    return (list(TABLES).index(table) + 1) * 100_000 + TABLES[table].index(column) * 1_000 + row


MARKERS = {_marker(t, c, row): (t, c) for t, cols in TABLES.items() for c in cols if c != "id" for row in range(ROWS)}


def _truth(values: list[object]) -> set[tuple[str, str]]:
    """The base columns the values came from, as the engine computed them."""
    return {MARKERS.get(v, ("not a base value", repr(v))) for v in values}  # type: ignore[call-overload]


@dataclass
class Relation:
    sql_name: str
    columns: list[str]


@st.composite
def queries(draw: st.DrawFn) -> str:
    relations = [Relation(name, list(cols)) for name, cols in TABLES.items()]
    ctes: list[str] = []
    for i in range(draw(st.integers(1, 5))):
        name = f"step_{i}"
        left = draw(st.sampled_from(relations[-2:] + relations))  # lean towards chains
        kinds = ["star", "rename", "join_star", "join_using", "star_using", "subquery", "filter"]
        kind = draw(st.sampled_from(kinds))
        others = [r for r in relations if r is not left and not (set(r.columns) & set(left.columns)) - {"id"}]
        if kind == "star_using" and others and "id" in left.columns:
            right = draw(st.sampled_from(others))
            body = f"select * from {left.sql_name} left join {right.sql_name} using (id)"
            columns = ["id"] + [c for c in left.columns + right.columns if c != "id"]
        elif kind == "star":
            body, columns = f"select * from {left.sql_name}", list(left.columns)
        elif kind == "filter":
            body, columns = f"select * from {left.sql_name} where id >= 0", list(left.columns)
        elif kind == "rename":
            kept = draw(st.lists(st.sampled_from(left.columns), min_size=1, unique=True))
            names = [f"{c}_{i}" if draw(st.booleans()) else c for c in kept]
            body = "select " + ", ".join(f"l.{c} as {n}" for c, n in zip(kept, names, strict=True))
            body += f" from {left.sql_name} as l"
            columns = names
        elif kind == "subquery":
            body, columns = f"select s.* from (select * from {left.sql_name}) as s", list(left.columns)
        else:
            right = draw(st.sampled_from([r for r in relations if r is not left] or relations))
            extra = [c for c in right.columns if c not in left.columns]
            picked = draw(st.lists(st.sampled_from(extra), unique=True)) if extra else []
            if kind == "join_using" and "id" in left.columns and "id" in right.columns:
                tail = "".join(f", r.{c}" for c in picked)
                body = f"select l.*{tail} from {left.sql_name} as l left join {right.sql_name} as r using (id)"
            else:
                tail = "".join(f", r.{c} as {c}" for c in picked)
                body = f"select l.*{tail} from {left.sql_name} as l left join {right.sql_name} as r on l.id = r.id"
            columns = list(left.columns) + picked
        if "id" not in columns:  # keep a join key available downstream
            body = body.replace("select ", f"select {'l.' if ' as l' in body else ''}id, ", 1)
            columns = ["id", *columns]
        ctes.append(f"{name} as ({body})")
        relations.append(Relation(name, columns))
    last = relations[-1]
    final = draw(st.sampled_from(["select * from", "select f.* from"]))
    return f"with {', '.join(ctes)} {final} {last.sql_name} as f"


@pytest.fixture(scope="module")
def engine() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect(config={"threads": 1})
    connection.execute("create schema raw")
    for table, columns in TABLES.items():
        connection.execute(f"create table {table} ({', '.join(f'{c} bigint' for c in columns)})")
        for row in range(ROWS):
            values = ", ".join(str(_marker(table, c, row)) for c in columns)
            connection.execute(f"insert into {table} values ({values})")
    return connection


@given(sql=queries())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_each_output_column_resolves_to_the_base_column_the_engine_reads(
    engine: duckdb.DuckDBPyConnection, sql: str
) -> None:
    cursor = engine.execute(sql)
    names = [d[0] for d in cursor.description]
    rows = cursor.fetchall()
    result = column_expressions(sql, dialect="duckdb", schema=TABLES)
    assert not result.unreadable, (sql, result.unreadable)
    assert list(result.columns) == names, sql
    for index, name in enumerate(names):
        values = [row[index] for row in rows if row[index] is not None]
        upstream = result.columns[name].upstream
        if values and all(v in range(ROWS) for v in values):  # every table's id holds 0..ROWS-1
            assert len(upstream) == 1 and next(iter(upstream))[1] == "id", (sql, name, upstream)
            continue
        assert result.columns[name].sql.count("(") == 0, (sql, name, result.columns[name].sql)  # a bare column
        assert set(upstream) == _truth(values), (sql, name, upstream)


def test_the_property_can_fail(engine: duckdb.DuckDBPyConnection) -> None:
    """The oracle tells the two `amount` columns apart: reading one for the other is caught."""
    sql = "select c.amount from raw.orders o join raw.customers c on o.id = c.id"
    values = [row[0] for row in engine.execute(sql).fetchall()]
    assert _truth(values) == {("raw.customers", "amount")} != {("raw.orders", "amount")}
