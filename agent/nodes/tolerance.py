"""`tolerance`: a tolerance scan of the field the person named ("how much can amount change before the models
break?"): every production model downstream, every dose axis that fits the field, the brackets where the policy
says WARNING and BLOCK (tools/tolerance). Read-only: the evidence goes to scans/<id>/; publishing the map to
DataHub stays behind `provenance scan --publish` and its approval."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from agent.context import AgentContext
from agent.nodes.failures import Node, captured
from agent.state import AgentState
from tools.catalog.resolve import one_column
from tools.mutations import PlanError
from tools.tolerance.report import REPORT_FILE, write_scan
from tools.tolerance.scan import scan_async


def make_tolerance(ctx: AgentContext) -> Node:
    @captured("tolerance")
    async def tolerance(state: AgentState) -> dict[str, Any]:
        assert state.route is not None
        if not state.route.subject:
            raise PlanError("name the field to scan, e.g. 'how much can payments.public.transactions.amount change?'")
        discoverer = await ctx.handle.discoverer()
        dataset, field = one_column(state.route.subject, await discoverer.resolve_subject(state.route.subject))
        found = await discoverer.discover(dataset, field)
        result = await scan_async(found, ctx.settings.lite_db.parent, ctx.policy, None, ctx.jobs)
        folder, result = write_scan(ctx.settings.home, result, ctx.policy.policy)
        lines = [
            f"Tolerance map of {field} ({len(result.models)} production model(s), {result.experiments} doses; policy "
            f"{result.policy.name} v{result.policy.version}). Each threshold is a bracket between two tested doses."
        ]
        for model in result.models:
            lines.append(f"{model.name}:" if model.axes else model.summary())
            lines += [f"  - {a.axis}: {a.levels_text()}" for a in model.axes]
        if not result.models:
            lines.append(result.empty_text())
        lines += result.gaps()
        lines.append(f"Evidence: {folder / REPORT_FILE} (publish the map with `provenance scan --publish`)")
        answer = "\n".join(lines)
        return {"answer": answer, "messages": [AIMessage(answer)], "scan_dir": str(folder)}

    return tolerance
