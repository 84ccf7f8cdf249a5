"""Assessments with a fixed plan (`provenance assess`, scripts, tests): the agent's own graph, no publication.

One path: the same nodes as a conversation (gather_context -> discover -> plan -> experiment -> write_evidence),
with the planner replaced by the caller's already validated mutation, so the CLI and the agent cannot drift. The
policy is applied once, in `judge`; there is one baseline cache (the experiment subgraph's).
"""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path
from typing import Any, cast

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from agent.context import AgentContext
from agent.conversation import UpdateHook, relay_updates
from agent.graph import build_graph
from agent.schemas import ExperimentPlan, FieldContext, FieldTarget, Intent, PlannerName, RouteDecision
from agent.state import state_from_values
from tools.catalog.calls import collect_calls
from tools.catalog.session import CatalogError
from tools.evidence.schema import Evidence
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE, read_evidence, runs_dir
from tools.mutations import Mutation, PlanError


class FixedPlanner:
    """A planner that proposes exactly the caller's request; the graph still validates it like any proposal."""

    name: PlannerName = "cli"

    def __init__(self, target: FieldTarget, mutation: Mutation) -> None:
        self.target, self.mutation = target, mutation

    async def route(self, text: str) -> RouteDecision:
        # The subject is for people reading the route; the field itself travels typed (AgentState.target).
        return RouteDecision(
            intent=Intent.ASSESS, subject=self.target.urn, change=self.mutation.describe(self.target.field)
        )

    async def plan(self, text: str, field: FieldContext) -> ExperimentPlan:
        m = self.mutation
        return ExperimentPlan(
            op=m.op,
            params=m.model_dump(mode="json", exclude={"op", "fraction", "seed"}),
            fraction=m.fraction,
            seed=m.seed,
            rationale="given on the command line",
        )


class AssessmentResult(BaseModel):
    evidence: Evidence
    run_dir: Path

    def summary(self) -> dict[str, Any]:
        """The `--json` contract of docs/design.md §9."""
        ev = self.evidence
        return {
            "run_id": ev.run_id,
            "verdict": ev.verdict,
            "reasons": ev.verdict_reasons,
            "tolerance_notes": ev.tolerance_notes,
            "models": [
                {
                    "urn": m.urn,
                    "name": m.name,
                    "verdict": m.verdict,
                    "reasons": [r.message for r in m.reasons],
                    "reason_codes": [r.code for r in m.reasons],
                    "production_marker": m.production_marker,
                    # binary / multiclass / regression: which of the metrics' task sections carry meaning
                    "task": m.measured_task,
                    "metrics": m.metrics.model_dump(mode="json") if m.metrics else None,
                }
                for m in ev.models
            ],
            "not_tested": [n.model_dump() for n in ev.not_tested],
            "coverage": ev.coverage.model_dump(mode="json") if ev.coverage else None,
            "policy": ev.policy.model_dump(),
            "evidence": {
                "folder": str(self.run_dir),
                "json": str(self.run_dir / EVIDENCE_FILE),
                "report": str(self.run_dir / REPORT_FILE),
                "plots": {m.name: [str(self.run_dir / p) for p in m.plots.values()] for m in ev.models},
            },
            "publication": ev.publication.model_dump(),
            "mcp_calls": ev.mcp_calls,
        }


async def assess_change(
    context: AgentContext, dataset_urn: str, field: str, mutation: Mutation, on_update: UpdateHook | None = None
) -> AssessmentResult:
    """Run one fixed assessment through the graph on `context`'s catalog (opened lazily, kept open for reuse).

    A request the catalog or the data cannot serve (unknown dataset or field, an operator that does not fit the
    field) raises PlanError; a stage that failed before any run was recorded raises CatalogError. A run whose
    experiment failed is returned: its evidence says INCOMPLETE and names the stage. `on_update` hears each node's
    update as it ends (the terminal's progress)."""
    target = FieldTarget(dataset_urn=dataset_urn, field=field)
    fixed = dataclasses.replace(context, planner=FixedPlanner(target, mutation))
    graph = build_graph(context=fixed, checkpointer=InMemorySaver())
    question = f"assess: {mutation.describe(field)} on {target.urn}"
    config: Any = {"configurable": {"thread_id": f"assess-{uuid.uuid4().hex[:12]}"}}
    graph_input = {"messages": [HumanMessage(question)], "publish_mode": "no_publish", "target": target}
    values: dict[str, Any] = {}
    with collect_calls():  # the evidence counts this assessment's calls
        # the root graph's values as they stream (not read back from the checkpointer, which would deserialize them)
        async for chunk in graph.astream(graph_input, config, stream_mode=["updates", "values"], subgraphs=True):
            namespace, mode, data = cast(tuple[tuple[str, ...], str, dict[str, Any]], chunk)
            if mode == "values":
                values = data if not namespace else values
            else:
                await relay_updates(namespace, data, on_update)
    state = state_from_values(values)
    failures, run_id = state.failures, state.run_id
    if run_id is None:
        refused = [f.message for f in failures if f.kind == "input"]
        if refused:
            raise PlanError("; ".join(refused))
        detail = "; ".join(f"{f.stage}: {f.message}" for f in failures) or "no run was recorded"
        raise CatalogError(f"the assessment did not run ({detail})")
    home = context.settings.home
    return AssessmentResult(evidence=read_evidence(home, run_id), run_dir=runs_dir(home) / run_id)
