"""dbt models as they are written (tools/changes/flatten.py): import CTEs ending `select * from renamed`, marts built
as chains of CTEs ending `select * from final`, joins, unions. A change inside a CTE reaches the output column it
feeds; a change no column expresses (a filter, a join, a union branch, a column hidden behind a `*` no CTE lists) is
an entry to review by hand — never "no existing column changed"."""

from __future__ import annotations

import pytest

from tools.changes.gitdiff import ChangedFile
from tools.changes.infer import ModelChanges, analyse_file

MART = """
with orders as (
    select * from {{ ref('stg_orders') }}
),

customers as (
    select * from {{ ref('stg_customers') }}
),

joined as (
    select
        orders.order_id,
        orders.customer_id,
        orders.amount,
        customers.region
    from orders
    left join customers on orders.customer_id = customers.customer_id
),

final as (
    select
        *,
        amount / 2 as half_amount
    from joined
)

select * from final
"""


def analysed(base: str, head: str) -> ModelChanges:
    return analyse_file(ChangedFile("modified", "models/marts/orders.sql", "models/marts/orders.sql", base, head))


def by_column(model: ModelChanges) -> dict[str, tuple[str, str | None, dict[str, object] | None]]:
    return {
        f.column: (f.kind, f.mapping.op if f.mapping else None, dict(f.mapping.params) if f.mapping else None)
        for f in model.findings
    }


def test_a_scale_inside_a_cte_reaches_every_output_column_it_feeds() -> None:
    head = MART.replace("        orders.amount,", "        orders.amount * 100 as amount,")
    model = analysed(MART, head)
    assert model.error is None, model.error
    found = by_column(model)
    assert found["amount"] == ("change", "scale", {"factor": 100}), found
    assert found["half_amount"][1] == "scale" and found["half_amount"][2] == {"factor": 100}, found
    assert set(found) == {"amount", "half_amount"}  # order_id, customer_id, region: unchanged
    assert {f.line for f in model.findings} == {head.splitlines().index("        orders.amount * 100 as amount,") + 1}


def test_a_change_in_the_final_cte_behind_select_star() -> None:
    head = MART.replace("amount / 2 as half_amount", "amount / 200 as half_amount")
    found = by_column(analysed(MART, head))
    assert found == {"half_amount": ("change", "scale", {"factor": 0.01})}, found


@pytest.mark.parametrize(
    ("edit", "what"),
    [
        (("    from orders\n", "    from orders\n    where orders.amount > 0\n"), "a new filter"),
        (("on orders.customer_id = customers.customer_id", "on orders.order_id = customers.customer_id"), "a join"),
        (("select * from {{ ref('stg_orders') }}", "select * from {{ ref('stg_orders_v2') }}"), "a source"),
    ],
)
def test_what_no_output_column_expresses_is_reviewed_by_hand(edit: tuple[str, str], what: str) -> None:
    model = analysed(MART, MART.replace(*edit))
    assert model.error is not None and "outside the output columns" in model.error, (what, model)
    assert model.changed


def test_a_change_hidden_behind_a_star_no_cte_lists_is_never_quiet() -> None:
    base = "with renamed as (\n    select id, amount from {{ source('shop', 'orders') }}\n)\nselect * from renamed\n"
    staged = "with source as (select * from {{ source('shop', 'orders') }}),\nrenamed as (select * from source)\n"
    base, head = (
        staged + "select * from renamed\n",
        staged.replace("select * from source", "select *, 1 as x from source") + "select * from renamed\n",
    )
    model = analysed(base, head)
    assert model.changed and model.error is not None, model


def test_a_union_branch_change_is_reviewed_by_hand() -> None:
    base = "select id, amount from eu.orders\nunion all\nselect id, amount from us.orders\n"
    head = base.replace("select id, amount from us.orders", "select id, amount * 100 as amount from us.orders")
    model = analysed(base, head)
    assert model.error is not None and "union branch" in model.error


@pytest.mark.parametrize(
    "edit",
    [
        ("    select\n        *,", "    select\n        -- every column of joined\n        *,"),
        ("left join customers on", "LEFT JOIN customers ON"),
        ("        customers.region\n", "        customers.region,\n        customers.segment\n"),  # a new column
    ],
)
def test_edits_that_change_no_existing_column_stay_quiet(edit: tuple[str, str]) -> None:
    model = analysed(MART, MART.replace(*edit))
    assert not model.changed, model
