"""A changed CASE mapping as category_remap: whole categories renamed, splits refused with the reason."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from tools.changes.casemap import CaseNotMappable, case_remap


def _case(sql: str) -> exp.Case:
    case = sqlglot.parse_one(sql)
    assert isinstance(case, exp.Case)
    return case


@pytest.mark.parametrize(
    ("base", "head", "mapping"),
    [
        (
            "CASE WHEN region = 'US' THEN 'NA' WHEN region = 'UK' THEN 'EU' ELSE 'OTHER' END",
            "CASE WHEN region = 'US' THEN 'AMER' WHEN region = 'UK' THEN 'EU' ELSE 'OTHER' END",
            {"NA": "AMER"},
        ),
        (
            "CASE region WHEN 'US' THEN 'NA' WHEN 'CA' THEN 'NA' ELSE 'ROW' END",
            "CASE region WHEN 'US' THEN 'AMER' WHEN 'CA' THEN 'AMER' ELSE 'REST' END",
            {"NA": "AMER", "ROW": "REST"},
        ),
        (
            "CASE WHEN region IN ('UK', 'FR') THEN 'EU' ELSE 'X' END",
            "CASE WHEN 'UK' = region OR region = 'FR' THEN 'EUROPE' ELSE 'X' END",
            {"EU": "EUROPE"},
        ),
        (  # two categories merged into one: still whole categories
            "CASE WHEN r = 'a' THEN 'A' WHEN r = 'b' THEN 'B' ELSE 'Z' END",
            "CASE WHEN r IN ('a', 'b') THEN 'AB' ELSE 'Z' END",
            {"A": "AB", "B": "AB"},
        ),
        (  # reordered branches: every row keeps its value
            "CASE WHEN r = 'a' THEN 'A' WHEN r = 'b' THEN 'B' END",
            "CASE WHEN r = 'b' THEN 'B' WHEN r = 'a' THEN 'A' END",
            {},
        ),
    ],
)
def test_whole_categories_renamed(base: str, head: str, mapping: dict[str, str]) -> None:
    assert case_remap(_case(base), _case(head)) == mapping


@pytest.mark.parametrize(
    ("base", "head", "needle"),
    [
        (  # 'CA' rows leave OTHER for NA while the rest of OTHER stays
            "CASE WHEN region = 'US' THEN 'NA' ELSE 'OTHER' END",
            "CASE WHEN region IN ('US', 'CA') THEN 'NA' ELSE 'OTHER' END",
            "split",
        ),
        (
            "CASE WHEN region = 'US' THEN 'NA' END",
            "CASE WHEN country = 'US' THEN 'AMER' END",
            "now tests",
        ),
        (
            "CASE WHEN amount > 100 THEN 'big' ELSE 'small' END",
            "CASE WHEN amount > 200 THEN 'big' ELSE 'small' END",
            "is not `column = 'value'`",
        ),
        ("CASE WHEN r = 'a' THEN 1 ELSE 0 END", "CASE WHEN r = 'a' THEN 2 ELSE 0 END", "not a string constant"),
        ("CASE WHEN r = 'a' THEN 'A' END", "CASE WHEN r = 'a' THEN 'B' WHEN r = 'b' THEN 'A' END", "split"),
        ("CASE WHEN r = 'a' THEN 'A' ELSE 'Z' END", "CASE WHEN r = 'a' THEN 'A' END", "NULL"),
    ],
)
def test_changes_a_remap_cannot_express(base: str, head: str, needle: str) -> None:
    with pytest.raises(CaseNotMappable, match=needle):
        case_remap(_case(base), _case(head))


@pytest.mark.parametrize(
    ("base", "head", "mapping"),
    [
        ("region", "CASE WHEN region = 'US' THEN 'USA' ELSE region END", {"US": "USA"}),
        ("CASE region WHEN 'US' THEN 'USA' ELSE region END", "region", {"USA": "US"}),
        (
            "CASE WHEN region = 'US' THEN 'USA' ELSE region END",
            "CASE WHEN region IN ('US', 'CA') THEN 'NA' ELSE region END",
            {"USA": "NA", "CA": "NA"},
        ),
    ],
)
def test_else_the_column_itself_keeps_the_other_values(base: str, head: str, mapping: dict[str, str]) -> None:
    assert case_remap(sqlglot.parse_one(base), sqlglot.parse_one(head)) == mapping


def test_values_kept_before_cannot_all_become_one_constant() -> None:
    with pytest.raises(CaseNotMappable, match="values no WHEN lists"):
        case_remap(sqlglot.parse_one("region"), sqlglot.parse_one("CASE WHEN region = 'US' THEN 'US' ELSE 'X' END"))
