"""A chat model's plan cites the words it was read from; a meaningful word it leaves uncited means asking (the
reading ledger's chat-model half). The cases are the shapes of the confident-wrong plans the offline planner once
made, each as a faithful model would cite the right plan, and as a careless one would drop the words that change it."""

from __future__ import annotations

import pytest

from agent.planning.chat_plan import own_words
from agent.planning.ledger import meaningful, unaccounted
from agent.schemas import ExperimentPlan
from tests.agent.planning.phrasings import AMOUNT, COUNT, COUNTRY, HOUR
from tools.mutations import PlanError, parse_mutation

# (question, field, citations of the right plan, words a careless reading drops)
CASES = [
    ("amount shows up 10x too small after the migration", AMOUNT, ["10x"], "too small"),
    ("country goes null on 0.2 of the rows", COUNTRY, ["goes null"], "0.2 of the rows"),
    ("amount is sent in cents for events sent by the mobile app", AMOUNT, ["sent in cents"], "mobile app"),
    ("amount in cents while txn_count_1h halves", AMOUNT, ["in cents"], "txn_count_1h"),
    ("null out country on weekends", COUNTRY, ["null out"], "on weekends"),
    ("amount doubles, only for accounts younger than 30 days", AMOUNT, ["doubles"], "only for accounts"),
    ("between 5 and 10 percent of hour values go missing", HOUR, ["go missing"], "between 5 and 10 percent"),
    ("amount goes to cents and gets capped at 100", AMOUNT, ["goes to cents"], "capped at 100"),
    ("country 'DE' renamed to 'GER' and 'FR' renamed to 'FRA'", COUNTRY, ["'DE' renamed to 'GER'"], "'FRA'"),
    ("add noise with a standard deviation of $5 to amount", AMOUNT, ["add noise"], "$5"),
]


@pytest.mark.parametrize(("question", "field", "cited", "dropped"), CASES)
def test_a_careless_citation_is_refused_quoting_what_it_left_out(question, field, cited, dropped) -> None:  # type: ignore[no-untyped-def]
    left = unaccounted(question, field, cited, []).unread
    assert any(dropped.lower() in w.lower() or w.lower() in dropped.lower() for w in left), left


FAITHFUL = [
    ("What happens if payments.transactions.amount is sent in cents instead of dollars?", AMOUNT,
     ["sent in cents instead of dollars"], []),
    ("PAY-1234: from next sprint amount will be reported in cents on 20% of rows, seed 7", AMOUNT,
     ["reported in cents", "on 20% of rows", "seed 7"], ["PAY-1234"]),
    ("heads up, in 2 weeks hour moves to EST (UTC-5) with wraparound, will fraud_detector care?", HOUR,
     ["moves to EST (UTC-5) with wraparound"], ["in 2 weeks"]),
    ("txn_count_1h gets doubled by a join fan-out", COUNT, ["gets doubled"], []),
    ("could you check what happens to our models if country becomes null for half of the rows? thanks!",
     COUNTRY, ["becomes null", "for half of the rows"], []),
]  # fmt: skip


@pytest.mark.parametrize(("question", "field", "cited", "context"), FAITHFUL)
def test_a_faithful_citation_accounts_for_every_meaningful_word(question, field, cited, context) -> None:  # type: ignore[no-untyped-def]
    assert unaccounted(question, field, cited, context) == ([], [])


def test_context_covers_numbers_never_a_condition_or_a_second_change() -> None:
    question = "amount in cents, only for card-present transactions"
    assert unaccounted(question, AMOUNT, ["in cents"], ["only for card-present transactions"]).unread
    assert unaccounted("amount x100 and clipped at 5", AMOUNT, ["x100"], ["clipped at 5"]).unread


def test_a_citation_of_words_the_request_does_not_contain_is_refused() -> None:
    ledger = unaccounted("amount sent in cents", AMOUNT, ["sent in cents", "on 0.001% of rows"], [])
    assert ledger.not_said == ["on 0.001% of rows"]


def test_the_fields_own_name_and_identifiers_carry_no_number() -> None:
    spans = meaningful("what does fraud_detector_v2 do if txn_count_1h is shuffled", COUNT)
    assert {s.kind for s in spans} == {"change"}


def test_the_plan_node_check_refuses_with_runnable_readings() -> None:
    """own_words, as the plan node calls it for a chat model: the refusal quotes the words and offers readings."""
    question = "amount shows up 10x too small after the migration"
    proposal = ExperimentPlan(op="scale", params={"factor": 10}, cited=["10x"])
    with pytest.raises(PlanError) as refused:
        own_words(proposal, parse_mutation("scale", {"factor": 10}), question, AMOUNT)
    assert "'too small'" in str(refused.value) and refused.value.suggestions
    right = proposal.model_copy(update={"params": {"factor": 0.1}, "cited": ["10x too small"]})
    kept = own_words(right, parse_mutation("scale", {"factor": 0.1}), question, AMOUNT)
    assert kept.params == {"factor": 0.1}
