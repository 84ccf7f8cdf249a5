"""Readings offered on a refusal (agent/planning/suggest.py): each one runs, as exactly the plan it
names, and they stay close to what was asked."""

from __future__ import annotations

import pytest

from agent.planning.deterministic import plan
from agent.planning.suggest import MAX_SUGGESTIONS, suggestions
from agent.schemas import FieldContext
from tests.agent.planning.phrasings import AMOUNT, CATEGORY, COUNTRY, PHRASINGS, Plan
from tests.agent.planning.test_metamorphic import FAMILIES


@pytest.mark.slow
def test_every_reading_offered_on_a_refused_variant_runs() -> None:
    """Over the metamorphic variants (every tuned phrasing with each family's qualifier): a refusal's readings each
    plan without a refusal, and drop the qualifier the refusal was about."""
    refused = offered = 0
    for phrasing in PHRASINGS:
        if not isinstance(phrasing.expect, Plan) or phrasing.field is None:
            continue
        for tail in FAMILIES.values():
            text = phrasing.text.rstrip("?. ") + tail.format(other="txn_count_1h")
            if plan(text, phrasing.field).op is not None:
                continue
            refused += 1
            readings = suggestions(text, phrasing.field)
            offered += bool(readings)
            assert len(readings) <= MAX_SUGGESTIONS
            for reading in readings:
                assert plan(reading, phrasing.field).op is not None, (text, reading)
    print(f"\nrefused variants: {refused}, with readings offered: {offered}")
    assert refused > 1000 and offered / refused > 0.8


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("null out country on weekends", COUNTRY, ["country set to null"]),
        (
            "amount doubled on between 5 and 10 percent of rows",
            AMOUNT,
            ["amount multiplied by 2 on 10% of rows", "amount multiplied by 2 on 5% of rows", "amount multiplied by 2"],
        ),
        ("vendor feed sends amount 10x, too small", AMOUNT, ["amount multiplied by 10", "amount multiplied by 0.1"]),
        ("amount x100 for new accounts (account_age_days < 30)", AMOUNT, ["amount multiplied by 100"]),
        (
            "'travel' relabelled 'airline' only for mobile users",
            CATEGORY,
            ["'travel' → 'airline' in merchant_category"],
        ),
    ],
)
def test_readings_are_the_change_read_on_the_rows_named(text: str, field: FieldContext, expected: list[str]) -> None:
    assert plan(text, field).op is None
    assert suggestions(text, field) == expected


def test_nothing_is_offered_where_no_change_was_read() -> None:
    assert suggestions("make amount better somehow", AMOUNT) == []
