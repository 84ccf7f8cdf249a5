"""The planned experiment in one plain sentence: every allowlisted operator reads as what it does to the column,
with the share of rows, the seed, the rationale and the assumptions."""

from __future__ import annotations

from typing import Any

import pytest

from agent.plan_sentence import change_tested, checked_plan, dataset_name, planned_experiment
from agent.schemas import ExperimentPlan
from tools.mutations import parse_mutation
from tools.mutations.operators import REGISTRY

TARGET = "payments.public.transactions.amount"

CASES: dict[str, tuple[dict[str, Any], str]] = {
    "scale": ({"factor": 100}, f"scale {TARGET} ×100"),
    "shift": ({"offset": -3.5}, f"shift {TARGET} -3.5"),
    "cyclic_shift": ({"offset": 3, "period": 24}, f"cyclically shift {TARGET} +3 mod 24"),
    "round": ({"decimals": 2}, f"round {TARGET} to 2 decimals"),
    "clip": ({"lower": 0, "upper": 1000}, f"clip {TARGET} to [0, 1000]"),
    "noise": ({"relative_std": 0.05}, f"add Gaussian noise ±5% (relative std) to {TARGET}"),
    "null_inject": ({}, f"set {TARGET} to null"),
    "category_remap": ({"mapping": {"card": "CARD"}}, f"remap categories of {TARGET} 'card' → 'CARD'"),
    "unseen_category": ({"value": "crypto"}, f"replace {TARGET} with the unseen category 'crypto'"),
    "sign_flip": ({}, f"flip the sign of {TARGET}"),
    "shuffle": ({}, f"shuffle {TARGET} across rows"),
    "constant": ({"value": 0}, f"set {TARGET} to the constant 0"),
}


def test_every_allowlisted_operator_has_a_case() -> None:
    assert sorted(CASES) == sorted(REGISTRY)


@pytest.mark.parametrize("op", sorted(CASES))
def test_each_operator_reads_as_what_it_does(op: str) -> None:
    params, action = CASES[op]
    plan = ExperimentPlan(op=op, params=params, fraction=0.25, seed=7)
    assert change_tested(plan, TARGET) == f"{action} on 25% of rows (seed 7)."
    # The same sentence from the validated mutation (what runs), whatever the planner's spelling of the values.
    mutation = parse_mutation(op, params, fraction=0.25, seed=7)
    assert change_tested(checked_plan(plan, mutation), TARGET) == f"{action} on 25% of rows (seed 7)."


def test_the_example_sentence_with_rationale_and_assumptions() -> None:
    plan = ExperimentPlan(
        op="scale",
        params={"factor": 100},
        rationale="dollars → cents multiplies every amount by 100.",
        assumptions=["no share given: 100% of rows"],
    )
    assert planned_experiment(plan, TARGET) == (
        "Planned experiment: scale payments.public.transactions.amount ×100 on 100% of rows (seed 0) — "
        "dollars → cents multiplies every amount by 100. Assumed: no share given: 100% of rows."
    )


def test_several_assumptions_one_sentence_and_no_rationale() -> None:
    plan = ExperimentPlan(
        op="null_inject", fraction=0.001, assumptions=["rows picked at random with seed 0.", " nulls, not zeros "]
    )
    assert change_tested(plan, TARGET) == (
        f"set {TARGET} to null on 0.1% of rows (seed 0). Assumed: rows picked at random with seed 0; nulls, not zeros."
    )


def test_readable_parameters() -> None:
    clip_low = ExperimentPlan(op="clip", params={"lower": 0})
    assert change_tested(clip_low, TARGET).startswith(f"clip {TARGET} to [0, +∞] on")
    clip_high = ExperimentPlan(op="clip", params={"upper": 1e6})
    assert change_tested(clip_high, TARGET).startswith(f"clip {TARGET} to [−∞, 1e+06] on")
    one = ExperimentPlan(op="round", params={"decimals": 1})
    assert change_tested(one, TARGET).startswith(f"round {TARGET} to 1 decimal on")
    remap = ExperimentPlan(op="category_remap", params={"mapping": {f"c{i}": f"C{i}" for i in range(5)}})
    assert change_tested(remap, TARGET).startswith(
        f"remap categories of {TARGET} 'c0' → 'C0', 'c1' → 'C1', 'c2' → 'C2', +2 more on"
    )
    text = ExperimentPlan(op="constant", params={"value": "n/a"})
    assert change_tested(text, TARGET).startswith(f"set {TARGET} to the constant 'n/a' on")
    flag = ExperimentPlan(op="constant", params={"value": True})
    assert change_tested(flag, TARGET).startswith(f"set {TARGET} to the constant True on")
    shift = ExperimentPlan(op="shift", params={"offset": 3600})
    assert change_tested(shift, TARGET).startswith(f"shift {TARGET} +3600 on")


def test_the_validated_values_are_what_the_sentence_says() -> None:
    proposed = ExperimentPlan(op=" Scale ", params={"factor": "100"}, fraction=0.5, rationale="cents")
    mutation = parse_mutation(proposed.op or "", proposed.params, fraction=proposed.fraction, seed=proposed.seed)
    checked = checked_plan(proposed, mutation)
    assert (checked.op, checked.params, checked.rationale) == ("scale", {"factor": 100.0}, "cents")
    assert change_tested(checked, TARGET) == f"scale {TARGET} ×100 on 50% of rows (seed 0) — cents."
    assert checked_plan(None, None) == ExperimentPlan()


def test_unknown_operator_and_refusal_still_read() -> None:
    assert change_tested(ExperimentPlan(op="warp", params={"k": 2}), TARGET) == (
        f"warp {TARGET} (k=2) on 100% of rows (seed 0)."
    )
    refused = ExperimentPlan(op=None, refusal="a unit change of a text column cannot be modelled.")
    assert change_tested(refused, TARGET) == (
        f"no experiment on {TARGET}: a unit change of a text column cannot be modelled."
    )


def test_dataset_name() -> None:
    urn = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"
    assert dataset_name(urn) == "payments.public.transactions"
    assert dataset_name("payments.transactions") == "payments.transactions"
