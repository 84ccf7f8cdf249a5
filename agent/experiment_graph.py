"""The deterministic experiment subgraph: measure (binding, inference, metrics) -> judge (policy, verdict).

No LLM is reachable from here. Plots are staged on disk next to the runs, not kept in the state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agent.context import AgentContext
from agent.nodes.failures import Node, captured
from agent.state import AgentState
from policies.engine import Decision, evaluate
from tools.evidence.build import slug
from tools.evidence.schema import ModelEvidence, new_run_id
from tools.evidence.store import runs_dir
from tools.experiment.assess import ModelTest, overall, run_model
from tools.experiment.prepare import prepare_model
from tools.experiment.runner import BaselineCache

_BASELINES = BaselineCache()


def make_measure(ctx: AgentContext) -> Node:
    @captured("experiment")
    async def measure(state: AgentState) -> dict[str, Any]:
        assert state.discovery is not None and state.plan_record is not None
        from tools.evidence.plots import write_plots

        mutation = state.plan_record.mutation
        assert mutation is not None  # `plan` records a validated mutation or fails the turn
        base_dir = ctx.settings.lite_db.parent
        staging = Path(state.staging_dir) if state.staging_dir else None
        if staging is None:  # named after the future run id, so a resumed run reuses its folder
            staging = runs_dir(ctx.settings.home) / f".staging-{new_run_id()}"
        staging.mkdir(parents=True, exist_ok=True)
        results = []
        for model in state.discovery.production_models:
            prepared = prepare_model(model, mutation, base_dir)
            if isinstance(prepared, ModelEvidence):
                test = ModelTest(prepared)
            else:
                test = run_model(prepared, mutation, _BASELINES)
            if test.arrays is not None:
                test.evidence.plots = write_plots(staging, slug(test.evidence.name), *test.arrays)
            results.append(test.evidence)
        return {"model_results": results, "staging_dir": str(staging)}

    return measure


def make_judge(ctx: AgentContext) -> Node:
    @captured("policy")
    async def judge(state: AgentState) -> dict[str, Any]:
        assert state.discovery is not None
        judged = []
        for result in state.model_results:
            if result.metrics is not None:  # the policy is the only source of a measured verdict
                decision: Decision = evaluate(result.metrics, ctx.policy.policy)
                result = result.model_copy(update={"verdict": decision.verdict, "reasons": list(decision.reasons)})
            judged.append(result)
        verdict, reasons = overall(state.discovery, judged)
        return {"model_results": judged, "verdict": verdict, "verdict_reasons": reasons}

    return judge


def build_experiment_graph(ctx: AgentContext) -> CompiledStateGraph[Any, Any, Any, Any]:
    builder = StateGraph(AgentState)
    builder.add_node("measure", make_measure(ctx))
    builder.add_node("judge", make_judge(ctx))
    builder.add_edge(START, "measure")
    builder.add_edge("measure", "judge")
    builder.add_edge("judge", END)
    return builder.compile()
