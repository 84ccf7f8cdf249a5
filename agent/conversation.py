"""Running conversation turns against the checkpointed graph (shared by the CLI and scripts).

A turn either finishes or stops at the approval interrupt; the checkpoint (SQLite in $PROVENANCE_HOME, or the
PostgreSQL database of PROVENANCE_DATABASE_URL) keeps the pending approval, so another process can resume the same
thread later. Deciding holds the run's claim (agent/claims.py): when two processes answer the same approval, one
decides and the other gets `AlreadyDecided`.

Every turn (`ask` and `decide`, from the CLI or the chat) is recorded into the thread's trace
(`$PROVENANCE_HOME/traces/<thread>.json`, see agent/traces/) by the session's `TraceRecorder`: callers need do
nothing. `open_session(..., record=False)` turns recording off.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields
from typing import Any, cast

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from agent.checkpoints import DURABILITY, open_checkpointer
from agent.claims import run_claim
from agent.context import AgentContext
from agent.errors import AlreadyDecided, UsageError
from agent.graph import build_graph
from agent.state import AgentState, ApprovalDecision, ApprovalRequest, PublishMode, state_from_values
from agent.traces.recorder import TraceRecorder
from agent.traces.schema import TurnInput
from tools.catalog.calls import collect_calls
from tools.catalog.handle import CatalogHandle
from tools.evidence.store import EvidenceError, read_evidence
from tools.settings import ProvenanceSettings

UpdateHook = Callable[[str, dict[str, Any]], Awaitable[None]]
"""Called with (node name, the node's state update) as each node finishes; the chat shows them as steps."""


async def relay_updates(namespace: tuple[str, ...], updates: dict[str, Any], on_update: UpdateHook | None) -> None:
    """One streamed chunk of node updates to `on_update`; a subgraph's nodes are named `experiment.<node>`."""
    if on_update is None:
        return
    for node, update in updates.items():
        if node != "__interrupt__":
            await on_update(node if not namespace else f"experiment.{node}", update or {})


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
            graph_input,
            self.config(thread_id, callbacks),
            stream_mode="updates",
            subgraphs=True,
            durability=DURABILITY,
        ):
            namespace, updates = cast(tuple[tuple[str, ...], dict[str, Any]], chunk)
            await relay_updates(namespace, updates, on_update)
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
            with collect_calls():  # the evidence counts this turn's calls (tools/catalog/calls.py)
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
            with contextlib.suppress(UsageError):  # answered elsewhere meanwhile (AlreadyDecided): closed anyway
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
        """Answer the thread's pending approval. Raises UsageError when there is none, and AlreadyDecided when
        another session answered it while this one waited for the run's claim."""
        request = await self.pending(thread_id)
        if request is None:
            raise UsageError(f"thread {thread_id} has no pending approval; `provenance runs` lists runs")
        async with run_claim(self.context.settings, request.run_id):
            # Checked again under the claim: another process may have resumed the same interrupt meanwhile, and
            # LangGraph would run the approval (and the publication) a second time.
            current = await self.pending(thread_id)
            if current is None or current.run_id != request.run_id:
                raise AlreadyDecided(self._decided_elsewhere(thread_id, request.run_id))
            turn_input = TurnInput(kind="decide", decision=decision)
            graph_input: Command[Any] = Command(resume=decision.model_dump())
            return await self._turn(turn_input, graph_input, thread_id, callbacks, on_update)

    def _decided_elsewhere(self, thread_id: str, run_id: str) -> str:
        try:
            status: str = read_evidence(self.context.settings.home, run_id).publication.status
        except EvidenceError:
            status = "unknown"
        return (
            f"run {run_id} (thread {thread_id}) was decided in another session meanwhile; "
            f"its publication is {status}; nothing more to do"
        )


@asynccontextmanager
async def open_session(
    settings: ProvenanceSettings,
    model: Any = None,
    context: AgentContext | None = None,
    *,
    record: bool = True,
    long_lived: bool = False,
) -> AsyncIterator[Session]:
    """A session on the checkpointed graph; `record` saves every turn into $PROVENANCE_HOME/traces/; `long_lived`
    (a server: the chat) runs experiments in worker processes under PROVENANCE_EXECUTOR=auto, started now in the
    background. Raises DatabaseError when PROVENANCE_DATABASE_URL is set and cannot be used."""
    settings.home.mkdir(parents=True, exist_ok=True)
    async with open_checkpointer(settings) as saver:
        handle = context.handle if context else CatalogHandle(settings)
        ctx = context or AgentContext(settings=settings, catalog=handle, long_lived=long_lived)
        if long_lived:
            ctx.jobs.warm()  # workers import numpy, scikit-learn and pandas before the first assessment needs them
        try:
            graph = build_graph(model=model, checkpointer=saver, context=ctx)
            yield Session(graph, ctx, TraceRecorder(settings, ctx) if record else None)
        finally:
            try:
                await handle.aclose()
            finally:
                await ctx.close_jobs()
