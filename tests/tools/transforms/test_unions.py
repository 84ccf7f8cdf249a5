"""UNION ALL: a change reaches the rows of the branches that read the column, with their share of the rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pydantic import TypeAdapter

from tools.catalog.branch_counts import BranchCounter, ReadOnlyWarehouse
from tools.mutations.operators import Mutation
from tools.transforms import column_expressions, derive
from tools.transforms.unions import counting_sql, with_counts

MUTATION: TypeAdapter[Mutation] = TypeAdapter(Mutation)
SCHEMA = {"raw.orders_eu": ["id", "amount", "currency"], "raw.orders_us": ["id", "amount", "currency"]}
STAGING = """
with eu as (select * from raw.orders_eu), us as (select * from raw.orders_us),
unioned as (
    select 'eu' as region, id, amount, currency from eu
    union all
    select 'us' as region, id, amount, currency from us
)
select id, region, amount / 100.0 as amount_usd, upper(currency) as currency from unioned
"""


def scale(fraction: float = 1.0) -> Mutation:
    return MUTATION.validate_python({"op": "scale", "factor": 100.0, "fraction": fraction, "seed": 1})


def test_without_counts_a_branch_change_is_refused_naming_the_fix() -> None:
    amount = column_expressions(STAGING, schema=SCHEMA).columns["amount_usd"]
    out = derive(scale(), amount, ("raw.orders_us", "amount"))
    assert out.refused and "1 of its 2 branches" in out.explanation and "PROVENANCE_WAREHOUSE_URL" in out.explanation


def test_with_counts_the_change_reaches_the_branch_share_of_rows() -> None:
    amount = column_expressions(STAGING, schema=SCHEMA).columns["amount_usd"]
    statements = counting_sql(amount.expression)
    assert len(statements) == 2 and all(s.startswith("WITH eu AS") for s in statements)
    counted = with_counts(amount.expression, {statements[0]: 1800.0, statements[1]: 1200.0})
    expression = type(amount).of(amount.output, counted)
    out = derive(scale(0.5), expression, ("raw.orders_us", "amount"))
    assert out.mutation is not None and out.mutation.op == "scale"
    assert out.mutation.model_dump()["factor"] == 100.0 and out.mutation.fraction == 0.2  # 0.5 of 40 %
    currency = column_expressions(STAGING, schema=SCHEMA).columns["currency"]
    remap = MUTATION.validate_python({"op": "category_remap", "mapping": {"eur": "EUR"}, "fraction": 1.0, "seed": 1})
    counted = type(currency).of(currency.output, with_counts(currency.expression, {statements[0]: 1800.0}))
    refused = derive(remap, counted, ("raw.orders_eu", "currency"))
    assert refused.refused and "share of the rows is unknown" in refused.explanation  # the other count is missing


def test_union_distinct_stays_unreadable() -> None:
    sql = "select id from raw.orders_eu union select id from raw.orders_us"
    assert "UNION" in column_expressions(sql).unreadable["id"]


def test_the_counter_runs_only_a_single_select_and_counts_each_branch(tmp_path: Path) -> None:
    db = tmp_path / "wh.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table t (x int)")
        conn.executemany("insert into t values (?)", [(i,) for i in range(7)])
    conn.close()
    counter = BranchCounter(ReadOnlyWarehouse(f"sqlite:///{db}"))
    good = "SELECT count(*) FROM (SELECT x FROM t WHERE x > 2) AS branch"
    assert counter.counts([good, "DELETE FROM t"], None) == {good: 4.0}
    assert counter.problems == ["a statement is not a single SELECT; not run"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from t").fetchone() == (7,)
    conn.close()
