"""The resolver behind column_expressions: which FROM source a column comes from, and what is not followed."""

from __future__ import annotations

from tools.transforms import ALL_COLUMNS, column_expressions


def upstream(sql: str, column: str, **kwargs: object) -> set[tuple[str, str]]:
    return set(column_expressions(sql, **kwargs).columns[column].upstream)  # type: ignore[arg-type]


def test_an_unqualified_column_over_a_join_needs_a_schema_or_a_qualifier() -> None:
    sql = "select amount, p.premium from raw.claims c join raw.policies p on c.pid = p.id"
    result = column_expressions(sql)
    assert "ambiguous" in result.unreadable["amount"] and result.columns["premium"].upstream == {("raw.policies",
                                                                                               "premium")}  # fmt: skip
    schema = {"raw.claims": ["pid", "amount"], "raw.policies": ["id", "premium"]}
    assert upstream(sql, "amount", schema=schema) == {("raw.claims", "amount")}


def test_a_column_found_in_one_cte_wins_over_a_table_of_unknown_columns() -> None:
    sql = "with k as (select 1 as bonus) select bonus * amount as b from raw.claims, k"
    assert upstream(sql, "b") == {("raw.claims", "amount")}  # k has no amount: raw.claims is the only candidate
    sql = "select bonus * amount as b from raw.claims, raw.rates"
    assert column_expressions(sql).unreadable["b"].endswith("(qualify it or pass a schema)")
    sql = "with k as (select id, 2 as bonus from raw.rates) select k.bonus * c.amount as b from raw.claims c join k"
    assert upstream(sql, "b") == {("raw.claims", "amount")}  # the literal 2 reads no column


def test_join_using_resolves_the_merged_column_to_the_left_side() -> None:
    result = column_expressions("select id, t.a from raw.t left join raw.u using (id)")
    assert result.columns["id"].upstream == {("raw.t", "id")}
    full = column_expressions("select id from raw.t full join raw.u using (id)")
    assert "FULL JOIN USING" in full.unreadable["id"]
    schema = {"raw.t": ["a", "id"], "raw.u": ["id", "b"]}
    star = column_expressions("select * from raw.t join raw.u using (id)", schema=schema)
    assert list(star.columns) == ["id", "a", "b"] and star.columns["id"].upstream == {("raw.t", "id")}
    qualified = column_expressions("select u.* from raw.t join raw.u using (id)", schema=schema)
    assert list(qualified.columns) == ["id", "b"] and qualified.columns["id"].upstream == {("raw.u", "id")}
    full = column_expressions("select * from raw.t full join raw.u using (id)", schema=schema)
    assert "FULL JOIN USING" in full.unreadable["id"] and list(full.columns) == ["a", "b"]


def test_lateral_natural_and_unnest_sources_are_not_followed() -> None:
    lateral = column_expressions("select t.a, l.b from raw.t, lateral (select t.a + 1 as b) l")
    assert lateral.columns["a"].upstream == {("raw.t", "a")} and "lateral join" in lateral.unreadable["b"]
    natural = column_expressions("select u.b from raw.t natural join raw.u")
    assert "NATURAL JOIN" in natural.unreadable["b"]
    unnest = column_expressions("select v from unnest(array[1, 2]) as v", dialect="postgres")
    assert "v" in unnest.unreadable


def test_subquery_and_cte_column_alias_lists_rename_by_position() -> None:
    assert upstream("select z * 2 as w from (select x + 1 as y from raw.t) s(z)", "w") == {("raw.t", "x")}
    result = column_expressions("with c(p, q) as (select a, b from raw.t) select * from c")
    assert list(result.columns) == ["p", "q"] and result.columns["q"].upstream == {("raw.t", "b")}


def test_qualified_star_multi_part_qualifiers_and_inner_cte_shadowing() -> None:
    result = column_expressions("select c.*, p.x from (select a, b from raw.t) c join raw.p p on c.a = p.id")
    assert list(result.columns) == ["a", "b", "x"] and result.columns["x"].upstream == {("raw.p", "x")}
    assert upstream("select raw.t.a as a from raw.t", "a") == {("raw.t", "a")}
    shadowed = "with c as (select a from raw.one) select * from (with c as (select a from raw.two) select a from c) s"
    assert upstream(shadowed, "a") == {("raw.two", "a")}


def test_recursive_ctes_and_star_except_are_unreadable() -> None:
    recursive = column_expressions("with recursive r as (select a from raw.t) select a from r")
    assert "recursive CTE" in recursive.unreadable["a"]
    except_ = column_expressions("select * exclude (b) from raw.t", dialect="duckdb", schema={"raw.t": ["a", "b"]})
    assert except_.columns == {} and "EXCEPT" in except_.unreadable[ALL_COLUMNS]


def test_schema_names_match_case_insensitively_and_by_suffix() -> None:
    result = column_expressions('select * from "DB"."Raw"."claims"', schema={"raw.CLAIMS": ["Amount"]})
    assert result.columns["amount"].upstream == {("DB.Raw.claims", "Amount")}
    unknown = column_expressions("select missing from raw.claims", schema={"raw.claims": ["amount"]})
    assert "no column missing" in unknown.unreadable["missing"]


def test_a_column_the_query_does_not_have_is_unreadable() -> None:
    result = column_expressions("with c as (select a from raw.t) select c.b from c")
    assert "no column b" in result.unreadable["b"]
    result = column_expressions("select z.a from raw.t")
    assert "no table z" in result.unreadable["a"]
