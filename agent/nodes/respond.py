"""`respond`: the turn's answer — the verdict and why, where the evidence is, what was published."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from agent.capabilities import CAPABILITIES
from agent.context import AgentContext
from agent.nodes.failures import Node, input_failed
from agent.state import AgentState
from policies import Verdict
from tools.evidence.store import REPORT_FILE, runs_dir
from tools.evidence.task_views import task_view


def make_respond(ctx: AgentContext) -> Node:
    async def respond(state: AgentState) -> dict[str, Any]:
        if state.answer and not state.failures:
            return {}  # catalog_qa already answered
        lines: list[str] = []
        if input_failed(state):
            failure = next(f for f in state.failures if f.kind == "input")
            lines.append(f"I could not run this: {failure.message}")
            if failure.suggestions:
                lines.append("I can run one of these instead (say it as written, or pick it in the chat):")
                lines += [f"  - {suggestion}" for suggestion in failure.suggestions]
            elif failure.stage == "plan":
                lines.append(CAPABILITIES)
        elif state.run_id is None:
            lines += [f"Stage {f.stage} failed: {f.message}" for f in state.failures]
        else:
            lines.append(f"Verdict: {state.verdict}")
            lines += [f"  - {reason}" for reason in state.verdict_reasons]
            if state.plan_record:
                lines.append(f"Change tested: {state.plan_record.description}")
            lines += [f"Published tolerance: {note}" for note in state.tolerance_notes]
            lines += measured_lines(state)
            lines += next_steps(state)
            lines.append(f"Evidence: {runs_dir(ctx.settings.home) / state.run_id / REPORT_FILE}")
            if state.publication:
                lines.append(
                    f"Publication: {state.publication.status}"
                    + (f" — {state.publication.message}" if state.publication.message else "")
                )
        answer = "\n".join(lines)
        return {"answer": answer, "messages": [AIMessage(answer)]}

    return respond


def measured_lines(state: AgentState) -> list[str]:
    """Each measured model's verdict and its task's own numbers (tools/evidence/task_views.py), never another's."""
    lines = []
    for result in state.model_results:
        if result.metrics:
            view = task_view(result.metrics)
            task = "" if view.task == "binary" else f" ({view.task})"
            lines.append(f"{result.name}{task}: {result.verdict} — {view.short()}")
    return lines


def next_steps(state: AgentState) -> list[str]:
    """On a BLOCK, what to do: the change should not ship as is, and whom to talk to (the blocked models' owners,
    as the catalog records them)."""
    if state.verdict != Verdict.BLOCK:
        return []
    lines = ["Next: do not ship this change as is; fix it, or agree a migration with the owners of the blocked models."]
    owners = {m.urn: m.owners for m in state.discovery.models} if state.discovery else {}
    for result in state.model_results:
        if result.verdict == Verdict.BLOCK:
            who = ", ".join(owners.get(result.urn, [])) or "no owner recorded in the catalog"
            lines.append(f"  {result.name}: {who}")
    return lines
