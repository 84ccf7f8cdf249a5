"""The agent's state. Small and typed; every field says who writes it. Heavy data (frames, scores, plots)
never enters the state: it lives in the run folder, and the state keeps the run id."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, Field

from agent.schemas import ExperimentPlan, FieldContext, FieldTarget, RouteDecision
from policies import Verdict
from tools.catalog.discovery import Discovery
from tools.evidence.schema import ModelEvidence, PlanRecord, PublicationRecord, StageFailure

PublishMode = Literal["ask", "no_publish"]


class ApprovalRequest(BaseModel):
    """What the approval interrupt shows a person: the change tested, the verdict and exactly what would be written
    where."""

    run_id: str
    verdict: Verdict
    change_tested: str = Field(
        default="",
        description="the experiment in one plain sentence (agent/plan_sentence.py): the change, the share of rows, "
        "the rationale and the assumptions; empty in checkpoints and traces written before it existed",
    )
    models: dict[str, Verdict] = Field(description="model urn -> its verdict")
    writes: list[str] = Field(description="every catalog write that approval would perform")
    report: str = Field(description="path of report.md")
    question: str


class ApprovalDecision(BaseModel):
    decision: Literal["approve", "reject"]
    by: str = "unknown"
    comment: str = ""


@dataclass(kw_only=True)
class AgentState:
    messages: Annotated[list[AnyMessage], add_messages] = field(default_factory=list)
    """The conversation. Written by the caller (user turns) and by `respond` (answers); add_messages merges."""

    publish_mode: PublishMode = "ask"
    """Set by the caller: `no_publish` skips the approval gate and never writes to the catalog."""

    question: str = ""
    """The current turn's user text. Written by `route` (copied from the last human message)."""

    confirmed_from: str | None = None
    """Written by `route`: the previous turn's refused request, when this turn's text is one of the requests its
    refusal suggested (the person chose it)."""

    route: RouteDecision | None = None
    """Written by `route`: intent and subject, proposed by the planner and validated by code."""

    field_context: FieldContext | None = None
    """Written by `gather_context`: the resolved dataset URN + field and their DataHub facts."""

    discovery: Discovery | None = None
    """Written by `discover`: affected features and models with lineage paths."""

    plan: ExperimentPlan | None = None
    """Written by `plan`: the planner's proposal, already validated against the allowlist."""

    plan_record: PlanRecord | None = None
    """Written by `plan`: the validated mutation as recorded in the evidence."""

    published_tolerance: list[str] = field(default_factory=list)
    """Written by `gather_context`: the field's `io.provenance.tolerance` values, as an earlier scan published them."""

    tolerance_notes: list[str] = field(default_factory=list)
    """Written by `plan`: the models whose published tolerance this change reaches (the experiment still decides)."""

    model_results: list[ModelEvidence] = field(default_factory=list)
    """Written by the experiment subgraph: per production model metrics, verdict and reasons."""

    verdict: Verdict | None = None
    """Written by the experiment subgraph (`judge`), from the policy only."""

    verdict_reasons: list[str] = field(default_factory=list)
    """Written by `judge`: one line per model, or why there was nothing to test."""

    target: FieldTarget | None = None
    """Given with a turn's input by a front end that names the field exactly (agent/assessment.py); a conversation
    never sets it, and the route node keeps it: `gather_context` uses it instead of resolving the route's subject."""

    planned_run_id: str | None = None
    """Written by `plan` (by `measure` when no plan node ran): the id `write_evidence` writes the run under, chosen
    and checkpointed before the experiment starts; plots are staged in `staging_dir(home, planned_run_id)`."""

    run_id: str | None = None
    """Written by `write_evidence`."""

    approval: ApprovalDecision | None = None
    """Written by `approval` from the person's resume value."""

    publication: PublicationRecord | None = None
    """Written by `approval` (rejected) and `publish` (published / failed)."""

    failures: list[StageFailure] = field(default_factory=list)
    """Written by any node that failed: the stage and the message. Evidence still gets written."""

    scan_dir: str | None = None
    """Written by `tolerance`: the scan's evidence folder (scans/<id>/), whose plots the chat shows."""

    answer: str = ""
    """Written by `respond` and the catalog Q&A node: the text shown to the user."""


def state_from_values(values: Mapping[str, Any] | None) -> AgentState:
    """The typed state from LangGraph's channel values (a fresh thread has none: the defaults)."""
    known = {f.name for f in fields(AgentState)}
    return AgentState(**{k: v for k, v in (values or {}).items() if k in known})


TURN_RESET: dict[str, Any] = {
    "confirmed_from": None,
    "route": None,
    "field_context": None,
    "discovery": None,
    "plan": None,
    "plan_record": None,
    "published_tolerance": [],
    "tolerance_notes": [],
    "model_results": [],
    "verdict": None,
    "verdict_reasons": [],
    "planned_run_id": None,
    "run_id": None,
    "approval": None,
    "publication": None,
    "failures": [],
    "scan_dir": None,
    "answer": "",
}
"""Per-turn fields cleared by `route` so one conversation can hold many assessments."""
