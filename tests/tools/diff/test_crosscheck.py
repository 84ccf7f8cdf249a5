"""The data's reading of a changed column beside a CHANGES entry's: the same operator, parameters and share agree;
any difference is a disagreement, said."""

from __future__ import annotations

import pandas as pd

from tools.changes.schema import ProposedChange
from tools.diff.crosscheck import read_column

BEFORE = pd.Series([1.0, 2.0, 3.0, 4.0, None])
AFTER = pd.Series([100.0, 200.0, 3.0, 400.0, None])


def entry(**changes: object) -> ProposedChange:
    return ProposedChange.model_validate({"dataset": "u", "field": "amount", "op": "scale", "params": {"factor": 100},
                                         **changes})  # fmt: skip


def test_the_data_alone_names_the_operator_and_its_share() -> None:
    reading = read_column("u", "amount", BEFORE, AFTER, None)
    assert reading is not None and reading.agree is None
    assert reading.line() == "amount: data shows scale(factor=100) on 75.0% of the rows it alters"


def test_a_matching_entry_agrees_and_a_different_one_disagrees() -> None:
    agree = read_column("u", "amount", BEFORE, AFTER, entry(fraction=0.75))
    assert agree is not None and agree.agree and agree.line().endswith("— agree")
    for wrong in (entry(), entry(fraction=0.75, params={"factor": 1000}), entry(fraction=0.75, op="shift",
                                                                             params={"offset": 99})):  # fmt: skip
        reading = read_column("u", "amount", BEFORE, AFTER, wrong)
        assert reading is not None and reading.agree is False and "DISAGREE" in reading.line()


def test_an_unchanged_column_is_silent_unless_an_entry_names_it() -> None:
    assert read_column("u", "amount", BEFORE, BEFORE, None) is None
    reading = read_column("u", "amount", BEFORE, BEFORE, entry())
    assert reading is not None and reading.agree is False and "no change on the paired rows" in reading.data


def test_a_change_no_operator_explains_is_said() -> None:
    reading = read_column("u", "x", pd.Series([1.0, 2.0, 3.0]), pd.Series([5.0, 1.0, 3.0]), None)
    assert reading is not None and reading.data.startswith("no allowlisted operator")
