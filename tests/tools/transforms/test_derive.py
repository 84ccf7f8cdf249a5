"""derive / compose: the derivation table (cases.py), the contract of a Derivation, and paths of several hops."""

from __future__ import annotations

import math

import pytest

from tests.tools.transforms.cases import CASES, FRACTION, SEED, Case, Refused, Same, Unchanged, m
from tools.mutations import Mutation, parse_mutation
from tools.transforms import NON_IDENTITY, ColumnExpression, column_expressions, compose, derive


def expression(sql: str, dialect: str | None = "duckdb") -> ColumnExpression:
    return column_expressions(f"SELECT {sql} AS out FROM t", dialect=dialect).columns["out"]


def same_mutation(actual: Mutation | None, expected: Mutation) -> bool:
    if actual is None or actual.op != expected.op:
        return False
    a, e = actual.model_dump(), expected.model_dump()
    if a.keys() != e.keys():
        return False
    return all(
        math.isclose(a[k], e[k], rel_tol=1e-12)
        if isinstance(e[k], float)
        else a[k] == e[k] and type(a[k]) is type(e[k])
        for k in e
    )


def test_the_table_covers_every_operator_and_outcome() -> None:
    assert len(CASES) >= 40
    assert {case.mutation.op for case in CASES} == {
        "scale", "shift", "sign_flip", "null_inject", "constant", "category_remap", "unseen_category",
        "round", "clip", "noise", "shuffle", "cyclic_shift",
    }  # fmt: skip
    kinds = {type(case.expected).__name__ for case in CASES}
    assert {"Same", "Unchanged", "Refused"} <= kinds and len(kinds) > 3


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_derivation_table(case: Case) -> None:
    derivation = derive(case.mutation, expression(case.sql), ("t", case.source))
    expected = case.expected
    if isinstance(expected, Refused):
        assert derivation.mutation is None and not derivation.unchanged and derivation.refused
        assert derivation.code == NON_IDENTITY
        assert derivation.explanation.startswith("cannot carry ")
        assert expected.fragment in derivation.explanation, derivation.explanation
        assert "out = " in derivation.explanation
    elif isinstance(expected, Unchanged):
        assert derivation.unchanged and derivation.mutation is None and derivation.code is None, derivation.explanation
    elif isinstance(expected, Same):
        assert derivation.identity and derivation.mutation == case.mutation, derivation.explanation
    else:
        assert same_mutation(derivation.mutation, expected), f"{derivation.mutation!r}: {derivation.explanation}"
        assert not derivation.identity and not derivation.unchanged and derivation.code is None
    if derivation.mutation is not None:  # the same rows change: the original's fraction and seed
        assert (derivation.mutation.fraction, derivation.mutation.seed) == (FRACTION, SEED)


def test_the_explanation_names_the_column_the_change_and_the_expression() -> None:
    sql = "with c as (select amount as claim_amount, insured_value from raw.claims) "
    sql += "select claim_amount / insured_value as amount_ratio, round(claim_amount, -2) as amount_bucket from c"
    columns = column_expressions(sql, dialect="postgres").columns
    scale = m("scale", factor=100)
    ratio = derive(scale, columns["amount_ratio"], ("raw.claims", "insured_value"))
    assert ratio.explanation == "amount_ratio: scale ×0.01 because amount_ratio = amount / insured_value"
    bucket = derive(scale, columns["amount_bucket"], ("raw.claims", "amount"))
    assert bucket.explanation.startswith("cannot carry scale ×100 through amount_bucket = ROUND(amount, -2): ")


def test_lossless_casts_depend_on_the_dialect() -> None:
    for sql in ("x::numeric", "CAST(x AS DOUBLE PRECISION)", "CAST(x AS REAL)", "x::float8"):
        assert derive(m("scale", factor=100), expression(sql, "postgres"), ("t", "x")).identity, sql
    for sql in ("x::int", "x::numeric(10, 2)", "CAST(x AS BIGINT)"):
        assert derive(m("scale", factor=100), expression(sql, "postgres"), ("t", "x")).refused, sql
    assert derive(m("category_remap", mapping={"a": "b"}), expression("s::text", "postgres"), ("t", "s")).identity
    assert derive(m("category_remap", mapping={"a": "b"}), expression("s::varchar(3)", "postgres"), ("t", "s")).refused
    assert derive(m("null_inject"), expression("x::text", "postgres"), ("t", "x")).identity


def test_log_means_what_the_dialect_means() -> None:
    """LOG(x) is base 10 in Postgres and DuckDB, natural in MySQL/Spark/BigQuery (sqlglot reads it as LN there)."""
    base10 = derive(m("scale", factor=100), expression("LOG(x)", "postgres"), ("t", "x"))
    natural = derive(m("scale", factor=100), expression("LOG(x)", "mysql"), ("t", "x"))
    assert same_mutation(base10.mutation, m("shift", offset=2.0))
    assert same_mutation(natural.mutation, m("shift", offset=math.log(100)))


def test_concat_skips_nulls_only_where_the_dialect_does() -> None:
    null = m("null_inject")
    postgres = derive(null, expression("CONCAT(s, '-x')", "postgres"), ("t", "s"))
    snowflake = derive(null, expression("CONCAT(s, '-x')", "snowflake"), ("t", "s"))
    pipes = derive(null, expression("s || '-x'", "postgres"), ("t", "s"))
    assert same_mutation(postgres.mutation, m("constant", value="-x"))
    assert same_mutation(snowflake.mutation, null) and same_mutation(pipes.mutation, null)


def test_a_remap_through_upper_assumes_no_other_spelling() -> None:
    """The rule the brief asks for: exact only if the data holds no other spelling of a key ('A' beside 'a'): the
    explanation says so, and the DuckDB property test draws lower-case data for it."""
    derivation = derive(m("category_remap", mapping={"a": "b"}), expression("UPPER(s)"), ("t", "s"))
    assert same_mutation(derivation.mutation, m("category_remap", mapping={"A": "B"}))
    assert "exact if no other spelling of a key" in derivation.explanation


def test_a_change_to_a_column_that_picks_rows_is_refused() -> None:
    result = column_expressions("select amount * 2 as doubled from raw.claims where amount > 100 and region = 'EU'")
    doubled = result.columns["doubled"]
    refused = derive(m("scale", factor=2), doubled, ("raw.claims", "amount"))
    assert refused.refused and refused.code == NON_IDENTITY and "which rows exist" in refused.explanation
    other = derive(m("constant", value="US"), doubled, ("raw.claims", "region"))  # not read, but picks the rows
    assert other.refused and "picks or matches rows by region" in other.explanation


def test_a_source_the_expression_does_not_read_is_an_error() -> None:
    with pytest.raises(ValueError, match="does not read t.y"):
        derive(m("scale", factor=2), expression("x * 2"), ("t", "y"))


def test_a_literal_of_another_type_is_not_an_identity() -> None:
    # a text constant does not pass through a numeric cast as it is: the cast of text is refused
    derivation = derive(m("constant", value="7"), expression("CAST(x AS DOUBLE)"), ("t", "x"))
    assert derivation.refused and "engines differ on this cast" in derivation.explanation


def test_integer_division_of_a_constant_is_refused_where_the_dialect_divides_integers() -> None:
    postgres = derive(m("constant", value=7), expression("x / 2", "postgres"), ("t", "x"))
    duckdb = derive(m("constant", value=7), expression("x / 2", "duckdb"), ("t", "x"))
    assert postgres.refused and "integer division" in postgres.explanation
    assert same_mutation(duckdb.mutation, m("constant", value=3.5))


def test_compose_carries_the_change_hop_by_hop() -> None:
    staging = column_expressions("select amount * 100 as amount_cents from raw.claims", dialect="postgres")
    mart = column_expressions(
        "select amount_cents / n_items as per_item, ln(amount_cents) as log_amount from stg.claims_cents",
        dialect="postgres",
    )
    hop1 = (staging.columns["amount_cents"], ("raw.claims", "amount"))
    derived = compose(m("scale", factor=2), [hop1, (mart.columns["per_item"], ("stg.claims_cents", "amount_cents"))])
    assert same_mutation(derived.mutation, m("scale", factor=2)) and not derived.identity
    assert derived.explanation == (
        "amount_cents: scale ×2 because amount_cents = amount * 100; "
        "then per_item: scale ×2 because per_item = amount_cents / n_items"
    )
    logged = compose(m("scale", factor=2), [hop1, (mart.columns["log_amount"], ("stg.claims_cents", "amount_cents"))])
    assert same_mutation(logged.mutation, m("shift", offset=math.log(2)))


def test_compose_stops_at_the_first_refusal_and_is_identity_only_if_every_hop_is() -> None:
    rename = column_expressions("select amount as claim_amount from raw.claims").columns["claim_amount"]
    bucket = column_expressions("select round(claim_amount) as b from stg.c").columns["b"]
    ratio = column_expressions("select b / 2 as r from mart.m").columns["r"]
    steps = [(rename, ("raw.claims", "amount")), (bucket, ("stg.c", "claim_amount")), (ratio, ("mart.m", "b"))]
    refused = compose(m("scale", factor=3), steps)
    assert refused.refused and refused.code == NON_IDENTITY and not refused.identity
    assert (
        refused.explanation.count("; then ") == 1 and "cannot carry scale ×3 through b = ROUND" in refused.explanation
    )
    identity = compose(m("scale", factor=3), steps[:1])
    assert identity.identity and identity.mutation == m("scale", factor=3)
    assert compose(m("shuffle"), []).mutation == m("shuffle")


def test_compose_stops_when_a_hop_cannot_change() -> None:
    bucket = column_expressions("select case when s = 'b' then 'B' when s = 'c' then 'B' end as g from t")
    then = column_expressions("select upper(g) as h from u")
    steps = [(bucket.columns["g"], ("t", "s")), (then.columns["h"], ("u", "g"))]
    derived = compose(m("category_remap", mapping={"b": "c"}), steps)
    assert derived.unchanged and derived.mutation is None and "; then " not in derived.explanation


def test_a_change_through_a_window_function_is_refused_and_beside_it_carried() -> None:
    sql = "select lag(x) over (partition by k order by ts) as prev, y * 2 + row_number() over (order by ts) as z from t"
    found = column_expressions(sql, dialect="postgres")
    shifted = parse_mutation("shift", {"offset": 1.0}, fraction=1.0, seed=1)
    refused = derive(shifted, found.columns["prev"], ("t", "x"))
    assert refused.refused and "LAG(x)" in refused.explanation
    beside = derive(shifted, found.columns["z"], ("t", "y"))
    assert beside.mutation is not None and beside.mutation.model_dump()["offset"] == 2.0
    ordered = derive(shifted, found.columns["z"], ("t", "ts"))
    assert ordered.refused and "picks or matches rows" in ordered.explanation
