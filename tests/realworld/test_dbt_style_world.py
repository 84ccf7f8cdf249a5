"""Carrying changes through a dbt project written the style guide's way by a separate reader
(tests/realworld/dbt_style_world.py): for each of its 20 data changes, what Provenance derives for every feature
column of the mart is applied to the unchanged mart and compared, row by row, with the mart dbt's compiled SQL gives
after the change. Never wrong: a column is carried exactly, proven unchanged, or INCOMPLETE with the construct that
stops it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.realworld.dbt_style_world import MART_COLUMNS, StyleWorld, changes, mart_frames
from tests.realworld.style_scoring import all_paths, answers, score, summary
from tests.warm_start import cleared

pytestmark = pytest.mark.slow

CARRIED_FLOOR = 12
"""Changes carried exactly (every feature column) as measured when this test was written: the floor, not the aim
(the goal: 90 % of the derivable ones)."""


@pytest.fixture
def warehouse(dbt_style_world: StyleWorld, monkeypatch: pytest.MonkeyPatch) -> StyleWorld:
    for key in [k for k in os.environ if cleared(k, ("DATAHUB_GMS", "PROVENANCE_", "MLFLOW_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("PROVENANCE_WAREHOUSE_URL", dbt_style_world.postgres_url)
    return dbt_style_world


def test_the_mart_is_one_row_per_order_and_a_change_moves_it(dbt_style_world: StyleWorld) -> None:
    change = next(c for c in changes() if c.id == "quantity_in_single_units")
    before, after = mart_frames(dbt_style_world, change)
    assert len(before) == len(after) == 3000 and before.index.is_unique
    assert set(MART_COLUMNS) <= set(before.columns)
    assert (after["units"] == before["units"] * 6).all()


def test_every_change_is_exact_unchanged_or_incomplete_never_wrong(warehouse: StyleWorld, tmp_path: Path) -> None:
    chosen = changes()
    paths = all_paths(warehouse, chosen, tmp_path / "home")
    rows = [row for change in chosen for row in score(warehouse, change, paths[change.id])]
    result = summary(rows)
    print(json.dumps(result, indent=1))
    wrong = [f"{r.change}.{r.column}: {r.detail}" for r in rows if r.verdict == "wrong"]
    assert wrong == []
    assert result["carried_exactly"] >= CARRIED_FLOOR, result
    units = next(r for r in rows if (r.change, r.column) == ("quantity_in_single_units", "units"))
    assert units.verdict == "exact" and units.answer.mutation is not None  # SUM(quantity) through an ephemeral model


def test_a_change_to_one_union_branch_without_a_warehouse_names_the_setting(
    dbt_style_world: StyleWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROVENANCE_WAREHOUSE_URL", raising=False)
    change = next(c for c in changes() if c.id == "us_discount_dropped")
    paths = all_paths(dbt_style_world, [change], tmp_path / "home")
    given = answers(change, paths[change.id], dbt_style_world)
    assert given["has_discount"].kind == "incomplete"
    assert "PROVENANCE_WAREHOUSE_URL" in given["has_discount"].why


def test_a_filter_or_join_key_change_reaches_the_columns_it_decides(
    dbt_style_world: StyleWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No column edge records `where payment_status = 'success'` or a join on customer_id: without a warehouse the
    columns they decide are INCOMPLETE quoting the use, never unreached (that was a silent PASS); with one, the mart
    is re-run with the change applied and what they undergo is computed, quoting where the reading stopped."""
    chosen = [c for c in changes() if c.id in ("payment_status_renamed", "us_orders_unlinked")]
    decided = {"payment_status_renamed": "paid_with_gift_card", "us_orders_unlinked": "loyalty_tier"}
    monkeypatch.delenv("PROVENANCE_WAREHOUSE_URL", raising=False)
    paths = all_paths(dbt_style_world, chosen, tmp_path / "offline")
    for change in chosen:
        given = answers(change, paths[change.id], dbt_style_world)[decided[change.id]]
        assert given.kind == "incomplete" and "filters, joins, groups or orders rows" in given.why
    monkeypatch.setenv("PROVENANCE_WAREHOUSE_URL", dbt_style_world.postgres_url)
    paths = all_paths(dbt_style_world, chosen, tmp_path / "warehouse")
    for change in chosen:
        given = answers(change, paths[change.id], dbt_style_world)[decided[change.id]]
        assert given.kind == "mutation" and "re-run in the warehouse on 3,000 rows" in given.why
        assert "filters, joins, groups or orders rows" in given.why  # where the SQL reading stopped


def test_each_derivation_is_verified_by_execution_in_the_warehouse(warehouse: StyleWorld, tmp_path: Path) -> None:
    from pydantic import TypeAdapter

    from tools.catalog.discovery import AffectedFeature
    from tools.experiment.carry import carry
    from tools.mutations import Mutation

    change = next(c for c in changes() if c.id == "loyalty_silver_into_gold")
    paths = all_paths(warehouse, [change], tmp_path / "home")[change.id]
    path = next(p for (urn, column), p in paths.items() if urn in warehouse.mart_urns and column == "loyalty_tier")
    link = AffectedFeature(
        urn="urn:li:mlFeature:(style,loyalty_tier)", name="loyalty_tier", dataset_urn=path[-1].dataset_urn,
        column="loyalty_tier", path=path, precision="column",
    )  # fmt: skip
    carried = carry(TypeAdapter(Mutation).validate_python(change.mutation()), [link])
    assert carried.refusal is None, carried.refusal
    assert any("verified by execution on" in line for line in carried.explanations), carried.explanations
