"""Stripping dbt's Jinja: refs and sources become table names, config and control blocks vanish, lines stay."""

from __future__ import annotations

import pytest

from tools.changes.jinja import PLACEHOLDER_PREFIX, strip_jinja


@pytest.mark.parametrize(
    ("jinja", "sql"),
    [
        ("select * from {{ ref('stg_payments') }}", "select * from stg_payments"),
        ('select * from {{ref("stg_payments")}}', "select * from stg_payments"),
        ("select * from {{ ref('core', 'orders') }}", "select * from orders"),
        ("select * from {{ ref('orders', v=2) }}", "select * from orders"),
        ("select * from {{ source('payments', 'transactions') }}", "select * from payments.transactions"),
        ("select * from {{- source('s','t') -}}", "select * from s.t"),
        ("{{ config(materialized='table') }}select 1", "select 1"),
        ("select 1 {# a comment #}", "select 1 "),
        ("{% set x = 1 %}select 1", "select 1"),
        ("{%- if is_incremental() -%}select 1{%- endif -%}", "select 1"),
    ],
)
def test_dbt_blocks_become_plain_sql(jinja: str, sql: str) -> None:
    assert strip_jinja(jinja).sql == sql


def test_other_expressions_become_distinct_placeholders() -> None:
    stripped = strip_jinja("select amount * {{ var('rate') }} as a, {{ dbt_utils.star('x') }} from t")
    assert stripped.sql == f"select amount * {PLACEHOLDER_PREFIX}1 as a, {PLACEHOLDER_PREFIX}2 from t"


def test_line_numbers_survive_multi_line_blocks() -> None:
    text = "{{\n  config(\n    materialized='table'\n  )\n}}\n{#\nnote\n#}\nselect\n  amount\nfrom {{ ref('x') }}\n"
    stripped = strip_jinja(text)
    assert stripped.sql.count("\n") == text.count("\n")
    assert stripped.sql.splitlines()[9] == "  amount"
    assert stripped.had_jinja


def test_config_alias_names_the_table() -> None:
    assert strip_jinja("{{ config(materialized='view', alias='fct_tx') }} select 1").alias == "fct_tx"
    assert strip_jinja("{{ config(materialized='view') }} select 1").alias is None


def test_plain_sql_is_untouched() -> None:
    stripped = strip_jinja("SELECT a, '{x}' AS b FROM t")
    assert stripped.sql == "SELECT a, '{x}' AS b FROM t"
    assert not stripped.had_jinja
