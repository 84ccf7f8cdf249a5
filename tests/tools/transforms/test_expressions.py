"""column_expressions on the SQL catalogs hold (dbt compiled code, views, CTAS, INSERT ... SELECT) and find_upstream."""

from __future__ import annotations

import pytest
from sqlglot import exp

from tools.transforms import ALL_COLUMNS, SqlUnreadable, column_expressions, find_upstream

DBT_STAGING = """
with source as (
    select * from "analytics"."raw"."claims"
),

renamed as (
    select
        id as claim_id,
        "PolicyNo" as policy_number,
        amount as claim_amount,
        cast(insured as double precision) as insured_value,
        region::text as region,
        upper(trim(status)) as status
    from source
)

select * from renamed
"""

DBT_MART = """
with claims as (
    select * from "analytics"."staging"."stg_claims"
), policies as (
    select policy_number, premium from "analytics"."staging"."stg_policies"
), joined as (
    select
        c.claim_id,
        c.claim_amount / c.insured_value as amount_ratio,
        c.claim_amount::numeric / p.premium as loss_ratio,
        case when c.region = 'US' then 'domestic' else 'foreign' end as market
    from claims c
    left join policies as p on c.policy_number = p.policy_number
)
select claim_id, amount_ratio, loss_ratio, market, amount_ratio * 100 as amount_pct from joined
"""


def test_dbt_staging_model_renames_casts_and_quoted_identifiers() -> None:
    result = column_expressions(DBT_STAGING, dialect="postgres")
    columns = result.columns
    assert list(columns) == ["claim_id", "policy_number", "claim_amount", "insured_value", "region", "status"]
    assert result.unreadable == {} and result.target is None
    assert columns["claim_amount"].sql == '"analytics"."raw"."claims".amount'
    assert columns["claim_amount"].upstream == {("analytics.raw.claims", "amount")}
    assert columns["policy_number"].upstream == {("analytics.raw.claims", "PolicyNo")}  # quoted: case kept
    assert columns["insured_value"].sql == 'CAST("analytics"."raw"."claims".insured AS DOUBLE PRECISION)'
    assert isinstance(columns["region"].expression, exp.Cast)
    assert columns["status"].upstream == {("analytics.raw.claims", "status")}
    for column in columns.values():  # every column reference is qualified with the base table
        assert all(c.table == "claims" and c.db == "raw" and c.catalog == "analytics"
                   for c in column.expression.find_all(exp.Column))  # fmt: skip


def test_dbt_mart_model_joins_aliases_and_chained_ctes() -> None:
    columns = column_expressions(DBT_MART, dialect="postgres").columns
    staging = "analytics.staging"
    assert columns["amount_ratio"].upstream == {(f"{staging}.stg_claims", "claim_amount"),
                                                (f"{staging}.stg_claims", "insured_value")}  # fmt: skip
    assert columns["loss_ratio"].upstream == {(f"{staging}.stg_claims", "claim_amount"),
                                              (f"{staging}.stg_policies", "premium")}  # fmt: skip
    assert "CAST(" in columns["loss_ratio"].sql and "DECIMAL" in columns["loss_ratio"].sql
    assert columns["market"].upstream == {(f"{staging}.stg_claims", "region")}
    # a CTE column used in an expression is inlined, in parentheses
    pct = columns["amount_pct"]
    assert isinstance(pct.expression, exp.Mul) and isinstance(pct.expression.this, exp.Paren)
    assert pct.sql.endswith(".insured_value) * 100")


def test_output_names_are_normalised_as_postgres_does() -> None:
    result = column_expressions('select Amount as "Amount", Amount as AMT, Other from t', dialect="postgres")
    assert list(result.columns) == ["Amount", "amt", "other"]
    assert result.columns["amt"].upstream == {("t", "amount")}


def test_create_view_create_table_as_and_insert_select() -> None:
    view = column_expressions("create or replace view mart.v as select a * 2 as b from raw.t", dialect="postgres")
    assert view.target == "mart.v" and view.columns["b"].sql == "raw.t.a * 2"
    listed = column_expressions("create view v (p, q) as select x, y + 1 from t")
    assert list(listed.columns) == ["p", "q"] and listed.columns["q"].upstream == {("t", "y")}
    ctas = column_expressions("create table s.t2 as with c as (select x from t) select x as z from c")
    assert ctas.target == "s.t2" and ctas.columns["z"].upstream == {("t", "x")}
    positional = column_expressions("insert into out_t (a, b) select amount * 2, upper(name) from raw.claims")
    assert positional.columns["a"].sql == "raw.claims.amount * 2" and positional.columns["b"].sql.startswith("UPPER")
    by_alias = column_expressions("insert into out_t select amount * 2 as doubled from raw.claims")
    assert list(by_alias.columns) == ["doubled"] and by_alias.target == "out_t"


def test_select_star_from_a_base_table_needs_a_schema() -> None:
    sql = "with s as (select * from raw.claims) select *, amount * 2 as doubled from s"
    without = column_expressions(sql)
    assert list(without.columns) == ["doubled"]  # a named column still resolves through the star
    assert without.columns["doubled"].upstream == {("raw.claims", "amount")}
    assert "raw.claims" in without.unreadable[ALL_COLUMNS] and "schema" in without.unreadable[ALL_COLUMNS]
    with_schema = column_expressions(sql, schema={"db.raw.claims": ["id", "amount"]})
    assert list(with_schema.columns) == ["id", "amount", "doubled"] and ALL_COLUMNS not in with_schema.unreadable


def test_aggregates_and_windows_resolve_with_their_keys_as_row_columns_set_operations_do_not() -> None:
    grouped = column_expressions("select region, sum(amount) as total from t group by region")
    assert grouped.columns["total"].sql == "SUM(t.amount)" and ("t", "region") in grouped.columns["total"].row_columns
    by_position = column_expressions("select region, sum(amount) as total from t group by 1")
    assert ("t", "region") in by_position.row_columns
    aggregate = column_expressions("create view v as select max(x) as m from t")
    assert aggregate.columns["m"].sql == "MAX(t.x)"
    window = column_expressions("select x, sum(x) over (partition by y) as running from t")
    assert window.columns["running"].upstream == {("t", "x"), ("t", "y")} and ("t", "y") in window.row_columns
    union = column_expressions("select a from t union select b from u")  # UNION ALL: test_unions.py
    assert union.columns == {} and "UNION" in union.unreadable["a"]
    through_cte = column_expressions("with g as (select k, count(*) as n from t group by k) select n * 2 as n2 from g")
    assert through_cte.columns["n2"].sql == "COUNT(*) * 2" and ("t", "k") in through_cte.columns["n2"].row_columns
    distinct = column_expressions("select distinct x from t")
    assert "DISTINCT" in distinct.unreadable["x"]


def test_a_scalar_subquery_only_makes_its_own_column_unreadable() -> None:
    result = column_expressions("select x, x / (select max(y) from u) as share from t")
    assert list(result.columns) == ["x"] and "subquery" in result.unreadable["share"]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("select from where", "cannot parse"),
        ("select 1; select 2", "one SQL statement, found 2"),
        ("insert into t values (1, 2)", "no SELECT"),
        ("drop table t", "not a query"),
        ("insert into t (a, b) select x from u", "2 target columns listed but the SELECT yields 1"),
    ],
)
def test_unreadable_statements_raise(sql: str, message: str) -> None:
    with pytest.raises(SqlUnreadable, match=message):
        column_expressions(sql)


def test_an_unknown_dialect_is_unreadable() -> None:
    with pytest.raises(SqlUnreadable, match="postgress"):
        column_expressions("select 1 as x", dialect="postgress")


def test_find_upstream_matches_datahub_dataset_names_by_suffix() -> None:
    columns = column_expressions(DBT_MART, dialect="postgres").columns
    loss = columns["loss_ratio"]
    staging = "analytics.staging"
    assert find_upstream(loss, "analytics.staging.stg_claims", "CLAIM_AMOUNT") == (f"{staging}.stg_claims",
                                                                                    "claim_amount")  # fmt: skip
    assert find_upstream(loss, "prod.analytics.staging.stg_policies", "premium") == (f"{staging}.stg_policies",
                                                                                      "premium")  # fmt: skip
    assert find_upstream(loss, "staging.stg_policies", "premium") is not None  # the URN's name may be shorter
    assert find_upstream(loss, "analytics.staging.stg_policies", "claim_amount") is None  # wrong table
    assert find_upstream(loss, "other.stg_claims", "claim_amount") is None
    bare = column_expressions("select amount / 2 as half from loan_applications").columns["half"]
    assert find_upstream(bare, "main.loan_applications", "amount") == ("loan_applications", "amount")


def test_find_upstream_refuses_to_choose_between_equal_matches() -> None:
    both = column_expressions("select a.x + b.x as s from one.t a join two.t b on a.id = b.id").columns["s"]
    assert find_upstream(both, "t", "x") is None
    assert find_upstream(both, "db.one.t", "x") == ("one.t", "x")


def test_row_columns_are_the_columns_that_pick_or_match_rows() -> None:
    sql = """
    with recent as (select * from raw.claims where status <> 'void')
    select r.amount, p.premium from recent r join raw.policies p on r.policy_id = p.id
    where p.active and p.id not in (select policy_id from raw.blocked where reason = 'fraud')
    """
    result = column_expressions(sql)
    expected = {("raw.claims", "status"), ("raw.claims", "policy_id"), ("raw.policies", "id"), ("raw.policies",
                "active")}  # fmt: skip
    assert result.columns["amount"].row_columns == expected  # not raw.blocked's reason: the subquery's own
    assert column_expressions("select a from raw.t").columns["a"].row_columns == frozenset()
    limited = column_expressions("select a from raw.t order by b limit 10").columns["a"]
    assert limited.row_columns == {("raw.t", "b")}
    using = column_expressions("select t.a from raw.t join raw.u using (id)").columns["a"]
    assert using.row_columns == {("raw.t", "id"), ("raw.u", "id")}
