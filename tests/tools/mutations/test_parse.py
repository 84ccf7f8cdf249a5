"""Reading a plan's parameters (tools/mutations/parse.py): a number is a number, never a coerced bool or string."""

from __future__ import annotations

import pytest

from tools.mutations import parse_mutation
from tools.mutations.operators import PlanError


@pytest.mark.parametrize(
    ("op", "params"), [("scale", {"factor": True}), ("shift", {"offset": False}), ("clip", {"lower": False})]
)
def test_a_boolean_is_not_a_number(op: str, params: dict[str, object]) -> None:
    """pydantic's lax mode read True as 1: `factor: true` tested ×1 — no change — and passed."""
    with pytest.raises(PlanError, match="must be a number"):
        parse_mutation(op, params)


def test_a_number_written_as_text_is_that_number() -> None:
    """A chat model's structured output and a CLI `--param` may carry "100": read as 100, and the plan sentence
    says so (tests/agent/test_plan_sentence.py), so what runs is what was read."""
    assert parse_mutation("scale", {"factor": "100"}).factor == 100  # type: ignore[attr-defined]
    with pytest.raises(PlanError, match="factor"):
        parse_mutation("scale", {"factor": "a hundred"})


def test_numbers_and_optional_bounds_still_parse() -> None:
    assert parse_mutation("scale", {"factor": 100}).factor == 100  # type: ignore[attr-defined]
    assert parse_mutation("clip", {"lower": None, "upper": 5}).upper == 5  # type: ignore[attr-defined]
    assert parse_mutation("constant", {"value": True}).value is True  # type: ignore[attr-defined]
