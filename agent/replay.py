"""Replaying a recorded conversation (agent/traces.py) to check that its verdicts still reproduce.

Algorithm (`areplay_trace`; `replay_trace` is the blocking form for the CLI):

1. Read the trace (a path or a trace id); a corrupt or foreign file is a `TraceError`.
2. Build a fresh session in a separate PROVENANCE_HOME (a temporary folder unless `home=` is given), so the
   replay's checkpoints, runs and its own trace never touch the user's. Binding URIs resolve against the
   recorded catalog folder, so the experiment loads the recorded artifacts and evaluation data, sha256-verified
   against the (recorded) catalog answer as always. The policy is loaded from the recorded path and its sha256
   compared with the recorded one.
3. Feed the recorded turns in order, on the recorded thread id: questions through `Session.ask`, approval
   decisions through `Session.decide`. For each turn:
   - the planner: the deterministic planner if the turn recorded one, else `LlmPlanner` (named "replay") over a
     `ReplayChatModel` that answers with the turn's recorded LLM outputs in order (a recorded model failure is
     raised again; running out of outputs is an error);
   - the catalog: offline, a `ReplayCatalogSession` answers each MCP call with the recorded result for the same
     tool and arguments (in recorded order per tool+arguments); a call the recording does not have is an error
     naming it. With `live=True`, the current catalog answers through a real MCP session instead (and
     binding URIs resolve against the current catalog's folder).
   - writes: never. Both catalogs refuse the write tools and hand out no writer, so an approved publication
     becomes "skipped in replay" (the decision itself is replayed as recorded).
   The experiment and the policy run for real. A turn that had not finished when recorded (a crash, a cancelled
   chat) is replayed so the thread reaches the same state, but there is nothing to compare it with.
4. Compare each replayed turn with the recorded one: route, validated plan, failures (stage and kind),
   pending approval, overall verdict, and per model (matched by URN) the verdict, reason codes, binding
   (paths and sha256s) and every metric. Integers and strings must be equal; floats must agree within
   `FLOAT_ABS_TOL` absolute or `FLOAT_REL_TOL` relative (both 1e-9; the same code on the same data gives
   identical floats — the tolerance only absorbs last-bit differences from another BLAS or numpy build). The
   artifact and evaluation files at the recorded paths are hashed again and a changed sha256 is reported.
   `--live` additionally reports what changed in the catalog: new or vanished downstream models, production
   status, tags, owners and properties, and which catalog answers differ.

`ReplayReport.reproduced` is True when there is no difference; `render()` explains the outcome for a person.
Package-version changes, a publication skipped in replay and evidence files changed since the recording are
notes, not differences.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import shutil
import tempfile
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, messages_from_dict
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from agent.context import AgentContext, CatalogHandle, DeterministicPlanner, TappedCalls
from agent.conversation import open_session
from agent.fakes import FakeToolChatModel
from agent.llm import LlmPlanner
from agent.traces import (
    LLM_ERROR_TYPE,
    AffectedModelRecord,
    ModelOutcome,
    Trace,
    TraceError,
    TraceTurn,
    find_trace,
    read_trace,
    sha256_file,
    trace_path,
)
from policies.engine import LoadedPolicy, PolicyError, load_policy
from tools.catalog.connection import Catalog
from tools.catalog.datahub import CatalogWriter
from tools.catalog.session import (
    READ_TOOLS,
    WRITE_TOOLS,
    CatalogError,
    CatalogSession,
    CatalogToolError,
    ToolCallRecord,
)
from tools.evidence.build import environment
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE
from tools.experiment.metrics import ModelMetrics
from tools.settings import ProvenanceSettings

FLOAT_ABS_TOL = 1e-9
FLOAT_REL_TOL = 1e-9
REPLAY_SKIPPED = "skipped in replay"
_MAX_CALL_DIFFS = 6


class ReplayWriteRefused(CatalogError):
    """A replay asked to write to the catalog; replays never write."""

    def __init__(self, what: str) -> None:
        super().__init__(f"publication {REPLAY_SKIPPED}: a replay never writes to the catalog ({what} refused)")


# --- the recorded model and catalog ---------------------------------------------------------------------------


class ReplayChatModel(FakeToolChatModel):
    """Answers each call with the next recorded output (`message_to_dict` form); a recorded error is raised."""

    script: list[dict[str, Any]] = Field(default_factory=list)
    position: int = 0

    @classmethod
    def from_outputs(cls, outputs: list[dict[str, Any]]) -> ReplayChatModel:
        return cls(messages=iter([]), script=list(outputs))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        if self.position >= len(self.script):
            self.position += 1
            raise RuntimeError(
                f"the recording has {len(self.script)} LLM output(s) for this turn; the replay asked for one more"
            )
        item = self.script[self.position]
        self.position += 1
        if item.get("type") == LLM_ERROR_TYPE:
            raise RuntimeError(f"recorded model failure: {item.get('data', {}).get('message', '')}")
        message = messages_from_dict([item])[0]
        if not isinstance(message, AIMessage):
            raise RuntimeError(f"recorded LLM output {self.position} is a {message.type} message, not an AI message")
        return ChatResult(generations=[ChatGeneration(message=message)])


def _key(tool: str, arguments: dict[str, Any]) -> str:
    return f"{tool} {json.dumps(arguments, sort_keys=True, default=str)}"


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ReplayCatalogSession(CatalogSession):
    """Stands in for the MCP session: answers from one turn's recorded calls, by tool and arguments, in order."""

    def __init__(self) -> None:
        super().__init__({}, 0.0)
        self.calls = TappedCalls()
        self._queues: dict[str, deque[ToolCallRecord]] = {}
        self.misses: list[str] = []

    @property
    def tool_names(self) -> list[str]:
        return sorted(READ_TOOLS)

    def load(self, records: Iterable[ToolCallRecord]) -> None:
        """The next turn's recording (what was left of the previous turn is dropped)."""
        self._queues = {}
        self.misses = []
        for record in records:
            self._queues.setdefault(_key(record.tool, record.arguments), deque()).append(record)

    def unused(self) -> list[ToolCallRecord]:
        return [record for queue in self._queues.values() for record in queue if record.tool not in WRITE_TOOLS]

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        if name in WRITE_TOOLS:
            raise ReplayWriteRefused(f"{name}")
        queue = self._queues.get(_key(name, arguments))
        if not queue:
            what = f"{name} {_short(json.dumps(arguments, sort_keys=True, default=str))}"
            self.misses.append(what)
            raise CatalogError(f"replay: catalog call not in the recording: {what}")
        record = queue.popleft()
        self.calls.append(record.model_copy(update={"duration_ms": 0.0}))
        if not record.ok:
            raise CatalogToolError(name, record.error or "recorded failure")
        return copy.deepcopy(record.result)


class ReplayCatalogHandle(CatalogHandle):
    """The offline catalog of a replay: no endpoint, no MCP server, no writer."""

    def __init__(self, settings: ProvenanceSettings, description: str) -> None:
        super().__init__(settings)
        self.session = ReplayCatalogSession()
        self._recorded = Catalog(self.session, None, f"replay of: {description or 'recorded catalog'}", 0.0)

    async def get(self) -> Catalog:
        self._catalog = self._recorded
        return self._recorded

    async def writer(self) -> CatalogWriter:
        raise ReplayWriteRefused("catalog writer")


class ReadOnlySession(CatalogSession):
    """A real MCP session with the write tools refused (`--live`)."""

    def __init__(self, inner: CatalogSession) -> None:
        super().__init__({name: inner.tool(name) for name in inner.tool_names}, inner.startup_seconds)
        self.inner = inner
        self.calls = inner.calls

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        if name in WRITE_TOOLS:
            raise ReplayWriteRefused(name)
        return await self.inner.call(name, arguments)


class ReadOnlyCatalogHandle(CatalogHandle):
    """The current catalog, read-only: the live replay's catalog."""

    async def get(self) -> Catalog:
        catalog = await super().get()
        if not isinstance(catalog.session, ReadOnlySession):
            catalog.session = ReadOnlySession(catalog.session)
        return catalog

    async def writer(self) -> CatalogWriter:
        raise ReplayWriteRefused("catalog writer")


# --- the report -----------------------------------------------------------------------------------------------


@dataclass
class Difference:
    turn: int | None  # None: the whole trace (policy, files)
    subject: str  # e.g. "model fraud_detector · metric flip_rate"
    recorded: str
    now: str

    def line(self) -> str:
        where = f"turn {self.turn} · " if self.turn is not None else ""
        return f"{where}{self.subject}: recorded {self.recorded}, now {self.now}"


@dataclass
class TurnSummary:
    index: int
    label: str  # "ask: <question>" / "decide: approve by …"
    recorded: str  # e.g. "BLOCK, approval requested"
    now: str


@dataclass
class ReplayReport:
    trace_id: str
    source: Path
    live: bool
    home: Path | None  # where the replay's evidence was kept; None when it was temporary and is gone
    turns: list[TurnSummary] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    catalog_changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return not self.differences

    @property
    def exit_code(self) -> int:
        return 0 if self.reproduced else 1

    def render(self) -> str:
        mode = (
            "live: the current catalog through MCP, recorded LLM outputs, no writes"
            if self.live
            else "offline: recorded catalog answers and LLM outputs, no MCP server, no API key, no writes"
        )
        lines = [f"Replay of trace {self.trace_id} ({self.source})", f"Mode: {mode}"]
        for turn in self.turns:
            same = "" if turn.recorded == turn.now else f" (recorded: {turn.recorded})"
            lines.append(f"  turn {turn.index} {turn.label} → {turn.now}{same}")
        tolerance = f"floats within {FLOAT_ABS_TOL:g} absolute or {FLOAT_REL_TOL:g} relative"
        if self.reproduced:
            lines.append(f"REPRODUCED: verdicts and metrics match the recording ({tolerance}).")
        else:
            lines.append(f"NOT REPRODUCED: {len(self.differences)} difference(s) ({tolerance}):")
            lines += [f"  - {d.line()}" for d in self.differences]
        if self.live:
            if self.catalog_changes:
                lines.append("What changed in the catalog since the recording:")
                lines += [f"  - {c}" for c in self.catalog_changes]
            else:
                lines.append("The catalog answered as recorded.")
        if self.notes:
            lines.append("Notes:")
            lines += [f"  - {n}" for n in self.notes]
        lines.append(
            f"Replay evidence: {self.home}" if self.home else "Replay evidence: written to a temporary home, removed."
        )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "source": str(self.source),
            "live": self.live,
            "reproduced": self.reproduced,
            "home": str(self.home) if self.home else None,
            "turns": [vars(t) for t in self.turns],
            "differences": [vars(d) for d in self.differences],
            "catalog_changes": self.catalog_changes,
            "notes": self.notes,
            "tolerance": {"abs": FLOAT_ABS_TOL, "rel": FLOAT_REL_TOL},
        }


# --- comparison -----------------------------------------------------------------------------------------------


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=FLOAT_REL_TOL, abs_tol=FLOAT_ABS_TOL)


def same(a: Any, b: Any) -> bool:
    """Deep equality with the float tolerance (ints and bools compare exactly)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, int | float) and isinstance(b, int | float) and close(float(a), float(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _fmt(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return value
    return _short(json.dumps(value, sort_keys=True, default=str), 200)


def _turn_label(turn: TraceTurn) -> str:
    if turn.input.kind == "ask":
        return f'ask "{_short(turn.input.question or "", 80)}"'
    decision = turn.input.decision
    return f"decide {decision.decision} (by {decision.by})" if decision else "decide"


def _turn_state(turn: TraceTurn) -> str:
    if turn.status != "ok" or turn.outcome is None:
        return f"error: {_short(turn.error or 'no outcome', 120)}"
    out = turn.outcome
    parts = []
    if out.verdict:
        parts.append(str(out.verdict))
    elif out.route:
        parts.append(f"answered ({out.route.intent})")
    if out.failures:
        parts.append("failed at " + ", ".join(f.stage for f in out.failures))
    if out.pending:
        parts.append("approval requested")
    elif out.publication and turn.input.kind == "decide":
        status = out.publication.status
        parts.append(f"publication {REPLAY_SKIPPED}" if _skipped(out.publication.message) else f"publication {status}")
    return ", ".join(parts) or "answered"


def _skipped(message: str | None) -> bool:
    return bool(message and REPLAY_SKIPPED in message)


class Comparer:
    def __init__(self, live: bool) -> None:
        self.live = live
        self.differences: list[Difference] = []
        self.catalog_changes: list[str] = []
        self.notes: list[str] = []

    def diff(self, turn: int | None, subject: str, recorded: Any, now: Any) -> None:
        found = Difference(turn, subject, _fmt(recorded), _fmt(now))
        # A decision turn carries the assessment of the turn before it: report a difference once.
        if not any(
            (d.subject, d.recorded, d.now) == (found.subject, found.recorded, found.now) for d in self.differences
        ):
            self.differences.append(found)

    def note(self, turn: int, text: str) -> None:
        if not any(n.split(": ", 1)[-1] == text for n in self.notes if n.startswith("turn ")):
            self.notes.append(f"turn {turn}: {text}")

    def change(self, turn: int, text: str) -> None:
        if not any(c.split(": ", 1)[1] == text for c in self.catalog_changes):
            self.catalog_changes.append(f"turn {turn}: {text}")

    def check(self, turn: int, subject: str, recorded: Any, now: Any) -> None:
        if not same(recorded, now):
            self.diff(turn, subject, recorded, now)

    def turn(self, rec: TraceTurn, now: TraceTurn) -> None:
        i = rec.index
        if rec.status == "error" and now.status == "error":
            recorded_kind, now_kind = (rec.error or "").split(":")[0], (now.error or "").split(":")[0]
            self.check(i, "turn error", recorded_kind, now_kind)
            return
        if rec.status != "ok":
            # Interrupted from outside the graph (a crash, a cancelled chat, a failing UI hook): there is no
            # recorded outcome to compare; the replay ran the turn so the thread reaches the same state.
            why = rec.error or "the process stopped before the turn ended"
            self.note(
                i, f"not compared: the recorded turn did not finish ({_short(why, 120)}); replay: {_turn_state(now)}"
            )
            return
        if now.status != "ok":
            self.diff(i, "turn status", "ok", f"{now.status} {now.error or ''}".strip())
            return
        ro, no = rec.outcome, now.outcome
        if ro is None or no is None:
            if (ro is None) != (no is None):
                self.diff(i, "turn outcome", "recorded" if ro else "missing", "recorded" if no else "missing")
            return
        if ro.route or no.route:
            for name in ("intent", "subject", "change"):
                self.check(i, f"route {name}", getattr(ro.route, name, None), getattr(no.route, name, None))
        rp, np_ = ro.plan_record, no.plan_record
        self.check(i, "plan mutation", rp.mutation if rp else None, np_.mutation if np_ else None)
        self.check(i, "plan description", rp.description if rp else None, np_.description if np_ else None)
        self.check(
            i,
            "failed stages",
            [f"{f.stage}/{f.kind}" for f in ro.failures],
            [f"{f.stage}/{f.kind}" for f in no.failures],
        )
        if [f.stage for f in ro.failures] != [f.stage for f in no.failures] and no.failures:
            self.note(i, "replay failure messages: " + " | ".join(_short(f.message) for f in no.failures))
        self.check(i, "overall verdict", ro.verdict, no.verdict)
        self.check(i, "approval requested", ro.pending is not None, no.pending is not None)
        if ro.pending and no.pending:
            self.check(i, "approval models", dict(ro.pending.models), dict(no.pending.models))
        self._models(i, ro.models, no.models)
        self._publication(rec, now)
        self._affected(i, ro.affected_models, no.affected_models)

    def _publication(self, rec: TraceTurn, now: TraceTurn) -> None:
        assert rec.outcome is not None and now.outcome is not None
        rp, np_ = rec.outcome.publication, now.outcome.publication
        if np_ is not None and _skipped(np_.message):
            self.notes.append(
                f"turn {rec.index}: the recorded decision was replayed; publication {REPLAY_SKIPPED} "
                f"(recorded: {rp.status if rp else 'none'})"
            )
            return
        self.check(rec.index, "publication status", rp.status if rp else None, np_.status if np_ else None)

    def _models(self, i: int, recorded: list[ModelOutcome], now: list[ModelOutcome]) -> None:
        by_urn = {m.urn: m for m in now}
        for rec in recorded:
            cur = by_urn.pop(rec.urn, None)
            if cur is None:
                self.diff(i, f"model {rec.name} ({rec.urn})", f"tested, {rec.verdict}", "not tested")
                continue
            subject = f"model {rec.name}"
            self.check(i, f"{subject} · verdict", str(rec.verdict), str(cur.verdict))
            self.check(i, f"{subject} · reasons", [r.code for r in rec.reasons], [r.code for r in cur.reasons])
            if rec.verdict != cur.verdict:
                worst = [r.message for r in cur.reasons if r.severity == cur.verdict]
                if worst:
                    self.note(i, f"{rec.name} is {cur.verdict} now because: {_short(worst[0], 300)}")
            self._metrics(i, subject, rec.metrics, cur.metrics)
            if rec.binding or cur.binding:
                for name in (
                    "artifact_path",
                    "artifact_sha256_expected",
                    "eval_data_path",
                    "eval_data_sha256",
                    "label_column",
                    "decision_threshold",
                ):
                    self.check(
                        i,
                        f"{subject} · binding {name}",
                        getattr(rec.binding, name, None),
                        getattr(cur.binding, name, None),
                    )
        for cur in by_urn.values():
            self.diff(i, f"model {cur.name} ({cur.urn})", "not in the recording", f"tested, {cur.verdict}")

    def _metrics(self, i: int, subject: str, rec: ModelMetrics | None, cur: ModelMetrics | None) -> None:
        if rec is None or cur is None:
            if (rec is None) != (cur is None):
                self.diff(i, f"{subject} · metrics", "measured" if rec else "none", "measured" if cur else "none")
            return
        for name in ModelMetrics.model_fields:
            self.check(i, f"{subject} · metric {name}", getattr(rec, name), getattr(cur, name))

    def _affected(self, i: int, recorded: list[AffectedModelRecord], now: list[AffectedModelRecord]) -> None:
        by_urn = {m.urn: m for m in now}
        changes: list[str] = []
        for rec in recorded:
            cur = by_urn.pop(rec.urn, None)
            if cur is None:
                changes.append(f"downstream model {rec.name} ({rec.urn}) no longer depends on the field")
                continue
            if rec.production != cur.production:
                changes.append(
                    f"{rec.name}: production {rec.production} → {cur.production} ({cur.production_evidence})"
                )
            for what, old, new in (("tag", rec.tags, cur.tags), ("owner", rec.owners, cur.owners)):
                for added in sorted(set(new) - set(old)):
                    changes.append(f"{rec.name}: {what} added {added}")
                for removed in sorted(set(old) - set(new)):
                    changes.append(f"{rec.name}: {what} removed {removed}")
            for key in sorted(set(rec.custom_properties) | set(cur.custom_properties)):
                old_value, new_value = rec.custom_properties.get(key), cur.custom_properties.get(key)
                if old_value != new_value:
                    changes.append(f"{rec.name}: property {key} {_fmt(old_value)} → {_fmt(new_value)}")
        for cur in by_urn.values():
            status = f"production ({cur.production_evidence})" if cur.production else "not in production"
            changes.append(f"new downstream model {cur.name} ({cur.urn}), {status}")
        if not changes:
            return
        for text in changes:
            if self.live:
                self.change(i, text)
            else:  # the catalog answers were the recorded ones: a different reading is a code change
                self.diff(i, "lineage reading", "as recorded", text)

    def calls(self, i: int, recorded: list[ToolCallRecord], now: list[ToolCallRecord], *, publishing: bool) -> None:
        """`--live`: which catalog answers differ from the recorded ones (first call per tool + arguments)."""
        first_recorded: dict[str, ToolCallRecord] = {}
        for record in recorded:
            first_recorded.setdefault(_key(record.tool, record.arguments), record)
        seen: set[str] = set()
        lines: list[str] = []
        for record in now:
            key = _key(record.tool, record.arguments)
            if key in seen:
                continue
            seen.add(key)
            old = first_recorded.get(key)
            if old is None:
                lines.append(f"new catalog call: {_short(key)}")
            elif old.ok != record.ok or old.result != record.result:
                paths = _json_paths(old.result, record.result)
                lines.append(f"catalog answer changed: {_short(key, 100)} at {', '.join(paths)}")
        if not publishing:  # the publication's own reads are skipped with it
            lines += [
                f"catalog call no longer made: {_short(key)}"
                for key, record in first_recorded.items()
                if key not in seen and record.tool not in WRITE_TOOLS
            ]
        if len(lines) > _MAX_CALL_DIFFS:
            lines = [*lines[:_MAX_CALL_DIFFS], f"… and {len(lines) - _MAX_CALL_DIFFS} more catalog call difference(s)"]
        for line in lines:
            self.change(i, line)


def _json_paths(a: Any, b: Any, path: str = "", limit: int = 3) -> list[str]:
    """Up to `limit` JSON paths where two answers differ."""
    out: list[str] = []

    def walk(x: Any, y: Any, where: str) -> None:
        if len(out) >= limit or x == y:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for key in sorted(set(x) | set(y), key=str):
                walk(x.get(key), y.get(key), f"{where}.{key}")
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for n, (u, v) in enumerate(zip(x, y, strict=True)):
                walk(u, v, f"{where}[{n}]")
        else:
            out.append(where or "(root)")

    walk(a, b, path)
    return out


# --- running a replay -----------------------------------------------------------------------------------------


def _replay_settings(trace: Trace, settings: ProvenanceSettings, home: Path, live: bool) -> ProvenanceSettings:
    if live:
        return settings.model_copy(update={"provenance_home": home, "provenance_lite_db": settings.lite_db})
    lite_db = Path(trace.catalog.lite_db) if trace.catalog.lite_db else Path(trace.catalog.base_dir) / "catalog.db"
    # Never opened offline: only its folder matters, where the recorded relative binding URIs resolve.
    return ProvenanceSettings(provenance_home=home, provenance_catalog="embedded", provenance_lite_db=lite_db)


def _policy(trace: Trace, comparer: Comparer) -> LoadedPolicy:
    recorded = trace.turns[0].policy
    try:
        loaded = load_policy(Path(recorded.path))
    except PolicyError as exc:
        comparer.notes.append(f"recorded policy file unusable ({exc}); using the default policy")
        loaded = load_policy()
    if loaded.sha256 != recorded.sha256:
        comparer.diff(
            None,
            f"policy {recorded.name} v{recorded.version} ({loaded.path})",
            f"sha256 {recorded.sha256}",
            f"sha256 {loaded.sha256} ({loaded.policy.name} v{loaded.policy.version})",
        )
    return loaded


def _check_files(trace: Trace, comparer: Comparer) -> None:
    """The recorded artifacts and evaluation data, hashed again; the recorded evidence files, checked."""
    checked: set[str] = set()
    for turn in trace.turns:
        for model in turn.outcome.models if turn.outcome else []:
            binding = model.binding
            if binding is None:
                continue
            for path, expected, what in (
                (binding.artifact_path, binding.artifact_sha256_expected, "artifact"),
                (binding.eval_data_path, binding.eval_data_sha256, "evaluation data"),
            ):
                if expected is None or path in checked:
                    continue
                checked.add(path)
                actual = sha256_file(Path(path))
                if actual != expected:
                    comparer.diff(
                        None,
                        f"model {model.name} · {what} {path}",
                        f"sha256 {expected}",
                        f"sha256 {actual or 'missing'}",
                    )
    last_hashes: dict[str, tuple[str, str | None, str | None]] = {}
    for turn in trace.turns:
        ref = turn.outcome.evidence if turn.outcome else None
        if ref is not None:
            last_hashes[ref.run_id] = (ref.folder, ref.evidence_sha256, ref.report_sha256)
    for run_id, (folder, evidence_sha, report_sha) in last_hashes.items():
        for name, expected in ((EVIDENCE_FILE, evidence_sha), (REPORT_FILE, report_sha)):
            actual = sha256_file(Path(folder) / name)
            if expected is not None and actual != expected:
                state = "is missing" if actual is None else "changed since the recording (e.g. published again)"
                comparer.notes.append(f"run {run_id}: recorded {name} {state}")


def _environment_notes(trace: Trace, comparer: Comparer) -> None:
    current = environment()
    recorded: dict[str, str] = {}
    for turn in trace.turns:
        recorded.update(turn.environment)
    for package, version in sorted(recorded.items()):
        if current.get(package) != version:
            comparer.notes.append(f"{package}: recorded {version}, now {current.get(package, 'not installed')}")


async def _replay_turns(
    trace: Trace, replay_settings: ProvenanceSettings, live: bool, comparer: Comparer
) -> list[TurnSummary]:
    policy = _policy(trace, comparer)
    handle: CatalogHandle
    replay_catalog: ReplayCatalogHandle | None = None
    if live:
        handle = ReadOnlyCatalogHandle(replay_settings)
    else:
        handle = replay_catalog = ReplayCatalogHandle(replay_settings, trace.catalog.description)
    context = AgentContext(settings=replay_settings, planner=DeterministicPlanner(), policy=policy, catalog=handle)
    summaries: list[TurnSummary] = []
    replayed_path = trace_path(replay_settings.home, trace.thread_id)
    async with open_session(replay_settings, context=context) as session:
        for rec in trace.turns:
            model: ReplayChatModel | None = None
            if rec.planner == "deterministic":
                context.planner = DeterministicPlanner()
            else:
                model = ReplayChatModel.from_outputs(rec.llm_outputs)
                context.planner = LlmPlanner(model, name="replay")
            if replay_catalog is not None:
                replay_catalog.session.load(rec.catalog_calls)
            before = len(read_trace(replayed_path).turns) if replayed_path.is_file() else 0
            failure: Exception | None = None
            try:
                if rec.input.kind == "ask":
                    await session.ask(
                        rec.input.question or "", thread_id=trace.thread_id, mode=rec.input.publish_mode or "ask"
                    )
                elif rec.input.decision is not None:
                    await session.decide(trace.thread_id, rec.input.decision)
                else:
                    raise TraceError(f"turn {rec.index} is a decision without its decision")
            except TraceError:
                raise
            except Exception as exc:  # compared with the recording like any other outcome
                failure = exc
            turns = read_trace(replayed_path).turns if replayed_path.is_file() else []
            if len(turns) > before:
                now = turns[-1]
            else:  # refused before the graph ran (e.g. a decision with no pending approval)
                error = f"{type(failure).__name__}: {failure}" if failure else "the turn was not recorded"
                now = rec.model_copy(update={"status": "error", "error": error, "outcome": None})
            comparer.turn(rec, now)
            summaries.append(TurnSummary(rec.index, _turn_label(rec), _turn_state(rec), _turn_state(now)))
            if rec.status != "ok":
                continue  # nothing recorded to hold the replay to
            if model is not None and model.position != len(rec.llm_outputs):
                comparer.diff(rec.index, "LLM calls", len(rec.llm_outputs), model.position)
            if replay_catalog is None:
                comparer.calls(rec.index, rec.catalog_calls, now.catalog_calls, publishing=rec.input.kind == "decide")
                continue
            for miss in replay_catalog.session.misses:
                comparer.diff(rec.index, "catalog call", "absent from the recording", miss)
            unused = replay_catalog.session.unused()
            if unused and rec.input.kind == "ask":
                tools = ", ".join(sorted({u.tool for u in unused}))
                comparer.note(rec.index, f"{len(unused)} recorded catalog call(s) not made in the replay: {tools}")
    return summaries


async def areplay_trace(
    ref: str | Path, settings: ProvenanceSettings, *, live: bool = False, home: Path | None = None
) -> ReplayReport:
    """Replay a trace (path or trace id under `settings.home`) and compare it with its recording.

    Offline by default: no MCP server, no API key. `live=True` asks the current catalog (read-only). The
    replay's evidence goes to `home` (kept) or to a temporary folder (removed). Raises `TraceError` for a
    trace that cannot be read; everything else ends up in the report.
    """
    source = find_trace(settings.home, ref)
    trace = read_trace(source)
    report = ReplayReport(trace_id=trace.trace_id, source=source, live=live, home=home)
    if not trace.turns:
        report.notes.append("the trace has no turns; nothing to replay")
        return report
    if home is not None:
        if home.resolve() == settings.home.resolve():
            raise TraceError(f"the replay home must not be PROVENANCE_HOME itself ({settings.home})")
        if home.exists() and (not home.is_dir() or any(home.iterdir())):
            raise TraceError(f"the replay home {home} must be a new or empty folder")
    replay_home = home or Path(tempfile.mkdtemp(prefix="provenance-replay-"))
    comparer = Comparer(live)
    try:
        _check_files(trace, comparer)
        replay_settings = _replay_settings(trace, settings, replay_home, live)
        report.turns = await _replay_turns(trace, replay_settings, live, comparer)
    finally:
        if home is None:
            shutil.rmtree(replay_home, ignore_errors=True)
    _environment_notes(trace, comparer)
    report.differences = comparer.differences
    report.catalog_changes = comparer.catalog_changes
    report.notes = comparer.notes
    return report


def replay_trace(
    ref: str | Path, settings: ProvenanceSettings, *, live: bool = False, home: Path | None = None
) -> ReplayReport:
    """Blocking `areplay_trace` (for the CLI and scripts; inside an event loop await `areplay_trace`)."""
    return asyncio.run(areplay_trace(ref, settings, live=live, home=home))
