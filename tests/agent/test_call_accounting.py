"""A run's evidence counts the catalog calls of that run, not of the process. Three conversations run at
once through one session (as in the chat); each run's evidence.json `mcp_calls` equals the calls its turn made
(the trace records them per turn), and the three add up to the session's total."""

from __future__ import annotations

import asyncio

import pytest

from agent.conversation import open_session
from agent.traces.store import read_trace, trace_path
from tools.catalog.calls import RECENT_CALLS
from tools.evidence.store import read_evidence
from tools.settings import ProvenanceSettings

QUESTIONS = (
    "What happens if payments.public.transactions.amount is sent in cents instead of dollars?",
    "What if payments.public.transactions.account_age_days has 5% nulls?",
    "What if payments.public.transactions.merchant_category 'grocery' is renamed to 'groceries'?",
)


@pytest.mark.slow
def test_each_runs_evidence_counts_its_own_calls_with_three_conversations_in_one_process(
    settings: ProvenanceSettings,
) -> None:
    async def main() -> tuple[list[tuple[str, str | None]], int, int]:
        async with open_session(settings, long_lived=True) as session:
            turns = await asyncio.gather(*(session.ask(q, thread_id=f"t{i}", mode="no_publish") for i, q in
                                           enumerate(QUESTIONS)))  # fmt: skip
            handle = session.context.handle.opened
            assert handle is not None
            log = handle.session.calls
            return [(t.thread_id, t.state.run_id) for t in turns], len(log), len(list(log))

    runs, total, kept = asyncio.run(main())
    counted = []
    for thread_id, run_id in runs:
        assert run_id is not None, thread_id
        evidence = read_evidence(settings.home, run_id)
        [turn] = read_trace(trace_path(settings.home, thread_id)).turns
        assert evidence.mcp_calls == len(turn.catalog_calls) > 0, (thread_id, evidence.mcp_calls)
        counted.append(evidence.mcp_calls)
    assert sum(counted) == total  # nothing counted twice, nothing lost
    assert kept <= RECENT_CALLS


def test_a_graph_run_without_a_collector_says_its_calls_were_not_counted(settings: ProvenanceSettings) -> None:
    """`langgraph dev` runs the bare graph: no session opens a collector, so the evidence says "not counted"
    rather than 0 or the session's total."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from agent.context import AgentContext
    from agent.graph import build_graph
    from agent.state import state_from_values
    from tools.catalog.handle import CatalogHandle

    async def main() -> str | None:
        async with CatalogHandle(settings) as handle:
            graph = build_graph(context=AgentContext(settings=settings, catalog=handle), checkpointer=InMemorySaver())
            values = await graph.ainvoke(
                {"messages": [HumanMessage(QUESTIONS[0])], "publish_mode": "no_publish"},
                {"configurable": {"thread_id": "bare"}},
            )
            return state_from_values(values).run_id

    run_id = asyncio.run(main())
    assert run_id is not None
    assert read_evidence(settings.home, run_id).mcp_calls is None
