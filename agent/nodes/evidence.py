"""`write_evidence`: the run folder is written before anything else can happen — always, even after a failure."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from agent.context import AgentContext
from agent.nodes.failures import Node, publishable
from agent.state import AgentState
from policies import Verdict, overall_verdict
from tools.catalog.calls import calls_of_this_run
from tools.evidence.build import environment, policy_record
from tools.evidence.schema import ChangeRequest, Evidence, PlanRecord, PublicationRecord, new_run_id
from tools.evidence.store import EvidenceError, read_evidence, runs_dir, staging_dir, update_evidence, write_run


def evidence_from_state(ctx: AgentContext, state: AgentState, run_id: str) -> Evidence:
    fc, plan, found = state.field_context, state.plan_record, state.discovery
    mutation = plan.mutation.model_dump(mode="json") if plan and plan.mutation else {}
    if plan and plan.structural:  # a dropped or renamed column: no operator, the change itself
        mutation = {"op": f"column_{plan.structural}"} | ({"renamed_to": plan.renamed_to} if plan.renamed_to else {})
    request = ChangeRequest(
        dataset_urn=fc.dataset_urn if fc else "",
        field=fc.field if fc else "",
        op=str(mutation.get("op", "none")),
        params={k: v for k, v in mutation.items() if k not in ("op", "fraction", "seed")},
        fraction=float(mutation.get("fraction", 1.0)),
        seed=int(mutation.get("seed", 0)),
        question=state.question,
    )
    errors = [f for f in state.failures if f.kind == "error"]
    verdict = state.verdict or Verdict.INCOMPLETE
    reasons = list(state.verdict_reasons)
    if errors:
        verdict = overall_verdict([verdict, Verdict.INCOMPLETE])
        reasons += [f"stage {f.stage} failed: {f.message}" for f in errors]
    catalog = ctx.handle.opened
    return Evidence(
        run_id=run_id,
        request=request,
        catalog=catalog.description if catalog else "catalog not opened",
        dataset_owners=found.dataset.owners if found else [],
        dataset_tags=found.dataset.tags if found else [],
        lineage_precision=found.precision if found else "none",
        datasets_searched=found.datasets_searched if found else [],
        coverage=found.coverage if found else None,
        plan=plan or PlanRecord(planner=ctx.planner.name, mutation=None, description="no plan was made"),
        models=state.model_results,
        not_tested=[] if found is None else _not_tested(found),
        verdict=verdict,
        verdict_reasons=reasons,
        policy=policy_record(ctx.policy),
        tolerance_notes=list(state.tolerance_notes),
        mcp_calls=_calls_of_this_run(),
        environment=environment(),
        failures=state.failures,
        publication=PublicationRecord(
            status="not_requested"
            if state.publish_mode == "no_publish" or not publishable(state)
            else "pending_approval"
        ),
    )


def _not_tested(found: Any) -> list[Any]:
    from tools.experiment.measure import not_tested

    return not_tested(found)


def make_write_evidence(ctx: AgentContext) -> Node:
    async def write_evidence(state: AgentState) -> dict[str, Any]:
        run_id = state.planned_run_id or new_run_id()
        staging = staging_dir(ctx.settings.home, run_id)
        evidence = evidence_from_state(ctx, state, run_id)
        home = ctx.settings.home

        def extra(folder: Path) -> None:
            from tools.evidence.report import write_report

            if staging.is_dir():
                for plot in staging.iterdir():
                    shutil.copy2(plot, folder / plot.name)
            write_report(folder, evidence)

        def persist() -> None:
            if (runs_dir(home) / run_id).is_dir():  # a resumed process re-entering this node
                try:
                    read_evidence(home, run_id)
                    update_evidence(home, evidence, extra)
                except EvidenceError:
                    shutil.rmtree(runs_dir(home) / run_id)
                    write_run(home, evidence, extra)
            else:
                write_run(home, evidence, extra)
            shutil.rmtree(staging, ignore_errors=True)

        # Rendering the report, copying the plots and the fsyncs of an atomic write: ~15 ms of blocking work that
        # would stall every other conversation of the chat on the event loop.
        await asyncio.to_thread(persist)
        return {
            "run_id": run_id,
            "verdict": evidence.verdict,
            "verdict_reasons": evidence.verdict_reasons,
            "publication": evidence.publication,
        }

    return write_evidence


def _calls_of_this_run() -> int | None:
    """Sessions and `provenance assess` open a call collector around the run; a bare graph (`langgraph dev`) has
    none, and its evidence says "not counted" rather than 0."""
    calls = calls_of_this_run()
    return None if calls is None else len(calls)
