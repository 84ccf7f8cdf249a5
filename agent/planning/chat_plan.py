"""A chat model's plan as Provenance runs it : only numbers and values the person
said (said.py), every meaningful word of the request cited (ledger.py), and Provenance's own rationale and
assumptions, never the model's text."""

from __future__ import annotations

from agent.planning.deterministic import plan as offline_plan
from agent.planning.ledger import unaccounted
from agent.planning.said import unsaid
from agent.planning.suggest import suggestions
from agent.schemas import ExperimentPlan, FieldContext, PlannerName
from tools.mutations import Mutation, PlanError

CHAT_PLANNERS: frozenset[PlannerName] = frozenset({"gemini", "chat_model", "replay"})
"""Planners whose plan is a chat model's reading, held to the person's words here."""


def own_words(proposal: ExperimentPlan, mutation: Mutation, question: str, field: FieldContext) -> ExperimentPlan:
    """A chat model's plan as Provenance runs it (`mutation`: the plan validated): refused (PlanError) when it uses
    a number or value the question does not state, or when its citations leave a meaningful word of the question
    unread or cite words the question does not contain; its rationale and assumptions replaced by Provenance's own (the
    offline reading's where it reads the same change), since the model's text may carry catalog text."""
    reading = offline_plan(question, field)
    params = {k: v for k, v in mutation.model_dump().items() if k not in ("op", "fraction", "seed") and v is not None}
    checked = ExperimentPlan(op=mutation.op, params=params, fraction=mutation.fraction, seed=mutation.seed)
    missing = unsaid(checked, question, reading)
    if missing:
        raise PlanError(
            f"the chat model's plan uses {', '.join(missing)}, which your message does not say: a plan's numbers and "
            "values come from your words, never from catalog text. Say the change with its numbers, e.g. "
            "'amount sent in cents on 5% of rows'."
        )
    ledger = unaccounted(question, field, proposal.cited, proposal.context)
    if ledger.not_said:
        raise PlanError(
            f"the chat model's plan cites {_quoted(ledger.not_said)}, which your message does not contain: a plan is "
            "read from your words only. Ask again, or say the change with its numbers.",
            suggestions=suggestions(question, field),
        )
    if ledger.unread:
        raise PlanError(
            f"the chat model's plan does not account for {_quoted(ledger.unread)} in your message (a condition, a "
            "range, a direction, another field, a second change or a size it did not use): Provenance tests nothing "
            "it did not read. Say the change without it, or with it in a form one experiment can run, e.g. "
            "'amount sent in cents on 20% of rows'.",
            suggestions=suggestions(question, field),
        )
    same = (reading.op, reading.params, reading.fraction, reading.seed) == (
        checked.op, checked.params, checked.fraction, checked.seed,
    )  # fmt: skip
    if same:
        return proposal.model_copy(update={"rationale": reading.rationale, "assumptions": reading.assumptions})
    return proposal.model_copy(update={"rationale": "the chat model's reading of your words.", "assumptions": []})


def _quoted(words: list[str]) -> str:
    return ", ".join(f"'{w}'" for w in words)
