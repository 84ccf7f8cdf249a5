"""A chat model's plan may only use numbers and values the person said (agent/planning/said.py)."""

from __future__ import annotations

import pytest

from agent.planning.chat_plan import own_words
from agent.planning.deterministic import plan as offline_plan
from agent.planning.said import unsaid
from agent.schemas import ExperimentPlan
from tests.agent.planning.phrasings import AMOUNT, PHRASINGS, Plan
from tests.agent.planning.separate_tables import phrasings
from tools.mutations import PlanError, parse_mutation

CENTS = "What happens if payments.transactions.amount is sent in cents instead of dollars?"


def test_a_number_only_catalog_text_supplied_is_not_the_persons() -> None:
    steered = ExperimentPlan(op="scale", params={"factor": 100}, fraction=1e-5, rationale="SAFE, owners approved")
    assert unsaid(steered, CENTS) == ["fraction 1e-05"]
    mutation = parse_mutation("scale", {"factor": 100}, fraction=1e-5, seed=0)
    with pytest.raises(PlanError, match="fraction 1e-05, which your message does not say"):
        own_words(steered, mutation, CENTS, AMOUNT)
    assert unsaid(ExperimentPlan(op="constant", params={"value": "XX"}), "country set to 'US'") == ["value 'XX'"]


def test_the_rationale_and_assumptions_shown_are_provenances_own() -> None:
    proposal = ExperimentPlan(
        op="scale", params={"factor": 100}, rationale="SAFE, owners approved", assumptions=["ok"], cited=[CENTS]
    )
    mutation = parse_mutation("scale", {"factor": 100}, fraction=1.0, seed=0)
    kept = own_words(proposal, mutation, CENTS, AMOUNT)
    reading = offline_plan(CENTS, AMOUNT)
    assert (kept.rationale, kept.assumptions) == (reading.rationale, reading.assumptions)
    other = own_words(proposal.model_copy(update={"params": {"factor": 0.01}}),
                      parse_mutation("scale", {"factor": 0.01}, fraction=1.0, seed=0), CENTS, AMOUNT)  # fmt: skip
    assert "owners approved" not in other.rationale and other.assumptions == []


def test_a_faithful_model_is_never_refused_on_either_phrasing_table() -> None:
    """The right plan of every phrasing both tables plan (277) uses only what the phrasing says."""
    fresh, _ = phrasings()
    checked = 0
    for phrasing in [*PHRASINGS, *fresh]:
        if isinstance(phrasing.expect, Plan) and phrasing.field is not None:
            expect = phrasing.expect
            right = ExperimentPlan(op=expect.op, params=dict(expect.params), fraction=expect.fraction, seed=expect.seed)
            assert unsaid(right, phrasing.text, offline_plan(phrasing.text, phrasing.field)) == [], phrasing.text
            checked += 1
    assert checked >= 270


def test_the_offline_plan_reads_every_number_and_quoted_value_or_refuses_naming_it() -> None:
    from agent.planning.said import unread
    from tests.agent.planning.phrasings import CATEGORY, COUNTRY

    every_row = ExperimentPlan(op="scale", params={"factor": 2})
    assert unread(every_row, "values doubled on 0.2 of the rows") == ["0.2"]
    assert unread(every_row, "values doubled for txns over $1000") == ["1000"]
    assert unread(every_row, "values doubled") == []
    share = ExperimentPlan(op="null_inject", fraction=0.003)
    assert unread(share, "null on 3 in 1000 rows") == []  # a share as a ratio
    assert unread(ExperimentPlan(op="null_inject"), "'grocery' rows go null") == ["'grocery'"]
    refused = offline_plan("merchant_category 'grocery' rows go null", CATEGORY)
    assert refused.op is None and "did not read 'grocery'" in (refused.refusal or "")
    assert offline_plan("country nulls at a rate of 1e-2", COUNTRY).op is None
