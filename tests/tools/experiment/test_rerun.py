"""Re-running a dataset's SQL in the warehouse with the change applied (tools/catalog/rerun_plan.py,
tools/experiment/rerun.py), on a real PostgreSQL: the effect a SQL reading cannot carry (a filter on the changed
column) is computed; a wrong derivation is caught; nothing is written."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter
from sqlalchemy import create_engine, text

from tools.catalog.branch_counts import ReadOnlyWarehouse
from tools.catalog.discovery import RerunPlan
from tools.catalog.rerun_plan import Unplannable, plan_rerun
from tools.experiment.rerun import Rerunner, classify
from tools.mutations import Mutation

MUTATION: TypeAdapter[Mutation] = TypeAdapter(Mutation)
DB = "shop"


def urn(name: str) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:postgres,{DB}.{name},PROD)"


STAGING = "select id, order_id, lower(status) as status, amount_cents / 100.0 as amount from raw.payments"
PIVOT = """
with ok as (select * from analytics.stg_payments where status = 'success')
select order_id, sum(case when status = 'success' then amount else 0 end) as paid, sum(amount) as total
from ok group by 1
"""
MART = """
select o.order_id, coalesce(p.paid, 0) > 0 as was_paid, coalesce(p.total, 0) as total, o.region
from raw.orders as o left join analytics.pivoted as p on o.order_id = p.order_id
"""
SQL = {urn("analytics.stg_payments"): STAGING, urn("analytics.pivoted"): PIVOT, urn("analytics.mart"): MART}
COLUMNS = ["id", "order_id", "status", "amount_cents"]


@pytest.fixture
def warehouse(postgres_url: str) -> ReadOnlyWarehouse:
    engine = create_engine(postgres_url)
    with engine.begin() as conn:
        conn.execute(text("create schema raw; create schema analytics"))
        conn.execute(text("create table raw.orders (order_id int primary key, region text)"))
        conn.execute(text("insert into raw.orders select g, case when g % 2 = 0 then 'eu' else 'us' end "
                          "from generate_series(1, 400) g"))  # fmt: skip
        conn.execute(text("create table raw.payments (id int, order_id int, status text, amount_cents int)"))
        conn.execute(text("insert into raw.payments select g, g % 300 + 1, case when g % 10 = 0 then 'FAILED' "
                          "else 'Success' end, 100 + g from generate_series(1, 900) g"))  # fmt: skip
        conn.execute(text(f"create view analytics.stg_payments as {STAGING}"))
        conn.execute(text(f"create view analytics.pivoted as {PIVOT}"))
    engine.dispose()
    return ReadOnlyWarehouse(postgres_url)


def plan(key: list[str] | None = None) -> RerunPlan:
    between = [urn("raw.payments"), urn("analytics.stg_payments"), urn("analytics.pivoted"), urn("analytics.mart")]
    return plan_rerun(
        urn("analytics.mart"), urn("raw.payments"), COLUMNS, between,
        lambda u: (SQL[u], "postgres") if u in SQL else None, ["order_id"] if key is None else key,
    )  # fmt: skip


def change(**fields: object) -> Mutation:
    return MUTATION.validate_python({"fraction": 1.0, "seed": 3, **fields})


def test_the_plan_inlines_every_dataset_between_and_reads_the_changed_table_as_the_cte() -> None:
    built = plan()
    assert built.inlined == [f"{DB}.analytics.stg_payments", f"{DB}.analytics.pivoted"]  # in dependency order
    assert "raw.payments" not in built.sql and "__provenance_changed AS payments" in built.sql
    assert "raw.orders" in built.sql  # off the path: the live table


def test_a_filter_change_no_reading_carries_is_computed_by_re_running(warehouse: ReadOnlyWarehouse) -> None:
    renamed = change(op="category_remap", mapping={"Success": "Succeeded"})
    effect = Rerunner(warehouse).effect(plan(), renamed, "status", "was_paid")
    assert effect.mutation is not None and effect.mutation.op == "constant"
    assert effect.mutation.model_dump()["value"] is False and effect.mutation.fraction == 1.0
    assert "re-run in the warehouse on 400 rows" in effect.said
    region = Rerunner(warehouse).effect(plan(), renamed, "status", "region")
    assert region.unchanged and region.mutation is None


def test_a_share_of_the_rows_is_picked_the_same_way_in_both_runs(warehouse: ReadOnlyWarehouse) -> None:
    scaled = change(op="scale", factor=100.0)
    effect = Rerunner(warehouse).effect(plan(), scaled, "amount_cents", "total")
    assert effect.mutation is not None and effect.mutation.model_dump()["factor"] == pytest.approx(100.0)
    partly = change(op="scale", factor=100.0, fraction=0.4)
    mixed = Rerunner(warehouse).effect(plan(), partly, "amount_cents", "total")  # a SUM of partly changed rows
    assert mixed.refused and "no one operator" in mixed.said


def test_a_wrong_derivation_is_caught_and_a_right_one_confirmed(warehouse: ReadOnlyWarehouse) -> None:
    scaled = change(op="scale", factor=100.0)
    rerunner = Rerunner(warehouse)
    right = rerunner.explains(plan(), scaled, "amount_cents", "total", change(op="scale", factor=100.0))
    assert right.agrees and right.said.startswith("confirmed")
    wrong = rerunner.explains(plan(), scaled, "amount_cents", "total", change(op="scale", factor=10.0))
    assert not wrong.agrees and "changed otherwise" in wrong.said
    unchanged = rerunner.explains(plan(), scaled, "amount_cents", "total", None)
    assert not unchanged.agrees


def test_nothing_is_written(warehouse: ReadOnlyWarehouse) -> None:
    Rerunner(warehouse).effect(plan(), change(op="null_inject"), "amount_cents", "total")
    assert warehouse.rows("select count(*), count(amount_cents) from raw.payments", "postgres") == [(900, 900)]


def test_a_rerun_joins_whole_datasets_without_nested_loops(warehouse: ReadOnlyWarehouse) -> None:
    """The re-run's CTEs have no statistics; PostgreSQL joined them by nested loops, quadratic in the rows (a 3,000-row
    dbt mart took 4.9 s). The read-only transaction turns them off, and only for itself."""
    assert warehouse.rows("select current_setting('enable_nestloop')", "postgres") == [("off",)]
    engine = create_engine(warehouse.url)
    with engine.connect() as conn:  # the server's and other sessions' setting is untouched
        assert conn.execute(text("select current_setting('enable_nestloop')")).scalar() == "on"
    engine.dispose()


def test_without_a_unique_key_or_the_sql_in_between_there_is_no_plan() -> None:
    with pytest.raises(Unplannable, match="dbt `unique` test or a primary key"):
        plan(key=[])
    with pytest.raises(Unplannable, match="no SQL for shop.analytics.pivoted"):
        plan_rerun(urn("analytics.mart"), urn("raw.payments"), COLUMNS,
                   [urn("analytics.pivoted")], lambda u: (MART, "postgres") if u == urn("analytics.mart") else None,
                   ["order_id"])  # fmt: skip


def test_classify_names_the_simplest_operator_or_says_why_none() -> None:
    assert classify([(1, 1), (2, 2)]) is None
    assert classify([(1.0, 100.0), (2.0, 200.0), (None, None)]) == ("scale", {"factor": 100.0}, 1.0)
    assert classify([(1.0, 0.0), (2.0, 0.0), (0.0, 0.0)]) == ("constant", {"value": 0.0}, 1.0)
    assert classify([(1, None), (2, 2), (None, None)]) == ("null_inject", {}, 0.5)
    assert classify([("a", "b"), ("a", "b"), ("c", "c")]) == ("category_remap", {"mapping": {"a": "b"}}, 1.0)
    partial = classify([("a", "b"), ("a", "a"), ("c", "d")])
    assert isinstance(partial, str) and "some of the rows" in partial
    assert isinstance(classify([(1.0, 3.0), (2.0, 2.5)]), str)


def test_a_catalog_sql_that_would_write_is_never_run(warehouse: ReadOnlyWarehouse) -> None:
    hostile = {**SQL, urn("analytics.pivoted"): "with gone as (delete from raw.orders returning *) select * from gone"}
    between = [urn("raw.payments"), urn("analytics.stg_payments"), urn("analytics.pivoted"), urn("analytics.mart")]
    built = plan_rerun(urn("analytics.mart"), urn("raw.payments"), COLUMNS, between,
                       lambda u: (hostile[u], "postgres") if u in hostile else None, ["order_id"])  # fmt: skip
    effect = Rerunner(warehouse).effect(built, change(op="null_inject"), "amount_cents", "total")
    assert effect.refused and not effect.ran and "not a single SELECT" in effect.said
    assert warehouse.rows("select count(*) from raw.orders", "postgres") == [(400,)]
