"""The Provenance agent, wired in flow order. Nodes live in agent/nodes/; this file only connects them.

route ─► catalog_qa ─────────────────────────────────────────────────────────────► respond
     ├─► tolerance (a tolerance scan, read-only) ─────────────────────────────────► respond
     └─► gather_context ─► discover ─► plan ─► experiment ─► write_evidence ─► approval ─► publish ─► respond
                                          (measure → judge)                           └─(reject)──► respond
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agent.context import AgentContext
from agent.experiment_graph import build_experiment_graph
from agent.nodes.approval import make_approval, make_publish
from agent.nodes.before_experiment import make_discover, make_gather_context, make_plan
from agent.nodes.catalog_qa import make_catalog_qa
from agent.nodes.evidence import make_write_evidence
from agent.nodes.failures import input_failed, publishable
from agent.nodes.respond import make_respond
from agent.nodes.routing import make_route
from agent.nodes.tolerance import make_tolerance
from agent.planning.planner import Planner
from agent.schemas import Intent, PlannerName
from agent.state import AgentState


def after_route(state: AgentState) -> Literal["catalog_qa", "gather_context", "tolerance", "respond"]:
    if state.failures or state.route is None:
        return "respond"
    if state.route.intent == Intent.TOLERANCE:
        return "tolerance"
    return "gather_context" if state.route.intent == Intent.ASSESS else "catalog_qa"


def after_gather(state: AgentState) -> Literal["discover", "respond"]:
    return "respond" if state.failures else "discover"


def after_discover(state: AgentState) -> Literal["plan", "write_evidence", "respond"]:
    if input_failed(state):
        return "respond"
    return "write_evidence" if state.failures else "plan"


def after_plan(state: AgentState) -> Literal["experiment", "write_evidence", "respond"]:
    if input_failed(state):
        return "respond"  # a refused plan is an answer, not a run
    return "write_evidence" if state.failures else "experiment"


def after_evidence(state: AgentState) -> Literal["approval", "respond"]:
    # Only measured or judged models can be published; a run that failed before that is only reported.
    return "approval" if publishable(state) and state.publish_mode != "no_publish" else "respond"


def build_builder(context: AgentContext) -> StateGraph[Any, Any, Any, Any]:
    builder = StateGraph(AgentState)
    builder.add_node("route", make_route(context))
    builder.add_node("catalog_qa", make_catalog_qa(context))
    builder.add_node("tolerance", make_tolerance(context))
    builder.add_node("gather_context", make_gather_context(context))
    builder.add_node("discover", make_discover(context))
    builder.add_node("plan", make_plan(context))
    builder.add_node("experiment", build_experiment_graph(context))
    builder.add_node("write_evidence", make_write_evidence(context))
    builder.add_node("approval", make_approval(context))  # routes itself with Command: publish | respond
    builder.add_node("publish", make_publish(context))
    builder.add_node("respond", make_respond(context))

    builder.add_edge(START, "route")
    builder.add_conditional_edges("route", after_route)  # questions vs change requests
    builder.add_edge("catalog_qa", "respond")
    builder.add_edge("tolerance", "respond")
    builder.add_conditional_edges("gather_context", after_gather)  # unknown dataset/field ends the turn
    builder.add_conditional_edges("discover", after_discover)
    builder.add_conditional_edges("plan", after_plan)  # refused plans are answered, not run
    builder.add_edge("experiment", "write_evidence")  # evidence first, always
    builder.add_conditional_edges("write_evidence", after_evidence)
    builder.add_edge("publish", "respond")
    builder.add_edge("respond", END)
    return builder


def build_graph(
    model: Any = None, checkpointer: BaseCheckpointSaver[Any] | None = None, context: AgentContext | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """`model`: a LangChain chat model (Gemini or any other) or None for the deterministic planner."""
    context = context or AgentContext()
    if model is not None:
        from agent.llm import LlmPlanner

        planner: Planner = LlmPlanner(model, name=planner_name(model))
        context.planner = planner
    return build_builder(context).compile(checkpointer=checkpointer)


def planner_name(model: Any) -> PlannerName:
    """The name evidence and traces record for `model`: "gemini" for langchain-google-genai's chat model (or a
    subclass), "chat_model" for any other. By class name and module, so google-genai is never imported for it."""
    gemini = any(
        cls.__name__ == "ChatGoogleGenerativeAI" and cls.__module__.startswith("langchain_google_genai")
        for cls in type(model).__mro__
    )
    return "gemini" if gemini else "chat_model"


def make_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """For `langgraph dev` (langgraph.json): no checkpointer, the platform brings its own."""
    from agent.llm import chat_model_from_env

    return build_graph(model=chat_model_from_env())
