"""Each derivation checked by execution (tools/experiment/verify.py): the column's SQL run in a warehouse unchanged
and with the change substituted; a derivation the rows contradict is caught, whoever made it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pydantic import TypeAdapter

from tools.catalog.branch_counts import ReadOnlyWarehouse
from tools.experiment.verify import NOT_VERIFIED, Verifier
from tools.mutations.operators import Mutation
from tools.transforms import column_expressions, derive

MUTATION: TypeAdapter[Mutation] = TypeAdapter(Mutation)


def _warehouse(tmp_path: Path) -> ReadOnlyWarehouse:
    db = tmp_path / "wh.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table claims (amount integer, insured real, region text)")
        conn.executemany(
            "insert into claims values (?, ?, ?)",
            [(100, 1000.0, "north"), (250, 500.0, "south"), (None, 10.0, None), (7, 70.0, "north")],
        )
    conn.close()
    return ReadOnlyWarehouse(f"sqlite:///{db}")


def _mutation(**fields: object) -> Mutation:
    return MUTATION.validate_python({"fraction": 1.0, "seed": 0, **fields})


def test_a_right_derivation_is_verified_on_the_rows(tmp_path: Path) -> None:
    ratio = column_expressions("select amount / insured as ratio from claims").columns["ratio"]
    change = _mutation(op="scale", factor=100.0)
    derived = derive(change, ratio, ("claims", "amount"))
    check = Verifier(_warehouse(tmp_path)).check(change, ratio, ("claims", "amount"), derived.mutation)
    assert check.agrees and check.said == "verified by execution on 4 rows of claims"


def test_a_deliberately_wrong_derivation_is_caught(tmp_path: Path) -> None:
    ratio = column_expressions("select amount / insured as ratio from claims").columns["ratio"]
    change = _mutation(op="scale", factor=100.0)
    wrong = _mutation(op="scale", factor=10.0)
    check = Verifier(_warehouse(tmp_path)).check(change, ratio, ("claims", "amount"), wrong)
    assert not check.agrees and "the warehouse disagrees" in check.said and "0.1" in check.said


def test_nulls_and_remaps_are_checked_too(tmp_path: Path) -> None:
    verifier = Verifier(_warehouse(tmp_path))
    filled = column_expressions("select coalesce(amount, 0) as filled from claims").columns["filled"]
    nulls = _mutation(op="null_inject")
    said_constant = _mutation(op="constant", value=0)
    assert verifier.check(nulls, filled, ("claims", "amount"), said_constant).agrees
    assert not verifier.check(nulls, filled, ("claims", "amount"), nulls).agrees  # COALESCE fills them
    upper = column_expressions("select upper(region) as r from claims").columns["r"]
    remap = _mutation(op="category_remap", mapping={"north": "n"})
    derived = _mutation(op="category_remap", mapping={"NORTH": "N"})
    assert verifier.check(remap, upper, ("claims", "region"), derived).agrees
    unchanged_claim = verifier.check(remap, upper, ("claims", "region"), None)
    assert not unchanged_claim.agrees


def test_without_a_warehouse_it_says_so(tmp_path: Path) -> None:
    ratio = column_expressions("select amount / insured as ratio from claims").columns["ratio"]
    change = _mutation(op="scale", factor=100.0)
    check = Verifier(None).check(change, ratio, ("claims", "amount"), change)
    assert check.agrees and check.said == NOT_VERIFIED
