"""Running a replay (`areplay_trace`; `replay_trace` is the blocking form for the CLI): the algorithm is in the
package docstring (`agent.replay`)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from agent.context import AgentContext
from agent.conversation import open_session
from agent.llm import LlmPlanner
from agent.planning.planner import DeterministicPlanner
from agent.replay.checks import check_files, environment_notes, replay_policy
from agent.replay.compare import Comparer
from agent.replay.describe import turn_label, turn_state
from agent.replay.doubles import ReadOnlyCatalogHandle, ReplayCatalogHandle, ReplayChatModel
from agent.replay.report import ReplayReport, TurnSummary
from agent.traces.schema import Trace, TraceError
from agent.traces.store import find_trace, read_trace, trace_path
from tools.catalog.handle import CatalogHandle
from tools.settings import ProvenanceSettings


def _replay_settings(trace: Trace, settings: ProvenanceSettings, home: Path, live: bool) -> ProvenanceSettings:
    # Checkpoints always in the replay's own SQLite file: in a shared PROVENANCE_DATABASE_URL the replayed thread
    # (same thread id) would continue the user's real conversation.
    if live:
        update = {"provenance_home": home, "provenance_lite_db": settings.lite_db, "provenance_database_url": None}
        return settings.model_copy(update=update)
    lite_db = Path(trace.catalog.lite_db) if trace.catalog.lite_db else Path(trace.catalog.base_dir) / "catalog.db"
    # Never opened offline: only its folder matters, where the recorded relative binding URIs resolve.
    return ProvenanceSettings(
        provenance_home=home, provenance_catalog="embedded", provenance_lite_db=lite_db, provenance_database_url=None
    )


async def _replay_turns(
    trace: Trace, replay_settings: ProvenanceSettings, live: bool, comparer: Comparer
) -> list[TurnSummary]:
    policy = replay_policy(trace, comparer)
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
            summaries.append(TurnSummary(rec.index, turn_label(rec), turn_state(rec), turn_state(now)))
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
        check_files(trace, comparer)
        replay_settings = _replay_settings(trace, settings, replay_home, live)
        report.turns = await _replay_turns(trace, replay_settings, live, comparer)
    finally:
        if home is None:
            shutil.rmtree(replay_home, ignore_errors=True)
    environment_notes(trace, comparer)
    report.differences = comparer.differences
    report.catalog_changes = comparer.catalog_changes
    report.notes = comparer.notes
    return report


def replay_trace(
    ref: str | Path, settings: ProvenanceSettings, *, live: bool = False, home: Path | None = None
) -> ReplayReport:
    """Blocking `areplay_trace` (for the CLI and scripts; inside an event loop await `areplay_trace`)."""
    return asyncio.run(areplay_trace(ref, settings, live=live, home=home))
