"""Reading a plan's parameters (tools/mutations/parse.py): a number is a number, never a coerced bool or string."""

from __future__ import annotations

import pytest

from tools.mutations import parse_mutation
from tools.mutations.operators import PlanError


@pytest.mark.parametrize(
    ("op", "params"),
    [("scale", {"factor": True}), ("scale", {"factor": "1e2"}), ("shift", {"offset": "5"}), ("clip", {"lower": False})],
)
def test_a_number_must_be_written_as_one(op: str, params: dict[str, object]) -> None:
    """pydantic's lax mode read True as 1 (a PASS for "×true") and "1e2" as 100: both are refused, saying why."""
    with pytest.raises(PlanError, match="must be a number"):
        parse_mutation(op, params)


def test_numbers_and_optional_bounds_still_parse() -> None:
    assert parse_mutation("scale", {"factor": 100}).factor == 100  # type: ignore[attr-defined]
    assert parse_mutation("clip", {"lower": None, "upper": 5}).upper == 5  # type: ignore[attr-defined]
    assert parse_mutation("constant", {"value": True}).value is True  # type: ignore[attr-defined]
