"""Conversation traces: every turn of a conversation (CLI or chat), saved as schema-versioned JSON.

`$PROVENANCE_HOME/traces/<trace_id>.json`, one file per conversation thread (the trace id is the thread id, made
safe for a file name), so `provenance resume` in another process appends to the same trace. The file is replaced
atomically when a turn starts (its input, status "running") and when it ends (everything below), so a crash
mid-conversation leaves every finished turn on disk and the interrupted one marked as such.

A turn records, in order of the conversation:
- its input: the user's question (and publish mode), or the approval decision;
- `llm_outputs`: every chat-model output, as `message_to_dict`, captured by a callback's `on_llm_end` (structured
  output calls included); a failed model call is recorded as `{"type": "error", "data": {"message": ...}}`;
- `catalog_calls`: every DataHub MCP call the turn made (tool, arguments, result or error), from
  `CatalogSession.calls` — attributed per turn even when one catalog session serves many threads at once;
- `outcome`: route, plan, the models lineage reached, per-model verdicts and metrics (with their binding and
  hashes), the overall verdict, the pending approval, the publication, failures, the evidence paths and the
  sha256 of evidence.json and report.md;
- the policy (name, version, sha256) and the package versions in force.

`agent.replay` re-runs a trace offline from exactly this record. Recording never breaks a conversation: a trace
that cannot be written is logged as a warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import message_to_dict, messages_from_dict
from langchain_core.outputs import ChatGeneration, LLMResult
from pydantic import BaseModel, ValidationError

from agent.context import AgentContext
from agent.schemas import ExperimentPlan, PlannerName, RouteDecision
from agent.state import ApprovalDecision, ApprovalRequest, PublishMode
from policies.engine import Reason, Verdict
from tools.catalog.discovery import Discovery
from tools.catalog.session import ToolCallRecord
from tools.evidence.build import environment, policy_record
from tools.evidence.schema import (
    BindingRecord,
    ModelEvidence,
    PlanRecord,
    PolicyRecord,
    PublicationRecord,
    StageFailure,
)
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE, EvidenceError, read_evidence, runs_dir
from tools.experiment.metrics import ModelMetrics
from tools.settings import ProvenanceSettings

log = logging.getLogger(__name__)

TRACE_SCHEMA_VERSION = "provenance.trace/1"
TRACES_DIR = "traces"
LLM_ERROR_TYPE = "error"  # the `type` of an llm_outputs entry recording a failed model call


class TraceError(ValueError):
    """A trace that cannot be read (missing, not JSON, another schema, missing fields); the message says which."""


# --- schema ---------------------------------------------------------------------------------------------------


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


# --- files ----------------------------------------------------------------------------------------------------


def traces_dir(home: Path) -> Path:
    return home / TRACES_DIR


def trace_id_for(thread_id: str) -> str:
    """A file-name-safe id: the thread id with anything but letters, digits, '.', '_' and '-' replaced."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", thread_id)[:200]
    return safe if safe and not safe.startswith(".") else f"t{safe}"


def trace_path(home: Path, thread_id: str) -> Path:
    return traces_dir(home) / f"{trace_id_for(thread_id)}.json"


def sha256_file(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _write_atomically(path: Path, data: bytes) -> None:
    from tools.evidence.store import _write_file_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    _write_file_atomically(path, data)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Serialise read-modify-write of one trace between processes (CLI resume while the chat runs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX: atomic replace only
        yield
        return
    with open(path.with_name(f".{path.name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def write_trace(path: Path, trace: Trace) -> None:
    _write_atomically(path, trace.model_dump_json(indent=1).encode())


def parse_trace(data: bytes, where: str) -> Trace:
    """Validate a trace file's bytes; every problem becomes a TraceError naming `where` (never a traceback)."""
    try:
        raw = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TraceError(f"{where} is not valid JSON ({exc}); it is not a readable Provenance trace") from None
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


def read_trace(path: Path) -> Trace:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TraceError(f"cannot read trace {path}: {exc.strerror or exc}") from None
    return parse_trace(data, str(path))


def find_trace(home: Path, ref: str | Path) -> Path:
    """A trace file from a path or a trace/thread id (looked up under $PROVENANCE_HOME/traces)."""
    candidate = Path(ref).expanduser()
    if candidate.is_file():
        return candidate
    for name in (str(ref), trace_id_for(str(ref))):
        path = traces_dir(home) / (name if name.endswith(".json") else f"{name}.json")
        if path.is_file():
            return path
    known = ", ".join(p.stem for p in sorted_trace_files(home)[-5:]) or "none"
    raise TraceError(
        f"no trace {str(ref)!r}: not a file, and not a trace id under {traces_dir(home)} (recent: {known})"
    )


def sorted_trace_files(home: Path) -> list[Path]:
    folder = traces_dir(home)
    if not folder.is_dir():
        return []
    files = [p for p in folder.glob("*.json") if not p.name.startswith(".")]
    return sorted(files, key=lambda p: (p.stat().st_mtime, p.name))


@dataclass
class TraceListing:
    path: Path
    trace: Trace | None
    error: str | None = None


def list_traces(home: Path) -> list[TraceListing]:
    """Every trace file, oldest first; an unreadable one is listed with its error, not skipped."""
    listings = []
    for path in sorted_trace_files(home):
        try:
            listings.append(TraceListing(path, read_trace(path)))
        except TraceError as exc:
            listings.append(TraceListing(path, None, str(exc)))
    return listings


# --- recording ------------------------------------------------------------------------------------------------


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


def _affected(discovery: Any) -> list[AffectedModelRecord]:
    if not isinstance(discovery, Discovery):
        return []
    return [
        AffectedModelRecord(
            urn=m.urn,
            name=m.name,
            production=m.production,
            production_evidence=m.production_evidence,
            tags=m.tags,
            owners=m.owners,
            custom_properties=m.custom_properties,
        )
        for m in discovery.models
    ]


def _model_outcome(model: ModelEvidence) -> ModelOutcome:
    return ModelOutcome(
        urn=model.urn,
        name=model.name,
        verdict=model.verdict,
        reasons=model.reasons,
        feature_column=model.feature_column,
        metrics=model.metrics,
        binding=model.binding,
    )


def outcome_from_values(settings: ProvenanceSettings, values: dict[str, Any], pending: Any) -> TurnOutcome:
    """What a finished turn produced, from the graph state and (when a run was written) its evidence."""
    run_id = values.get("run_id")
    models = [m for m in values.get("model_results") or [] if isinstance(m, ModelEvidence)]
    evidence_ref = None
    publication = values.get("publication")
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
        answer=str(values.get("answer") or ""),
        route=values.get("route"),
        plan=values.get("plan"),
        plan_record=values.get("plan_record"),
        affected_models=_affected(values.get("discovery")),
        models=[_model_outcome(m) for m in models],
        verdict=values.get("verdict"),
        verdict_reasons=list(values.get("verdict_reasons") or []),
        run_id=run_id,
        evidence=evidence_ref,
        pending=pending,
        publication=publication if isinstance(publication, PublicationRecord) else None,
        failures=[f for f in values.get("failures") or [] if isinstance(f, StageFailure)],
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
        with _locked(path):
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
        values: dict[str, Any] | None = None,
        pending: Any = None,
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
                turn.outcome = outcome_from_values(self.settings, values or {}, pending)
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
