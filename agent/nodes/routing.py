"""`route`: what is the user asking? The planner proposes; code checks the subject is usable."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from agent.context import AgentContext
from agent.nodes.failures import Node, captured
from agent.planning.router import prefer_known, subject_words
from agent.schemas import Intent, RouteDecision
from agent.state import TURN_RESET, AgentState
from tools.catalog.datahub import CatalogReader
from tools.catalog.resolve import knows_name

ABOUT_SOMETHING = frozenset({Intent.ASSESS, Intent.DEPENDENTS, Intent.OWNERS, Intent.TOLERANCE, Intent.LATEST_VERDICT})
"""Requests about a named thing, whose subject is checked against the catalog."""
OF_A_FIELD = frozenset({Intent.ASSESS, Intent.TOLERANCE})
"""Requests whose subject is a field (or a dataset or feature), never a model."""
_MAX_WORDS = 12  # a chat message names its subject among its first few content words; each costs a search


def make_route(ctx: AgentContext) -> Node:
    @captured("route")
    async def route(state: AgentState) -> dict[str, Any]:
        humans = [m for m in state.messages if isinstance(m, HumanMessage)]
        if not humans:
            raise ValueError("route needs a user message; send {'messages': [HumanMessage(...)]}")
        question = str(humans[-1].content).strip()
        decision = await ctx.planner.route(question)
        if decision.intent not in Intent:  # a model may invent intents; treat them as unknown
            decision = decision.model_copy(update={"intent": Intent.UNKNOWN})
        if ctx.planner.name == "deterministic" and decision.intent in ABOUT_SOMETHING:
            decision = await known_subject(await ctx.handle.reader(), question, decision)
        offered = [s for failure in state.failures for s in failure.suggestions]  # the previous turn's refusal
        chosen = {"confirmed_from": state.question} if question in offered else {}
        return {**TURN_RESET, **chosen, "question": question, "route": decision}

    return route


async def known_subject(reader: CatalogReader, question: str, decision: RouteDecision) -> RouteDecision:
    """The route with its subject checked against the catalog (agent/planning/router.py prefer_known): a field,
    dataset or feature for a change or a tolerance question, also a model for a lineage or owners question."""
    fields_only, schemas = decision.intent in OF_A_FIELD, dict[str, set[str]]()
    subject = decision.subject
    # The usual case costs one check: a dotted name or URN is kept as written, a subject the catalog names stays.
    if subject and ("." in subject or ":" in subject or await knows_name(reader, subject, fields_only=fields_only)):
        return decision
    others = [w for w in subject_words(question)[:_MAX_WORDS] if w != subject]
    known = {w for w in others if await knows_name(reader, w, fields_only=fields_only, schemas=schemas)}
    return prefer_known(question, decision, known)
