"""`route`: what is the user asking? The planner proposes; code checks the subject is usable."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from agent.context import AgentContext
from agent.nodes.failures import Node, captured
from agent.schemas import Intent
from agent.state import TURN_RESET, AgentState


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
        return {**TURN_RESET, "question": question, "route": decision}

    return route
