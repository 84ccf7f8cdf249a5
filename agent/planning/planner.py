"""What plans an experiment from a person's words: the planner protocol and the offline, deterministic planner (a
chat model's planner is in agent/llm.py)."""

from __future__ import annotations

from typing import Protocol

from agent.schemas import ExperimentPlan, FieldContext, PlannerName, RouteDecision


class Planner(Protocol):
    name: PlannerName

    async def route(self, text: str) -> RouteDecision: ...

    async def plan(self, text: str, field: FieldContext) -> ExperimentPlan: ...


class DeterministicPlanner:
    name: PlannerName = "deterministic"

    async def route(self, text: str) -> RouteDecision:
        from agent.planning.deterministic import route

        return route(text)

    async def plan(self, text: str, field: FieldContext) -> ExperimentPlan:
        from agent.planning.deterministic import plan

        return plan(text, field)
