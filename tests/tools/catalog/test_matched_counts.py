"""A LEFT JOIN's matched share, counted in the warehouse (tools/catalog/matched_counts.py), carries a change that is
not NULL-preserving to that share of the rows; nothing is counted, or the step is left as it was, when the count
cannot prove the share."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pydantic import TypeAdapter

from tools.catalog.branch_counts import BranchCounter, ReadOnlyWarehouse
from tools.catalog.discovery import LineageStep
from tools.catalog.matched_counts import with_matched_counts
from tools.catalog.sql_source import step_expression
from tools.mutations import Mutation
from tools.transforms import derive

MUTATION: TypeAdapter[Mutation] = TypeAdapter(Mutation)
JOIN = "LEFT JOIN dim ON fact.dim_id = dim.id: rows without a match in dim get NULL whatever the change"


def warehouse(tmp_path: Path, tiers: list[str | None]) -> BranchCounter:
    db = tmp_path / "wh.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table dim (id int, tier text)")
        conn.executemany("insert into dim values (?, ?)", list(enumerate(tiers)))
        conn.execute("create table fact (id int, dim_id int)")
        conn.executemany("insert into fact values (?, ?)", [(1, 0), (2, 1), (3, 1), (4, 99)])  # 99: no match
        conn.execute("create view joined as select fact.id, dim.tier from fact left join dim on fact.dim_id = dim.id")
    conn.close()
    return BranchCounter(ReadOnlyWarehouse(f"sqlite:///{db}"))


def paths(expression: str = "dim.tier") -> dict[tuple[str, str], list[LineageStep]]:
    source = LineageStep(dataset_urn="dim", column="tier")
    step = LineageStep(
        dataset_urn="joined", column="tier", transform="SQL", expression=expression,
        expression_input=("dim", "tier"), row_notes=[("matched", JOIN)],
    )  # fmt: skip
    return {("joined", "tier"): [source, step]}


def test_the_matched_share_carries_a_constant_to_that_share_of_the_rows(tmp_path: Path) -> None:
    counted = with_matched_counts(paths(), warehouse(tmp_path, ["gold", "silver"]), lambda urn: urn)
    step = counted[("joined", "tier")][1]
    assert step.matched_share == 0.75 and "3 of the 4 rows of joined" in (step.expression_from or "")
    change = MUTATION.validate_python({"op": "constant", "value": "none", "fraction": 0.5, "seed": 1})
    derived = derive(change, step_expression(step), ("dim", "tier"))
    assert derived.mutation is not None and derived.mutation.fraction == 0.375
    assert "0.750 of them by the warehouse's count" in derived.explanation


def test_without_a_count_a_constant_through_the_matched_side_is_refused_naming_the_setting(tmp_path: Path) -> None:
    step = with_matched_counts(paths(), None, lambda urn: urn)[("joined", "tier")][1]
    change = MUTATION.validate_python({"op": "constant", "value": "none", "fraction": 1.0, "seed": 1})
    derived = derive(change, step_expression(step), ("dim", "tier"))
    assert derived.refused and "PROVENANCE_WAREHOUSE_URL" in derived.explanation


def test_nulls_of_the_joined_side_or_an_expression_that_hides_them_prove_nothing(tmp_path: Path) -> None:
    counter = warehouse(tmp_path, ["gold", None])  # a NULL tier: a NULL in the output is not "unmatched"
    assert with_matched_counts(paths(), counter, lambda urn: urn)[("joined", "tier")][1].matched_share is None
    (tmp_path / "other").mkdir()
    counter = warehouse(tmp_path / "other", ["gold", "silver"])
    hidden = with_matched_counts(paths("COALESCE(dim.tier, 'x')"), counter, lambda urn: urn)
    assert hidden[("joined", "tier")][1].matched_share is None  # never NULL, whatever matched
    ephemeral = with_matched_counts(paths(), counter, lambda urn: None)  # no table to count
    assert ephemeral[("joined", "tier")][1].matched_share is None
