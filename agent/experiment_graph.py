"""The deterministic experiment subgraph: measure (binding, inference, metrics) -> judge (policy, verdict); a
dropped or renamed column (a structural plan) is judged by the policy's structural rule instead of measured.

No LLM is reachable from here. Plots are staged on disk next to the runs, not kept in the state. The CPU-bound
work (unpickling, inference, metrics, plots) runs in the context's executor, never on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agent.context import AgentContext
from agent.nodes.failures import Node, captured
from agent.state import AgentState
from policies import Decision, evaluate
from tools.changes.structural import structural_evidence
from tools.errors import failure_kind
from tools.evidence.schema import ModelEvidence, StageFailure, new_run_id
from tools.evidence.store import staging_dir
from tools.experiment.job import SharedBaselineCache, measure_model
from tools.experiment.measure import every_production_model, overall
from tools.experiment.model_evidence import incomplete_evidence

log = logging.getLogger(__name__)
_BASELINES = SharedBaselineCache()  # process-wide, shared by the worker threads of every conversation


def make_measure(ctx: AgentContext) -> Node:
    @captured("experiment")
    async def measure(state: AgentState) -> dict[str, Any]:
        assert state.discovery is not None and state.plan_record is not None
        mutation = state.plan_record.mutation
        assert mutation is not None  # `plan` records a validated mutation or fails the turn
        base_dir = ctx.settings.lite_db.parent
        run_id = state.planned_run_id or new_run_id()
        staging = staging_dir(ctx.settings.home, run_id)
        staging.mkdir(parents=True, exist_ok=True)
        models = state.discovery.production_models
        # Off the event loop (other conversations keep going), all models at once up to the pool size.
        policy = ctx.policy.policy  # how to measure (tolerance, segments); the verdict is `judge`'s
        jobs = [ctx.jobs.run(measure_model, model, mutation, base_dir, staging, _BASELINES, policy) for model in models]
        outcomes = await asyncio.gather(*jobs, return_exceptions=True)  # in the discovery's order
        results: list[ModelEvidence] = []
        failures = list(state.failures)
        misfits = [o for o in outcomes if isinstance(o, Exception) and failure_kind(o) == "input"]
        if misfits and len(misfits) == len(outcomes):
            raise misfits[0]  # the plan fits no model's data: the turn is refused, saying why
        for model, outcome in zip(models, outcomes, strict=True):
            if isinstance(outcome, ModelEvidence):
                results.append(outcome)
            elif not isinstance(outcome, Exception):
                raise outcome  # cancellation ends the turn
            elif failure_kind(outcome) == "input":  # this model's data does not take the change; the others stand
                message = f"the change cannot be applied to this model's evaluation data: {outcome}"
                results.append(incomplete_evidence(model, "not_applicable", message))
            else:  # one model's job crashed: the others' results stand, the run records the failure
                log.error("experiment job for %s failed", model.urn, exc_info=outcome)
                message = f"{model.name}: {type(outcome).__name__}: {outcome}"
                results.append(incomplete_evidence(model, "experiment_error", f"the experiment failed ({message})"))
                failures.append(StageFailure(stage="experiment", message=message))
        return {"model_results": results, "planned_run_id": run_id, "failures": failures}

    return measure


def make_structural(ctx: AgentContext) -> Node:
    @captured("policy")
    async def structural(state: AgentState) -> dict[str, Any]:
        assert state.discovery is not None and state.plan_record is not None and state.field_context is not None
        change = state.plan_record.structural
        assert change is not None
        field = state.field_context.field
        return {"model_results": structural_evidence(state.discovery, change, field, ctx.policy.policy)}

    return structural


def measured_or_structural(state: AgentState) -> str:
    return "structural" if state.plan_record is not None and state.plan_record.structural else "measure"


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
        judged = every_production_model(state.discovery, judged)
        verdict, reasons = overall(state.discovery, judged)
        return {"model_results": judged, "verdict": verdict, "verdict_reasons": reasons}

    return judge


def build_experiment_graph(ctx: AgentContext) -> CompiledStateGraph[Any, Any, Any, Any]:
    builder = StateGraph(AgentState)
    builder.add_node("measure", make_measure(ctx))
    builder.add_node("structural", make_structural(ctx))
    builder.add_node("judge", make_judge(ctx))
    builder.add_conditional_edges(START, measured_or_structural, ["measure", "structural"])
    builder.add_edge("measure", "judge")
    builder.add_edge("structural", "judge")
    builder.add_edge("judge", END)
    return builder.compile()
