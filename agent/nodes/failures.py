"""Structured failure capture: a node that fails records its stage and message instead of crashing the turn."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from agent.state import AgentState
from tools.errors import failed_service, failure_kind
from tools.evidence.schema import StageFailure

log = logging.getLogger(__name__)


class Node(Protocol):
    """A graph node: the state in, its update out (LangGraph passes the state by the name `state`)."""

    def __call__(self, state: AgentState) -> Awaitable[dict[str, Any]]: ...


def captured(stage: str) -> Callable[[Node], Node]:
    def wrap(node: Node) -> Node:
        @functools.wraps(node)
        async def run(state: AgentState) -> dict[str, Any]:
            try:
                return await node(state)
            except Exception as exc:  # recorded with its stage; the graph then writes what evidence exists
                kind = failure_kind(exc)
                if kind == "input":  # the request cannot be served as asked: the message is the answer
                    offered = list(getattr(exc, "suggestions", []))
                    failure = StageFailure(stage=stage, message=str(exc), kind=kind, suggestions=offered)
                else:
                    log.exception("stage %s failed", stage)
                    message = f"{type(exc).__name__}: {exc}"
                    failure = StageFailure(stage=stage, message=message, kind=kind, service=failed_service(exc))
                return {"failures": [*state.failures, failure]}

        return run

    return wrap


def publishable(state: AgentState) -> bool:
    """Models were measured or judged, and no model's experiment crashed: a verdict worth asking a person about."""
    return worth_publishing(bool(state.model_results), state.failures)


def worth_publishing(judged: bool, failures: Iterable[StageFailure]) -> bool:
    """`judged`: the run has model results. A crashed job leaves its model INCOMPLETE beside the others' results;
    that run is reported, not published. Shared by the graph (live state) and `provenance check` (evidence)."""
    crashed = any(f.stage == "experiment" and f.kind == "error" for f in failures)
    return judged and not crashed


def input_failed(state: AgentState) -> bool:
    """The request cannot be served as asked: answer it, do not record a run."""
    return any(f.kind == "input" for f in state.failures)
