"""Running conversation turns against the checkpointed graph (shared by the CLI and scripts).

A turn either finishes or stops at the approval interrupt; the checkpoint (SQLite in $PROVENANCE_HOME) keeps
the pending approval, so another process can resume the same thread later.

Every turn (`ask` and `decide`, from the CLI or the chat) is recorded into the thread's trace
(`$PROVENANCE_HOME/traces/<thread>.json`, see agent/traces/) by the session's `TraceRecorder`: callers need do
nothing. `open_session(..., record=False)` turns recording off.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields
from typing import Any, cast

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from agent.checkpoints import sqlite_checkpointer
from agent.context import AgentContext, CatalogHandle, collect_calls
from agent.errors import UsageError
from agent.graph import build_graph
from agent.state import AgentState, ApprovalDecision, ApprovalRequest, PublishMode, state_from_values
from agent.traces.recorder import TraceRecorder
from agent.traces.schema import TurnInput
from tools.settings import ProvenanceSettings

UpdateHook = Callable[[str, dict[str, Any]], Awaitable[None]]
"""Called with (node name, the node's state update) as each node finishes; the chat shows them as steps."""


@dataclass
class TurnResult:
    thread_id: str
    state: AgentState
    pending: ApprovalRequest | None

    @property
    def answer(self) -> str:
        return self.state.answer

    @property
    def values(self) -> dict[str, Any]:
        """The state as LangGraph's channel mapping (field name -> value), for callers that compare states."""
        return {f.name: getattr(self.state, f.name) for f in fields(AgentState)}


@dataclass
class Session:
    graph: CompiledStateGraph[Any, Any, Any, Any]
    context: AgentContext
    recorder: TraceRecorder | None = None

    def config(self, thread_id: str, callbacks: list[Any] | None = None) -> RunnableConfig:
        return cast(RunnableConfig, {"configurable": {"thread_id": thread_id}, "callbacks": callbacks or []})

    async def result(self, thread_id: str) -> TurnResult:
        """The thread's current state, typed, and its pending approval if the turn stopped at the gate."""
        snapshot = await self.graph.aget_state(self.config(thread_id))
        pending = None
        if snapshot.interrupts:
            pending = ApprovalRequest.model_validate(snapshot.interrupts[0].value)
        return TurnResult(thread_id, state_from_values(snapshot.values), pending)

    async def _run(
        self, graph_input: Any, thread_id: str, callbacks: list[Any] | None, on_update: UpdateHook | None
    ) -> TurnResult:
        """Run until the graph ends or interrupts; report each node's update to `on_update` as it happens."""
        async for chunk in self.graph.astream(
            graph_input, self.config(thread_id, callbacks), stream_mode="updates", subgraphs=True
        ):
            namespace, updates = cast(tuple[tuple[str, ...], dict[str, Any]], chunk)
            if on_update is None:
                continue
            for node, update in updates.items():
                if node != "__interrupt__":
                    await on_update(node if not namespace else f"experiment.{node}", update or {})
        return await self.result(thread_id)

    async def _turn(
        self,
        turn_input: TurnInput,
        graph_input: Any,
        thread_id: str,
        callbacks: list[Any] | None,
        on_update: UpdateHook | None,
    ) -> TurnResult:
        """One recorded turn: the trace gets the input first, then (also on failure) what the turn did."""
        if self.recorder is None:
            return await self._run(graph_input, thread_id, callbacks, on_update)
        active = self.recorder.begin(thread_id, turn_input)
        with collect_calls() as calls:
            try:
                result = await self._run(graph_input, thread_id, [*(callbacks or []), active.callback], on_update)
            except BaseException as exc:
                self.recorder.end(active, calls, error=exc)
                raise
        self.recorder.end(active, calls, state=result.state, pending=result.pending)
        return result

    async def ask(
        self,
        question: str,
        *,
        thread_id: str | None = None,
        mode: PublishMode = "ask",
        callbacks: list[Any] | None = None,
        on_update: UpdateHook | None = None,
    ) -> TurnResult:
        thread_id = thread_id or f"cli-{uuid.uuid4().hex[:12]}"
        if await self.pending(thread_id) is not None:
            # A new question would silently drop the open approval; close it explicitly and on the record.
            await self.decide(
                thread_id,
                ApprovalDecision(
                    decision="reject", by="system", comment="superseded by a new question in the same thread"
                ),
            )
        graph_input = {"messages": [HumanMessage(question)], "publish_mode": mode}
        turn_input = TurnInput(kind="ask", question=question, publish_mode=mode)
        return await self._turn(turn_input, graph_input, thread_id, callbacks, on_update)

    async def pending(self, thread_id: str) -> ApprovalRequest | None:
        return (await self.result(thread_id)).pending

    async def decide(
        self,
        thread_id: str,
        decision: ApprovalDecision,
        callbacks: list[Any] | None = None,
        on_update: UpdateHook | None = None,
    ) -> TurnResult:
        if await self.pending(thread_id) is None:
            raise UsageError(f"thread {thread_id} has no pending approval; `provenance runs` lists runs")
        turn_input = TurnInput(kind="decide", decision=decision)
        return await self._turn(turn_input, Command(resume=decision.model_dump()), thread_id, callbacks, on_update)


@asynccontextmanager
async def open_session(
    settings: ProvenanceSettings, model: Any = None, context: AgentContext | None = None, *, record: bool = True
) -> AsyncIterator[Session]:
    """A session on the checkpointed graph; `record` saves every turn into $PROVENANCE_HOME/traces/."""
    settings.home.mkdir(parents=True, exist_ok=True)
    async with sqlite_checkpointer(settings.home / "checkpoints.db") as saver:
        handle = context.handle if context else CatalogHandle(settings)
        ctx = context or AgentContext(settings=settings, catalog=handle)
        try:
            graph = build_graph(model=model, checkpointer=saver, context=ctx)
            yield Session(graph, ctx, TraceRecorder(settings, ctx) if record else None)
        finally:
            await handle.aclose()
