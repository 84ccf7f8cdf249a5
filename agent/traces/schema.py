"""The records of a trace (`provenance.trace/1`) and `parse_trace`, which validates a trace file's bytes.

Every problem with a trace (not JSON, another schema, missing or mistyped fields, an LLM output that is not a
recorded chat message) becomes a `TraceError` that names the file; never a traceback.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from langchain_core.messages import messages_from_dict
from pydantic import BaseModel, ValidationError

from agent.schemas import ExperimentPlan, PlannerName, RouteDecision
from agent.state import ApprovalDecision, ApprovalRequest, PublishMode
from policies import ModelMetrics, Reason, TaskName, Verdict
from tools.catalog.calls import ToolCallRecord
from tools.errors import BadRequest
from tools.evidence.schema import BindingRecord, PlanRecord, PolicyRecord, PublicationRecord, StageFailure

TRACE_SCHEMA_VERSION = "provenance.trace/1"
LLM_ERROR_TYPE = "error"  # the `type` of an llm_outputs entry recording a failed model call


class TraceError(BadRequest, ValueError):
    """A trace that cannot be read (missing, not JSON, another schema, missing fields); the message says which."""


class CatalogInfo(BaseModel):
    kind: Literal["embedded", "datahub"]
    description: str = ""  # filled once the catalog was opened, e.g. "embedded DataHub Lite catalog /x/catalog.db"
    lite_db: str | None = None  # the Lite file (embedded catalogs)
    base_dir: str  # where relative binding URIs resolve (the catalog file's folder)


class TurnInput(BaseModel):
    kind: Literal["ask", "decide"]
    question: str | None = None  # ask
    publish_mode: PublishMode | None = None  # ask
    decision: ApprovalDecision | None = None  # decide


class AffectedModelRecord(BaseModel):
    """A model lineage reached, as the catalog described it then (what `--live` compares against)."""

    urn: str
    name: str
    production: bool
    production_evidence: str
    tags: list[str] = []
    owners: list[str] = []
    custom_properties: dict[str, str] = {}


class ModelOutcome(BaseModel):
    urn: str
    name: str
    verdict: Verdict
    reasons: list[Reason] = []
    feature_column: str | None = None
    task: TaskName | None = None  # what the model was measured as (None: not loaded, or recorded before tasks)
    metrics: ModelMetrics | None = None
    binding: BindingRecord | None = None


class EvidenceRef(BaseModel):
    run_id: str
    folder: str
    evidence_sha256: str | None = None  # None: the file was not there when the turn ended
    report_sha256: str | None = None
    policy_sha256: str | None = None  # as written in evidence.json


class TurnOutcome(BaseModel):
    answer: str = ""
    route: RouteDecision | None = None
    plan: ExperimentPlan | None = None
    plan_record: PlanRecord | None = None
    affected_models: list[AffectedModelRecord] = []
    models: list[ModelOutcome] = []
    verdict: Verdict | None = None
    verdict_reasons: list[str] = []
    run_id: str | None = None
    evidence: EvidenceRef | None = None
    pending: ApprovalRequest | None = None
    publication: PublicationRecord | None = None
    failures: list[StageFailure] = []


class TraceTurn(BaseModel):
    index: int
    status: Literal["running", "ok", "error"]  # running: the process stopped before the turn ended
    started_at: str
    finished_at: str | None = None
    duration_ms: float | None = None
    planner: PlannerName
    input: TurnInput
    llm_outputs: list[dict[str, Any]] = []
    catalog_calls: list[ToolCallRecord] = []
    outcome: TurnOutcome | None = None
    error: str | None = None  # the exception that ended the turn (status "error")
    policy: PolicyRecord
    environment: dict[str, str] = {}


class Trace(BaseModel):
    schema_version: Literal["provenance.trace/1"] = "provenance.trace/1"
    trace_id: str
    thread_id: str
    created_at: str
    updated_at: str
    planner: PlannerName  # of the first turn; each turn records its own
    chat_model: str | None = None  # the chat model's name when an LLM planned
    catalog: CatalogInfo
    turns: list[TraceTurn] = []

    @property
    def question(self) -> str:
        return next((t.input.question or "" for t in self.turns if t.input.kind == "ask"), "")

    @property
    def last_outcome(self) -> TurnOutcome | None:
        return next((t.outcome for t in reversed(self.turns) if t.outcome is not None), None)

    @property
    def verdict(self) -> Verdict | None:
        return next((t.outcome.verdict for t in reversed(self.turns) if t.outcome and t.outcome.verdict), None)

    @property
    def publication_status(self) -> str:
        """published / rejected / failed / pending_approval / not_requested, or "-" when no run was made."""
        for turn in reversed(self.turns):
            if turn.outcome and turn.outcome.publication:
                return turn.outcome.publication.status
        return "-"


def parse_trace(data: bytes, where: str) -> Trace:
    """Validate a trace file's bytes; every problem becomes a TraceError naming `where` (never a traceback)."""
    try:
        raw = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TraceError(f"{where} is not valid JSON ({exc}); it is not a readable Provenance trace") from None
    except RecursionError:
        raise TraceError(f"{where} is nested deeper than any Provenance trace; it is not a readable trace") from None
    if not isinstance(raw, dict):
        raise TraceError(f"{where} holds a JSON {type(raw).__name__}, not a Provenance trace object")
    version = raw.get("schema_version")
    if version is None:
        raise TraceError(f"{where} has no schema_version; it is not a Provenance trace ({TRACE_SCHEMA_VERSION})")
    if version != TRACE_SCHEMA_VERSION:
        raise TraceError(f"{where} has schema {version!r}; this Provenance reads {TRACE_SCHEMA_VERSION}")
    try:
        trace = Trace.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '(root)'}: {error['msg']}" for error in exc.errors()[:3]
        )
        more = f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
        raise TraceError(f"{where} does not match {TRACE_SCHEMA_VERSION}: {problems}{more}") from None
    for t, turn in enumerate(trace.turns):
        if turn.input.kind == "ask" and turn.input.question is None:
            raise TraceError(f"{where} does not match {TRACE_SCHEMA_VERSION}: turns.{t}.input.question is missing")
        if turn.input.kind == "decide" and turn.input.decision is None:
            raise TraceError(f"{where} does not match {TRACE_SCHEMA_VERSION}: turns.{t}.input.decision is missing")
        for n, output in enumerate(turn.llm_outputs):
            if output.get("type") == LLM_ERROR_TYPE:
                continue
            try:
                messages_from_dict([output])
            except Exception as exc:  # langchain raises KeyError/ValueError/ValidationError for bad dicts
                raise TraceError(
                    f"{where} does not match {TRACE_SCHEMA_VERSION}: turns.{t}.llm_outputs.{n} is not a "
                    f"recorded chat message ({type(exc).__name__}: {exc})"
                ) from None
    return trace
