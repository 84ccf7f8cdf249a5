"""The head expression as a function of the base one, mapped to an allowlisted operator (or why none fits), and the
column diff of two model versions (changed, dropped, renamed)."""

from __future__ import annotations

import pytest
import sqlglot

from tools.changes.sqlmap import NotMappable, NullShare, diff_models, map_change
from tools.changes.sqlmodel import parse_model


def _map(base: str, head: str, share: NullShare | None = None) -> tuple[str, dict[str, object], str, float] | None:
    mapping = map_change(sqlglot.parse_one(base), sqlglot.parse_one(head), share)
    return None if mapping is None else (mapping.op, dict(mapping.params), mapping.confidence, mapping.fraction)


@pytest.mark.parametrize(
    ("base", "head", "expected"),
    [
        ("amount", "amount * 100", ("scale", {"factor": 100}, "high", 1.0)),
        ("amount", "100 * amount", ("scale", {"factor": 100}, "high", 1.0)),
        ("amount", "amount / 100", ("scale", {"factor": 0.01}, "high", 1.0)),
        ("amount * 100", "amount", ("scale", {"factor": 0.01}, "high", 1.0)),
        ("amount * 100", "amount * 1000", ("scale", {"factor": 10}, "high", 1.0)),
        ("amount", "amount * 2.5", ("scale", {"factor": 2.5}, "high", 1.0)),
        ("amount", "-amount", ("scale", {"factor": -1}, "high", 1.0)),
        ("t.amount", "(t.amount) * 100", ("scale", {"factor": 100}, "high", 1.0)),
        ("amount", "amount + 5", ("shift", {"offset": 5}, "high", 1.0)),
        ("amount", "amount - 0.5", ("shift", {"offset": -0.5}, "high", 1.0)),
        ("amount + 5", "amount + 7", ("shift", {"offset": 2}, "high", 1.0)),
        ("amount", "ROUND(amount, 2)", ("round", {"decimals": 2}, "high", 1.0)),
        ("amount", "ROUND(amount)", ("round", {"decimals": 0}, "high", 1.0)),
        ("ROUND(amount, 4)", "ROUND(amount, 2)", ("round", {"decimals": 2}, "high", 1.0)),
        ("amount", "CAST(amount AS INT)", ("round", {"decimals": 0}, "medium", 1.0)),
        ("amount", "CAST(amount AS BIGINT)", ("round", {"decimals": 0}, "medium", 1.0)),
        ("amount", "amount::smallint", ("round", {"decimals": 0}, "medium", 1.0)),
        ("amount", "CAST(amount AS INTEGER)", ("round", {"decimals": 0}, "medium", 1.0)),
        ("amount", "CAST(amount AS DECIMAL(12, 1))", ("round", {"decimals": 1}, "medium", 1.0)),
        ("amount", "LEAST(amount, 1000)", ("clip", {"upper": 1000}, "high", 1.0)),
        ("amount", "GREATEST(amount, 0)", ("clip", {"lower": 0}, "high", 1.0)),
        ("amount", "LEAST(GREATEST(amount, 0), 1000)", ("clip", {"lower": 0, "upper": 1000}, "high", 1.0)),
        ("LEAST(amount, 1000)", "LEAST(amount, 500)", ("clip", {"upper": 500}, "high", 1.0)),
        ("amount", "COALESCE(amount, 0)", ("constant", {"value": 0}, "medium", 0.05)),
        ("segment", "COALESCE(segment, 'unknown')", ("constant", {"value": "unknown"}, "medium", 0.05)),
        ("COALESCE(amount, 0)", "amount", ("null_inject", {}, "low", 0.05)),
        ("IFNULL(amount, 0)", "amount", ("null_inject", {}, "low", 0.05)),
        (
            "CASE WHEN region = 'US' THEN 'NA' ELSE 'OTHER' END",
            "CASE WHEN region = 'US' THEN 'AMER' ELSE 'OTHER' END",
            ("category_remap", {"mapping": {"NA": "AMER"}}, "high", 1.0),
        ),
        (
            "region",
            "CASE WHEN region = 'US' THEN 'USA' ELSE region END",
            ("category_remap", {"mapping": {"US": "USA"}}, "medium", 1.0),
        ),
        ("amount", "  AMOUNT  ", None),
        ("amount /* dollars */", "amount", None),
    ],
)
def test_expression_changes_map_to_operators(
    base: str, head: str, expected: tuple[str, dict[str, object], str, float] | None
) -> None:
    assert _map(base, head) == expected


def test_a_stated_null_share_is_the_fraction_and_the_note_says_where_it_comes_from() -> None:
    share = NullShare(0.2, "the stated --null-share")
    mapping = map_change(sqlglot.parse_one("COALESCE(x, 0)"), sqlglot.parse_one("x"), share)
    assert mapping is not None and mapping.fraction == 0.2
    assert "the stated --null-share" in mapping.note
    default = map_change(sqlglot.parse_one("COALESCE(x, 0)"), sqlglot.parse_one("x"))
    assert default is not None and "default" in default.note


@pytest.mark.parametrize(
    ("base", "head", "needle"),
    [
        ("amount", "amount * 2 + 1", "both scaled"),
        ("amount", "UPPER(amount)", "no operator fits"),
        ("ROUND(amount, 2)", "amount", "more decimals"),
        ("CAST(amount AS INT)", "amount", "more decimals"),
        ("LEAST(amount, 100)", "LEAST(amount, 500)", "loosened"),
        ("amount", "COALESCE(amount, other)", "non-constant"),
        ("amount", "amount * rate", "no operator fits"),
        ("amount", "CAST(amount AS VARCHAR)", "no operator fits"),
    ],
)
def test_changes_no_operator_fits(base: str, head: str, needle: str) -> None:
    with pytest.raises(NotMappable, match=needle):
        map_change(sqlglot.parse_one(base), sqlglot.parse_one(head))


BASE = """SELECT
  id,
  amount,
  CASE WHEN country = 'US' THEN 'NA' ELSE 'OTHER' END AS region,
  fee,
  legacy,
  old_name,
  score
FROM t"""

HEAD = """SELECT
  id,
  amount * 100 AS amount,
  CASE WHEN country = 'US' THEN 'AMER' ELSE 'OTHER' END AS region,
  fee * 2 + 1 AS fee,
  old_name AS new_name,
  score * 1e9 AS score,
  brand_new
FROM t"""


def test_the_diff_of_two_versions_names_every_changed_column_at_its_head_line() -> None:
    findings = {f.column: f for f in diff_models(parse_model(BASE), parse_model(HEAD))}
    assert set(findings) == {"amount", "region", "fee", "legacy", "old_name", "score"}
    amount = findings["amount"]
    assert (amount.kind, amount.line, amount.mapping and amount.mapping.op) == ("change", 3, "scale")
    assert findings["region"].mapping is not None and findings["region"].mapping.params == {"mapping": {"NA": "AMER"}}
    assert (findings["fee"].kind, findings["fee"].line) == ("unmapped", 5)
    assert "`fee`" in findings["fee"].reason and "`fee * 2 + 1`" in findings["fee"].reason
    assert (findings["legacy"].kind, findings["legacy"].line) == ("dropped", 6)  # its line in the base version
    assert (findings["old_name"].kind, findings["old_name"].renamed_to) == ("renamed", "new_name")
    # scale 1e9 is outside the operator's bounds: tools.mutations refuses it, so a person reviews it
    assert findings["score"].kind == "unmapped" and "outside the operator's bounds" in findings["score"].reason


def test_a_deleted_model_drops_every_column_and_a_new_one_changes_nothing() -> None:
    base = parse_model(BASE)
    assert {f.kind for f in diff_models(base, None)} == {"dropped"}
    assert len(diff_models(base, None)) == len(base.columns)
    assert diff_models(None, parse_model(HEAD)) == []


def test_a_column_missing_next_to_a_star_is_for_review_not_dropped() -> None:
    findings = diff_models(parse_model("SELECT id, amount FROM t"), parse_model("SELECT * FROM t"))
    assert [(f.column, f.kind) for f in findings] == [("id", "unmapped"), ("amount", "unmapped")]
    assert "SELECT *" in findings[0].reason
