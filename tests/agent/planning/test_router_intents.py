"""Issue 37 item 4: the tolerance question in its wordings, "is anything in production using X", "who do I need to
loop in about X", and a change asked about by its verdict ("would it BLOCK if …") are routed for what they ask."""

from __future__ import annotations

import pytest

from agent.planning.router import route
from agent.schemas import Intent

FIELD = "payments.public.transactions.amount"


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        (f"How robust are the models to nulls in {FIELD}?", Intent.TOLERANCE),
        (f"how many nulls can {FIELD} take?", Intent.TOLERANCE),
        (f"How sensitive is fraud_detector to {FIELD}?", Intent.TOLERANCE),
        (f"Is anything in production using {FIELD}?", Intent.DEPENDENTS),
        (f"Who do I need to loop in about {FIELD}?", Intent.OWNERS),
        (f"What would the verdict be if {FIELD} is sent in cents?", Intent.ASSESS),
        (f"Would it BLOCK if {FIELD} arrives in cents?", Intent.ASSESS),
        (f"Does anything still PASS if {FIELD} gets multiplied by 100?", Intent.ASSESS),
        (f"{FIELD} nulls on 2% of rows: PASS or BLOCK?", Intent.ASSESS),
        (f"{FIELD} arriving in cents, verdict?", Intent.ASSESS),
        (f"The last verdict on {FIELD} was PASS, what changed?", Intent.LATEST_VERDICT),  # a verdict found before
        (f"What was the latest verdict for {FIELD}?", Intent.LATEST_VERDICT),  # no change: still a verdict question
        (f"Did {FIELD} pass last time?", Intent.LATEST_VERDICT),
    ],
)
def test_the_question_is_routed_for_what_it_asks(question: str, intent: Intent) -> None:
    decision = route(question)
    assert decision.intent is intent
    assert decision.subject == FIELD
