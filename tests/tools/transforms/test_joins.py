"""Joins: which changes reach a joined output exactly (tools/transforms/joins.py, derive.py)."""

from __future__ import annotations

from pydantic import TypeAdapter

from tools.mutations.operators import Mutation
from tools.transforms import column_expressions, derive
from tools.transforms.derive import Derivation
from tools.transforms.expressions import ColumnExpression

MUTATION: TypeAdapter[Mutation] = TypeAdapter(Mutation)
SCHEMA = {
    "db.analytics.orders": ["order_id", "customer_id", "amount"],
    "db.analytics.customers": ["customer_id", "segment", "lifetime_value"],
}
DIM_JOIN = """
with orders as (select * from db.analytics.orders),
customers as (select * from db.analytics.customers),
final as (select o.order_id, o.amount, c.* from orders o left join customers c on o.customer_id = c.customer_id)
select * from final
"""


def mutation(op: str, fraction: float = 1.0, **params: object) -> Mutation:
    return MUTATION.validate_python({"op": op, "fraction": fraction, "seed": 3, **params})


def column(sql: str, name: str, unique: dict[str, list[list[str]]] | None = None) -> ColumnExpression:
    result = column_expressions(sql, dialect="postgres", schema=SCHEMA, unique=unique)
    assert name in result.columns, result.unreadable
    return result.columns[name]


def derived(sql: str, name: str, source: tuple[str, str], change: Mutation, **kw: object) -> Derivation:
    return derive(change, column(sql, name, **kw), source)  # type: ignore[arg-type]


def test_d_star_through_a_cte_chain_resolves_with_the_schema() -> None:
    result = column_expressions(DIM_JOIN, dialect="postgres", schema=SCHEMA)
    assert result.columns["segment"].sql == "db.analytics.customers.segment"
    assert result.columns["amount"].sql == "db.analytics.orders.amount"
    assert "*" not in result.unreadable


def test_every_row_changed_passes_a_left_join_whatever_its_key() -> None:
    out = derived(DIM_JOIN, "amount", ("db.analytics.orders", "amount"), mutation("scale", factor=100.0))
    assert out.identity and out.mutation is not None and out.mutation.fraction == 1.0


def test_a_share_of_rows_needs_the_joined_key_to_be_unique() -> None:
    change = mutation("scale", fraction=0.2, factor=100.0)
    refused = derived(DIM_JOIN, "amount", ("db.analytics.orders", "amount"), change)
    assert (
        refused.refused
        and "customer_id is unique" in refused.explanation
        and "dbt `unique` test" in refused.explanation
    )
    unique = {"db.analytics.customers": [["customer_id"]]}
    carried = derived(DIM_JOIN, "amount", ("db.analytics.orders", "amount"), change, unique=unique)
    assert carried.mutation == change


def test_uniqueness_proven_by_the_sql_itself_a_grouped_cte() -> None:
    sql = """
    with per_customer as (select customer_id, count(*) as n from db.analytics.orders group by customer_id)
    select o.order_id, o.amount, p.n from db.analytics.orders o left join per_customer p using (customer_id)
    """
    change = mutation("null_inject", fraction=0.3)
    assert derived(sql, "amount", ("db.analytics.orders", "amount"), change).mutation == change


def test_the_dimension_side_of_a_left_join_takes_only_null_preserving_changes_on_every_row() -> None:
    source = ("db.analytics.customers", "segment")
    remap = mutation("category_remap", mapping={"smb": "enterprise"})
    assert derived(DIM_JOIN, "segment", source, remap).mutation == remap
    constant = derived(DIM_JOIN, "segment", source, mutation("constant", value="x"))
    assert constant.refused and "get NULL whatever the change" in constant.explanation
    share = derived(DIM_JOIN, "segment", source, mutation("category_remap", fraction=0.5, mapping={"a": "b"}))
    assert share.refused and "reaches every output row that matches it" in share.explanation


def test_a_share_of_a_dimension_keyed_uniquely_reaches_each_output_row_with_its_own_probability() -> None:
    """Each order reads at most one customer: nulling half the customers nulls each order's segment with
    probability 0.5 (the orders of one customer together), so the share is carried, and said so."""
    source, unique = ("db.analytics.customers", "segment"), {"db.analytics.customers": [["customer_id"]]}
    change = mutation("null_inject", fraction=0.5)
    carried = derived(DIM_JOIN, "segment", source, change, unique=unique)
    assert carried.mutation == change and "change together" not in carried.explanation
    assert "at most one row of db.analytics.customers" in carried.explanation and "together" in carried.explanation
    assert {n.kind for n in column(DIM_JOIN, "segment", unique).notes_for(source[0])} == {"matched", "spreads"}
    # Not NULL-preserving: the unmatched orders would be reached by the experiment, not by the change.
    constant = derived(DIM_JOIN, "segment", source, mutation("constant", fraction=0.5, value="x"), unique=unique)
    assert constant.refused and "get NULL whatever the change" in constant.explanation
    # A fact side fanned out by a key not known to be unique stays refused: its rows are repeated, not read once.
    fanned = derived(DIM_JOIN, "amount", ("db.analytics.orders", "amount"), mutation("scale", fraction=0.5,
                                                                                    factor=2.0))  # fmt: skip
    assert fanned.refused and "customer_id is unique" in fanned.explanation


def test_postgres_parenthesised_join_text_reads_like_the_plain_join() -> None:
    view = """ SELECT d.order_id, d.amount, c.segment
   FROM (db.analytics.orders d
     LEFT JOIN db.analytics.customers c ON ((d.customer_id = c.customer_id)));"""
    result = column_expressions(view, dialect="postgres")
    assert result.columns["amount"].sql == "db.analytics.orders.amount"
    assert result.columns["segment"].sql == "db.analytics.customers.segment"
    assert {n.kind for n in result.columns["segment"].notes_for("db.analytics.customers")} == {"matched", "repeats"}


def test_a_join_key_change_alters_the_rows() -> None:
    out = derived(DIM_JOIN, "amount", ("db.analytics.orders", "customer_id"), mutation("shift", offset=1.0))
    assert out.refused and "which rows exist" in out.explanation
