"""The human gate and the write-back. `approval` is the only way to reach `publish`, and `publish_run` is the only
code that opens a catalog writer session."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from langgraph.types import Command, interrupt
from pydantic import ValidationError

from agent.claims import run_claim
from agent.context import AgentContext
from agent.nodes.failures import Node
from agent.plan_sentence import change_tested, checked_plan, dataset_name
from agent.state import AgentState, ApprovalDecision, ApprovalRequest
from tools.catalog.session import CatalogError
from tools.evidence.build import refresh_run
from tools.evidence.schema import Evidence, PublicationRecord
from tools.evidence.store import REPORT_FILE, read_evidence, runs_dir
from tools.evidence.writeback import planned_writes, publish_evidence


def parse_decision(raw: Any) -> ApprovalDecision:
    """Anything but an explicit, well-formed approval is a rejection: no write without consent."""
    try:
        if isinstance(raw, str):
            return ApprovalDecision(decision=raw)  # type: ignore[arg-type]
        return ApprovalDecision.model_validate(raw)
    except ValidationError:
        return ApprovalDecision(decision="reject", comment=f"unrecognised approval answer {raw!r} treated as reject")


class ApprovalNode(Protocol):
    def __call__(self, state: AgentState) -> Command[Literal["publish", "respond"]]: ...


def make_approval(ctx: AgentContext) -> ApprovalNode:
    def approval(state: AgentState) -> Command[Literal["publish", "respond"]]:
        assert state.run_id is not None and state.verdict is not None
        if state.publish_mode == "no_publish":
            return Command(goto="respond")
        evidence = read_evidence(ctx.settings.home, state.run_id)
        plan = checked_plan(state.plan, state.plan_record.mutation if state.plan_record else evidence.plan.mutation)
        target = f"{dataset_name(evidence.request.dataset_urn)}.{evidence.request.field}"
        request = ApprovalRequest(
            run_id=state.run_id,
            verdict=state.verdict,
            change_tested=change_tested(plan, target),
            models={m.urn: m.verdict for m in evidence.models},
            writes=planned_writes(evidence),
            report=str(runs_dir(ctx.settings.home) / state.run_id / REPORT_FILE),
            question=state.question,
        )
        decision = parse_decision(interrupt(request.model_dump(mode="json")))
        if decision.decision == "approve":
            return Command(update={"approval": decision}, goto="publish")
        evidence.publication = PublicationRecord(
            status="rejected", decided_by=decision.by, message=decision.comment or "publication rejected by a person"
        )
        refresh_run(ctx.settings.home, evidence)
        return Command(update={"approval": decision, "publication": evidence.publication}, goto="respond")

    return approval


def make_publish(ctx: AgentContext) -> Node:
    async def publish(state: AgentState) -> dict[str, Any]:
        assert state.run_id is not None and state.approval is not None and state.approval.decision == "approve"
        return {"publication": await publish_run(ctx, state.run_id, decided_by=state.approval.by)}

    return publish


async def publish_run(ctx: AgentContext, run_id: str, *, decided_by: str) -> PublicationRecord:
    """Write back one run's verdict and record the outcome in its evidence (also `provenance publish`).

    Under the run's claim (agent/claims.py), so one run is published by one process at a time; a run whose
    evidence already says `published` (by another process, or an earlier call) is returned as it is, unwritten."""
    async with run_claim(ctx.settings, run_id):
        evidence = read_evidence(ctx.settings.home, run_id)
        if evidence.publication.status == "published":
            return evidence.publication
        return await _publish(ctx, evidence, decided_by)


async def _publish(ctx: AgentContext, evidence: Evidence, decided_by: str) -> PublicationRecord:
    home = ctx.settings.home
    report = (runs_dir(home) / evidence.run_id / REPORT_FILE).read_text()
    try:
        # Reads (current tags, a document saved by an earlier attempt) go through the reader session; the writes
        # through a writer session (mutations on) opened for this publication only and closed right after it.
        reader = await ctx.handle.reader()
        async with ctx.handle.writing() as writer:
            record = await publish_evidence(reader, writer, evidence, report, decided_by)
    except CatalogError as exc:  # the catalog (or its writer session) could not even be opened
        record = evidence.publication.model_copy(
            update={"status": "failed", "message": str(exc), "attempts": evidence.publication.attempts + 1}
        )
    evidence.publication = record
    refresh_run(home, evidence)
    return record
