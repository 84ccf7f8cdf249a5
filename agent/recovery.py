"""Continuing a conversation turn that stopped half-way (the process was killed, or a node raised).

A turn that reached the approval interrupt is resumed with a decision (`Session.decide`). A turn that died
between or inside nodes has no interrupt: its last checkpoint names the nodes still to run. Running the graph
with no input on that thread (`graph.ainvoke(None, config)`) carries on from there; LangGraph re-runs the node that
was interrupted, and every node after discovery is safe to re-run (the experiment re-measures into a fresh staging
folder, `write_evidence` reuses the run folder it finds, publication replaces tags and updates the document it
finds instead of adding another).

Only reads Session internals (`graph`, `config`, `pending`); `provenance resume` can call `continue_thread` when a
thread has no pending approval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from agent.checkpoints import DURABILITY
from agent.conversation import Session, TurnResult
from agent.errors import UsageError

ThreadState = Literal["unknown", "finished", "pending_approval", "interrupted"]


@dataclass(frozen=True)
class ThreadStatus:
    state: ThreadState
    next_nodes: tuple[str, ...] = ()
    """For an interrupted turn: the nodes its checkpoint says run next."""

    @property
    def message(self) -> str:
        return {
            "unknown": "no conversation with this id was checkpointed",
            "finished": "the last turn finished; ask a new question",
            "pending_approval": "the turn waits for an approval decision (--approve or --reject)",
            "interrupted": f"the last turn stopped before {', '.join(self.next_nodes)}; it can be continued",
        }[self.state]


async def thread_status(session: Session, thread_id: str) -> ThreadStatus:
    state = await session.graph.aget_state(session.config(thread_id))
    if not state.values and not state.next:
        return ThreadStatus("unknown")
    if state.interrupts:
        return ThreadStatus("pending_approval", tuple(state.next))
    # Checkpoints are saved while the next step already runs, so a process killed just after a node finished
    # may leave that node's writes pending on the previous checkpoint: `next` is then empty, but the task is
    # still listed, and continuing applies its writes and goes on from there.
    running = tuple(state.next) or tuple(dict.fromkeys(task.name for task in state.tasks))
    if running:
        return ThreadStatus("interrupted", running)
    return ThreadStatus("finished")


async def continue_thread(session: Session, thread_id: str, callbacks: list[Any] | None = None) -> TurnResult:
    """Run an interrupted turn to its end (or to its approval interrupt) from the thread's last checkpoint.

    A thread that waits for approval, or whose last turn finished, is returned as it is: nothing runs again.
    Raises ValueError for a thread that was never checkpointed.
    """
    status = await thread_status(session, thread_id)
    if status.state == "unknown":
        raise UsageError(f"thread {thread_id}: {status.message}; `provenance runs` lists runs")
    config = session.config(thread_id, callbacks)
    if status.state == "interrupted":
        await session.graph.ainvoke(None, config, durability=DURABILITY)
    return await session.result(thread_id)
