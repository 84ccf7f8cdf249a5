"""Recording a conversation: `TraceRecorder` writes each turn of a `Session` into its thread's trace file.

A turn is written when it begins (its input, status "running") and again when it ends, with the chat-model
outputs that `LlmOutputRecorder` (a callback in the run config) collected in call order, the turn's catalog
calls and its outcome, summarised from the graph state and the run's evidence. Recording never breaks a
conversation: a trace that cannot be written is logged as a warning.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import message_to_dict
from langchain_core.outputs import ChatGeneration, LLMResult

from agent.context import AgentContext
from agent.state import AgentState, ApprovalRequest
from agent.traces.schema import (
    LLM_ERROR_TYPE,
    AffectedModelRecord,
    CatalogInfo,
    EvidenceRef,
    ModelOutcome,
    Trace,
    TraceError,
    TraceTurn,
    TurnInput,
    TurnOutcome,
)
from agent.traces.store import locked, read_trace, sha256_file, trace_id_for, trace_path, write_trace
from tools.catalog.calls import ToolCallRecord
from tools.catalog.discovery import Discovery
from tools.evidence.build import environment, policy_record
from tools.evidence.schema import ModelEvidence
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE, EvidenceError, read_evidence, runs_dir
from tools.settings import ProvenanceSettings

log = logging.getLogger(__name__)


def _jsonable(value: Any) -> Any:
    """Plain JSON data (bytes and other odd values in provider metadata become strings)."""
    return json.loads(json.dumps(value, default=str))


class LlmOutputRecorder(BaseCallbackHandler):
    """Collects every chat-model output of one turn, in call order. Pass it in the run config's callbacks."""

    run_inline = True  # called in order, on the caller's thread: the recorded order is the call order
    raise_error = False

    def __init__(self) -> None:
        self.outputs: list[dict[str, Any]] = []

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:  # one list per prompt; the first candidate is the answer
            if generations and isinstance(generations[0], ChatGeneration):
                self.outputs.append(_jsonable(message_to_dict(generations[0].message)))

    def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        message = f"{type(error).__name__}: {error}"
        self.outputs.append({"type": LLM_ERROR_TYPE, "data": {"message": message}})


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def chat_model_label(context: AgentContext) -> str | None:
    model = getattr(context.planner, "model", None)
    if model is None:
        return None
    return str(getattr(model, "model", "") or type(model).__name__)


def _affected(discovery: Discovery | None) -> list[AffectedModelRecord]:
    # The records declare the fields a trace keeps; pydantic reads just those from the discovery's models.
    models = discovery.models if discovery else []
    return [AffectedModelRecord.model_validate(m, from_attributes=True) for m in models]


def _model_outcome(model: ModelEvidence) -> ModelOutcome:
    return ModelOutcome.model_validate(model, from_attributes=True)


def outcome_from_state(settings: ProvenanceSettings, state: AgentState, pending: ApprovalRequest | None) -> TurnOutcome:
    """What a finished turn produced, from the graph state and (when a run was written) its evidence."""
    run_id, models, publication = state.run_id, state.model_results, state.publication
    evidence_ref = None
    if run_id:
        folder = runs_dir(settings.home) / run_id
        policy_sha = None
        try:
            evidence = read_evidence(settings.home, run_id)
            models, policy_sha, publication = evidence.models, evidence.policy.sha256, evidence.publication
        except EvidenceError as exc:
            log.warning("trace: evidence of run %s unreadable: %s", run_id, exc)
        evidence_ref = EvidenceRef(
            run_id=run_id,
            folder=str(folder),
            evidence_sha256=sha256_file(folder / EVIDENCE_FILE),
            report_sha256=sha256_file(folder / REPORT_FILE),
            policy_sha256=policy_sha,
        )
    return TurnOutcome(
        answer=state.answer,
        route=state.route,
        plan=state.plan,
        plan_record=state.plan_record,
        affected_models=_affected(state.discovery),
        models=[_model_outcome(m) for m in models],
        verdict=state.verdict,
        verdict_reasons=list(state.verdict_reasons),
        run_id=run_id,
        evidence=evidence_ref,
        pending=pending,
        publication=publication,
        failures=list(state.failures),
    )


@dataclass
class ActiveTurn:
    """A turn being recorded: where it goes, and the callback collecting its LLM outputs."""

    thread_id: str
    turn: TraceTurn
    callback: LlmOutputRecorder = field(default_factory=LlmOutputRecorder)
    started: float = field(default_factory=time.perf_counter)


class TraceRecorder:
    """Writes a Session's turns into `$PROVENANCE_HOME/traces/` (the Session calls `begin` and `end`)."""

    def __init__(self, settings: ProvenanceSettings, context: AgentContext) -> None:
        self.settings = settings
        self.context = context
        self._environment: dict[str, str] | None = None

    def path(self, thread_id: str) -> Path:
        return trace_path(self.settings.home, thread_id)

    def _catalog_info(self) -> CatalogInfo:
        opened = self.context.handle.opened
        embedded = self.settings.provenance_catalog == "embedded"
        return CatalogInfo(
            kind=self.settings.provenance_catalog,
            description=opened.description if opened else "",
            lite_db=str(self.settings.lite_db) if embedded else None,
            base_dir=str(self.settings.lite_db.parent),
        )

    def _load_or_new(self, thread_id: str) -> Trace:
        path = self.path(thread_id)
        if path.is_file():
            try:
                return read_trace(path)
            except TraceError as exc:
                # Never lose the unreadable file, never stop the conversation for it.
                aside = path.with_name(f"{path.stem}.unreadable-{int(time.time())}.json.bak")
                os.replace(path, aside)
                log.warning("trace %s was unreadable (%s); moved to %s, starting a new trace", path, exc, aside)
        now = _now()
        return Trace(
            trace_id=trace_id_for(thread_id),
            thread_id=thread_id,
            created_at=now,
            updated_at=now,
            planner=self.context.planner.name,
            chat_model=chat_model_label(self.context),
            catalog=self._catalog_info(),
        )

    def _save(self, thread_id: str, update: Any) -> None:
        path = self.path(thread_id)
        with locked(path):
            trace = self._load_or_new(thread_id)
            update(trace)
            trace.updated_at = _now()
            write_trace(path, trace)

    def begin(self, thread_id: str, turn_input: TurnInput) -> ActiveTurn:
        if self._environment is None:
            self._environment = environment()
        turn = TraceTurn(
            index=-1,
            status="running",
            started_at=_now(),
            planner=self.context.planner.name,
            input=turn_input,
            policy=policy_record(self.context.policy),
            environment=self._environment,
        )
        active = ActiveTurn(thread_id, turn)

        def add(trace: Trace) -> None:
            turn.index = len(trace.turns)
            trace.turns.append(turn)

        self._guarded(thread_id, add)
        return active

    def end(
        self,
        active: ActiveTurn,
        calls: list[ToolCallRecord],
        *,
        state: AgentState | None = None,
        pending: ApprovalRequest | None = None,
        error: BaseException | None = None,
    ) -> None:
        turn = active.turn
        turn.finished_at = _now()
        turn.duration_ms = (time.perf_counter() - active.started) * 1e3
        turn.llm_outputs = list(active.callback.outputs)
        turn.catalog_calls = [c.model_copy() for c in calls]
        if error is not None:
            turn.status = "error"
            turn.error = f"{type(error).__name__}: {error}"
        else:
            turn.status = "ok"
            try:
                turn.outcome = outcome_from_state(self.settings, state or AgentState(), pending)
            except Exception as exc:  # a recording problem must not end the conversation
                log.warning("trace: could not summarise turn %s of %s: %s", turn.index, active.thread_id, exc)

        def replace(trace: Trace) -> None:
            trace.catalog = self._catalog_info() if self.context.handle.opened else trace.catalog
            if 0 <= turn.index < len(trace.turns) and trace.turns[turn.index].started_at == turn.started_at:
                trace.turns[turn.index] = turn
            else:  # the trace file was replaced meanwhile: keep the turn anyway
                turn.index = len(trace.turns)
                trace.turns.append(turn)

        self._guarded(active.thread_id, replace)

    def _guarded(self, thread_id: str, update: Any) -> None:
        try:
            self._save(thread_id, update)
        except Exception as exc:
            log.warning("trace %s could not be written: %s: %s", self.path(thread_id), type(exc).__name__, exc)
