"""`respond`: the turn's answer — the verdict and why, where the evidence is, what was published."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from agent.context import AgentContext
from agent.nodes.failures import Node, input_failed
from agent.prompts_text import CAPABILITIES
from agent.state import AgentState
from tools.evidence.store import REPORT_FILE, runs_dir
from tools.evidence.task_text import summary_cells


def make_respond(ctx: AgentContext) -> Node:
    async def respond(state: AgentState) -> dict[str, Any]:
        if state.answer and not state.failures:
            return {}  # catalog_qa already answered
        lines: list[str] = []
        if input_failed(state):
            failure = next(f for f in state.failures if f.kind == "input")
            lines.append(f"I could not run this: {failure.message}")
            if failure.stage == "plan":
                lines.append(CAPABILITIES)
        elif state.run_id is None:
            lines += [f"Stage {f.stage} failed: {f.message}" for f in state.failures]
        else:
            lines.append(f"Verdict: {state.verdict}")
            lines += [f"  - {reason}" for reason in state.verdict_reasons]
            if state.plan_record:
                lines.append(f"Change tested: {state.plan_record.description}")
            for result in state.model_results:
                if result.metrics and result.metrics.task != "binary":  # the task's own numbers, never an AUC
                    cells = summary_cells(result.metrics)
                    lines.append(
                        f"{result.name} ({cells.task}): {result.verdict} — {cells.quality}, {cells.change}, "
                        f"{cells.changed}, PSI {cells.psi}, failures {result.metrics.failure_rate:.1%}"
                    )
                elif result.metrics:
                    m = result.metrics
                    lines.append(
                        f"{result.name}: {result.verdict} — flips {m.flip_rate or 0:.1%}, "
                        f"ΔAUC {m.auc_delta if m.auc_delta is not None else float('nan'):+.3f}, "
                        f"PSI {m.psi if m.psi is not None else float('nan'):.2f}, "
                        f"failures {m.failure_rate:.1%}"
                    )
            lines.append(f"Evidence: {runs_dir(ctx.settings.home) / state.run_id / REPORT_FILE}")
            if state.publication:
                lines.append(
                    f"Publication: {state.publication.status}"
                    + (f" — {state.publication.message}" if state.publication.message else "")
                )
        answer = "\n".join(lines)
        return {"answer": answer, "messages": [AIMessage(answer)]}

    return respond
