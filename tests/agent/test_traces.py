"""Conversation traces and their replay, on the real embedded catalog and MCP server.

One demo conversation (ask + approve) is recorded once for the module; the replays then run offline (no MCP
server, no API key), against a tampered copy of the trace, against a changed model artifact, and live against
the catalog after a new downstream production model appears. No replay may write to the catalog.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import joblib
import pytest

from agent.cli import main
from agent.conversation import TurnResult, open_session
from agent.fakes import as_tool_call, scripted
from agent.replay import FLOAT_ABS_TOL, areplay_trace, replay_trace
from agent.schemas import ExperimentPlan, Intent, RouteDecision
from agent.state import ApprovalDecision
from agent.traces import TRACE_SCHEMA_VERSION, TraceError, read_trace, sha256_file, trace_path
from policies.engine import load_policy
from seed.catalog import FRAUD_MODEL_URN, MODEL_GROUP_URN, write_to_lite
from seed.catalog_builders import ml_model_mcps, ownership
from tests.agent.helpers import DEMO_QUESTION, catalog_write_count
from tests.agent.test_llm import GeminiStub, gemini  # noqa: F401  (the loopback Gemini stub fixture)
from tests.agent.test_llm import _gemini as gemini_model
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE, read_evidence, runs_dir
from tools.settings import ProvenanceSettings

REPO = Path(__file__).resolve().parents[2]
THREAD = "demo-trace"
TXN_AMOUNT_FEATURE = "urn:li:mlFeature:(fraud_features.transaction_features,txn_amount)"
NEW_MODEL_URN = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,chargeback_predictor,PROD)"


@dataclass
class Recorded:
    settings: ProvenanceSettings
    trace: Path
    first: TurnResult
    second: TurnResult


def _copy_home(template: Path, target: Path) -> Path:
    shutil.copytree(template, target, ignore=shutil.ignore_patterns("logs", "mcp-home"))
    return target


@pytest.fixture(scope="module")
def recorded(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The demo conversation, recorded through `Session` exactly as the CLI and the chat run it."""
    home = _copy_home(seeded_template, tmp_path_factory.mktemp("traces") / "home")
    settings = ProvenanceSettings(provenance_home=home)

    async def go() -> tuple[TurnResult, TurnResult]:
        async with open_session(settings) as session:
            first = await session.ask(DEMO_QUESTION, thread_id=THREAD)
            second = await session.decide(THREAD, ApprovalDecision(decision="approve", by="test"))
            return first, second

    first, second = asyncio.run(go())
    return Recorded(settings, trace_path(home, THREAD), first, second)


def _go_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key, and any attempt to open the catalog (endpoint + MCP server) fails."""
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)

    def no_catalog(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("an offline replay must not open the catalog")

    monkeypatch.setattr("agent.context.open_catalog", no_catalog)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    _go_offline(monkeypatch)


def _counts(settings: ProvenanceSettings) -> tuple[int, list[str], list[str]]:
    runs = sorted(p.name for p in runs_dir(settings.home).iterdir())
    traces = sorted(p.name for p in (settings.home / "traces").iterdir())
    return catalog_write_count(settings.lite_db), runs, traces


def _edited(trace: Path, target: Path, edit: object) -> Path:
    raw = json.loads(trace.read_text())
    edit(raw)  # type: ignore[operator]
    target.write_text(json.dumps(raw))
    return target


def test_the_conversation_is_recorded_turn_by_turn(recorded: Recorded) -> None:
    trace = read_trace(recorded.trace)
    assert trace.schema_version == TRACE_SCHEMA_VERSION and trace.thread_id == THREAD
    assert trace.planner == "deterministic" and trace.catalog.kind == "embedded"
    ask, decide = trace.turns
    assert (ask.input.kind, ask.input.question, ask.status) == ("ask", DEMO_QUESTION, "ok")
    assert decide.input.kind == "decide" and decide.input.decision is not None
    assert decide.input.decision.decision == "approve"
    assert ask.llm_outputs == [] and decide.llm_outputs == []  # the deterministic planner calls no model

    # Every MCP call with its arguments and result, per turn; the writes belong to the approval turn.
    tools = [c.tool for c in ask.catalog_calls]
    assert {"get_entities", "list_schema_fields", "get_lineage", "get_aspect_history"} <= set(tools)
    lineage = next(c for c in ask.catalog_calls if c.tool == "get_lineage" and c.arguments.get("column") == "amount")
    assert lineage.ok and "downstreams" in lineage.result
    assert not {"add_tags", "save_document"} & set(tools)
    assert {"add_tags", "save_document"} <= {c.tool for c in decide.catalog_calls}

    # Plans, per-model metrics and verdicts, the approval request, the publication.
    assert ask.outcome is not None and decide.outcome is not None
    assert ask.outcome.route is not None and ask.outcome.route.intent == Intent.ASSESS
    assert ask.outcome.plan_record is not None and ask.outcome.plan_record.mutation["op"] == "scale"
    assert ask.outcome.verdict == "BLOCK" and ask.outcome.pending is not None
    (model,) = ask.outcome.models
    assert model.urn == FRAUD_MODEL_URN and model.verdict == "BLOCK" and model.metrics is not None
    assert model.binding is not None and model.binding.eval_data_sha256
    assert {m.name for m in ask.outcome.affected_models} == {"fraud_detector", "fraud_detector_challenger"}
    assert decide.outcome.publication is not None and decide.outcome.publication.status == "published"
    assert trace.publication_status == "published" and trace.verdict == "BLOCK"

    # Evidence paths and hashes (as of each turn's end), the policy and the package versions.
    run_id = recorded.first.values["run_id"]
    ref = decide.outcome.evidence
    assert ref is not None and ref.run_id == run_id
    folder = runs_dir(recorded.settings.home) / run_id
    assert ref.evidence_sha256 == sha256_file(folder / EVIDENCE_FILE)
    assert ref.report_sha256 == sha256_file(folder / REPORT_FILE)
    assert ask.outcome.evidence is not None and ask.outcome.evidence.evidence_sha256 != ref.evidence_sha256
    assert ask.policy.sha256 == load_policy().sha256 == ref.policy_sha256
    assert ask.environment["langgraph"] == metadata.version("langgraph")


def test_traces_command_lists_date_question_verdict_and_publication(
    recorded: Recorded, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(recorded.settings.home))
    assert main(["traces"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if THREAD in line)
    assert "BLOCK" in line and "published" in line and "What happens if payments.transactions.amount" in line
    assert line[:4].isdigit()  # the date comes first


def test_offline_replay_reproduces_without_catalog_key_or_writes(recorded: Recorded, offline: None) -> None:
    before = _counts(recorded.settings)
    report = replay_trace(THREAD, recorded.settings)
    assert report.reproduced, report.render()
    assert report.exit_code == 0
    assert [t.now for t in report.turns] == ["BLOCK, approval requested", "BLOCK, publication skipped in replay"]
    assert any("publication skipped in replay (recorded: published)" in n for n in report.notes)
    text = report.render()
    assert "REPRODUCED" in text and f"{FLOAT_ABS_TOL:g}" in text
    assert _counts(recorded.settings) == before  # no catalog write, no run, no trace in the user's home


def test_replay_keeps_its_evidence_in_a_separate_home(recorded: Recorded, offline: None, tmp_path: Path) -> None:
    keep = tmp_path / "replay-home"
    report = replay_trace(recorded.trace, recorded.settings, home=keep)
    assert report.reproduced, report.render()
    (run_id,) = [p.name for p in runs_dir(keep).iterdir() if not p.name.startswith(".")]
    evidence = read_evidence(keep, run_id)
    assert evidence.verdict == "BLOCK" and evidence.publication.status == "failed"
    assert "skipped in replay" in (evidence.publication.message or "")
    assert run_id != recorded.first.values["run_id"]
    with pytest.raises(TraceError, match="must not be PROVENANCE_HOME"):
        replay_trace(recorded.trace, recorded.settings, home=recorded.settings.home)
    with pytest.raises(TraceError, match="must be a new or empty folder"):
        replay_trace(recorded.trace, recorded.settings, home=keep)


def test_tampered_metric_is_named_in_the_diff(recorded: Recorded, offline: None, tmp_path: Path) -> None:
    def bump(amount: float) -> object:
        def edit(raw: dict) -> None:  # type: ignore[type-arg]
            for turn in raw["turns"]:
                turn["outcome"]["models"][0]["metrics"]["flip_rate"] += amount

        return edit

    within = replay_trace(_edited(recorded.trace, tmp_path / "tiny.json", bump(FLOAT_ABS_TOL / 10)), recorded.settings)
    assert within.reproduced, within.render()

    report = replay_trace(_edited(recorded.trace, tmp_path / "tampered.json", bump(0.01)), recorded.settings)
    assert not report.reproduced and report.exit_code == 1
    (diff,) = report.differences  # reported once, though both turns carry the metric
    assert diff.subject == "model fraud_detector · metric flip_rate"
    assert float(diff.now) == pytest.approx(float(diff.recorded) - 0.01)
    assert "NOT REPRODUCED" in report.render() and "metric flip_rate" in report.render()


def test_changed_model_artifact_makes_the_replay_fail(recorded: Recorded, offline: None) -> None:
    trace = read_trace(recorded.trace)
    assert trace.turns[0].outcome is not None
    binding = trace.turns[0].outcome.models[0].binding
    assert binding is not None
    artifact = Path(binding.artifact_path)
    original = artifact.read_bytes()
    try:
        joblib.dump({"not": "the model"}, artifact)  # the sha256 no longer matches the catalog's
        report = replay_trace(recorded.trace, recorded.settings)
    finally:
        artifact.write_bytes(original)
    assert not report.reproduced and report.exit_code == 1
    lines = [d.line() for d in report.differences]
    assert any("model fraud_detector · verdict: recorded BLOCK, now INCOMPLETE" in line for line in lines), lines
    assert any("overall verdict: recorded BLOCK, now INCOMPLETE" in line for line in lines), lines
    assert any(f"artifact {artifact}" in line and binding.artifact_sha256_expected in line for line in lines), lines
    assert any("hash_mismatch" in line for line in lines), lines  # the reason codes changed
    assert replay_trace(recorded.trace, recorded.settings).reproduced  # restored: reproduces again


def test_live_replay_reports_catalog_changes_and_never_writes(recorded: Recorded) -> None:
    settings = recorded.settings
    db = settings.lite_db
    backup = db.with_name("catalog.db.before-live")
    shutil.copy2(db, backup)
    try:
        rows = catalog_write_count(db)
        unchanged = replay_trace(THREAD, settings, live=True)
        assert catalog_write_count(db) == rows
        assert unchanged.reproduced, unchanged.render()
        # The approved publication tagged the model after the recording read it.
        assert any("fraud_detector: tag added urn:li:tag:provenance:BLOCK" in c for c in unchanged.catalog_changes)

        write_to_lite(
            ml_model_mcps(
                NEW_MODEL_URN,
                description="Predicts chargebacks from the transaction amount.",
                model_type="LogisticRegression pipeline",
                tags=["production"],
                features=[TXN_AMOUNT_FEATURE],
                group=MODEL_GROUP_URN,
                custom_properties={"mlflow.stage": "Production"},
                owners=ownership(("urn:li:corpuser:carol", "TECHNICAL_OWNER")),
            ),
            db,
        )
        rows = catalog_write_count(db)
        report = replay_trace(THREAD, settings, live=True)
        assert catalog_write_count(db) == rows  # the approval was replayed; nothing was written
        assert not report.reproduced and report.exit_code == 1
        assert any(
            "new downstream model chargeback_predictor" in c and "production" in c for c in report.catalog_changes
        ), report.catalog_changes
        lines = [d.line() for d in report.differences]
        assert any("model chargeback_predictor" in line and "not in the recording" in line for line in lines), lines
        assert "What changed in the catalog" in report.render()
    finally:
        shutil.copy2(backup, db)
        backup.unlink()


def test_gemini_path_trace_replays_offline(settings: ProvenanceSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    """Structured output in both shapes (JSON text, tool call); the decision comes from another "process"."""
    model = scripted(
        RouteDecision(intent=Intent.ASSESS, subject="payments.transactions.amount", change="sent in cents"),
        as_tool_call(ExperimentPlan(op="scale", params={"factor": 100}, rationale="dollars to cents")),
    )

    async def ask() -> TurnResult:
        async with open_session(settings, model=model) as session:
            return await session.ask(DEMO_QUESTION, thread_id="gemini-1")

    async def decide() -> TurnResult:  # a new session, as `provenance resume` in another process
        async with open_session(settings) as session:
            return await session.decide("gemini-1", ApprovalDecision(decision="reject", by="test"))

    first = asyncio.run(ask())
    assert first.pending is not None
    asyncio.run(decide())
    trace = read_trace(trace_path(settings.home, "gemini-1"))
    assert trace.planner == "gemini" and trace.chat_model == "FakeToolChatModel"
    ask_turn, decide_turn = trace.turns
    assert len(ask_turn.llm_outputs) == 2
    assert json.loads(ask_turn.llm_outputs[0]["data"]["content"])["intent"] == "assess"
    assert ask_turn.llm_outputs[1]["data"]["tool_calls"][0]["args"]["params"] == {"factor": 100}
    assert decide_turn.outcome is not None and decide_turn.outcome.publication is not None
    assert decide_turn.outcome.publication.status == "rejected"

    _go_offline(monkeypatch)
    keep = settings.home.parent / "replay"
    report = replay_trace("gemini-1", settings, home=keep)
    assert report.reproduced, report.render()
    (run_id,) = [p.name for p in runs_dir(keep).iterdir() if not p.name.startswith(".")]
    assert read_evidence(keep, run_id).plan.planner == "replay"  # compared as the recorded "gemini" plan
    assert read_evidence(keep, run_id).publication.status == "rejected"

    # An LLM output that the replay would need, removed: the turn no longer reproduces, and says why.
    broken = _edited(
        trace_path(settings.home, "gemini-1"),
        settings.home.parent / "short.json",
        lambda raw: raw["turns"][0]["llm_outputs"].pop(),
    )
    short = replay_trace(broken, settings)
    assert not short.reproduced
    assert any(d.subject == "failed stages" for d in short.differences), short.render()


@pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")
def test_real_gemini_client_trace_with_a_retry_replays_offline(
    settings: ProvenanceSettings,
    gemini: GeminiStub,  # noqa: F811  (the fixture imported above)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real ChatGoogleGenerativeAI (json_schema structured output) against a loopback stub: a route, a
    malformed plan the planner retries, then the plan. All three replies are recorded and replayed offline."""
    gemini.answer(RouteDecision(intent=Intent.ASSESS, subject="payments.transactions.amount").model_dump_json())
    gemini.answer("certainly! the plan is to scale")
    gemini.answer(ExperimentPlan(op="scale", params={"factor": 100}).model_dump_json())
    model = gemini_model(gemini)

    async def ask() -> TurnResult:
        async with open_session(settings, model=model) as session:
            try:
                return await session.ask(DEMO_QUESTION, thread_id="real-gemini", mode="no_publish")
            finally:
                assert model.client is not None
                await model.client.aio.aclose()

    first = asyncio.run(ask())
    assert first.values["verdict"] == "BLOCK" and len(gemini.requests) == 3
    (turn,) = read_trace(trace_path(settings.home, "real-gemini")).turns
    assert turn.planner == "gemini" and len(turn.llm_outputs) == 3
    assert turn.llm_outputs[1]["data"]["content"] == "certainly! the plan is to scale"

    _go_offline(monkeypatch)
    report = replay_trace("real-gemini", settings)
    assert report.reproduced, report.render()
    assert len(gemini.requests) == 3  # the replay sent nothing to the model


def test_trace_survives_a_crash_mid_turn_and_concurrent_threads_keep_their_calls(
    settings: ProvenanceSettings,
) -> None:
    async def crash(node: str, _update: dict[str, object]) -> None:
        trace = read_trace(trace_path(settings.home, "crash-1"))
        assert trace.turns[-1].status == "running"  # on disk before the turn ends
        raise RuntimeError(f"process died after {node}")

    async def scenario() -> tuple[TurnResult, TurnResult]:
        async with open_session(settings) as session:
            with pytest.raises(RuntimeError, match="process died after route"):
                await session.ask(DEMO_QUESTION, thread_id="crash-1", on_update=crash)
            return await asyncio.gather(
                session.ask("What depends on payments.transactions.amount?", thread_id="deps"),
                session.ask("Who owns payments.public.transactions?", thread_id="owners"),
            )

    deps, owners = asyncio.run(scenario())
    crashed = read_trace(trace_path(settings.home, "crash-1")).turns[0]
    assert crashed.status == "error" and "process died after route" in (crashed.error or "")
    deps_calls = read_trace(trace_path(settings.home, "deps")).turns[0].catalog_calls
    owner_calls = read_trace(trace_path(settings.home, "owners")).turns[0].catalog_calls
    assert any(c.tool == "get_lineage" for c in deps_calls)
    assert not any(c.tool == "get_lineage" for c in owner_calls)
    assert not {id(c) for c in deps_calls} & {id(c) for c in owner_calls}
    assert "fraud_detector" in deps.answer and "payments-data-eng" in owners.answer
    assert asyncio.run(areplay_trace("deps", settings)).reproduced
    # The interrupted turn is replayed (so the thread reaches its state) but has no outcome to compare.
    interrupted = asyncio.run(areplay_trace("crash-1", settings))
    assert interrupted.reproduced, interrupted.render()
    assert any("not compared: the recorded turn did not finish" in n for n in interrupted.notes)


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    env["PROVENANCE_HOME"] = str(home)
    return env


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "agent.cli", *args]
    return subprocess.run(command, cwd=REPO, env=_env(home), capture_output=True, text=True, timeout=300)


def test_cli_replay_exit_0_when_reproduced(recorded: Recorded) -> None:
    done = _cli("replay", str(recorded.trace), home=recorded.settings.home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "REPRODUCED" in done.stdout


BAD_TRACES = {
    "corrupt": ('{"schema_version": "provenance.trace/1", "turns": [', "is not valid JSON"),
    "foreign": (
        json.dumps({"schema_version": "provenance.evidence/1", "run_id": "x"}),
        "has schema 'provenance.evidence/1'; this Provenance reads provenance.trace/1",
    ),
    "missing-fields": (
        json.dumps({"schema_version": TRACE_SCHEMA_VERSION, "trace_id": "x", "turns": []}),
        "does not match provenance.trace/1: thread_id: Field required",
    ),
}


def test_cli_replay_of_a_corrupt_or_foreign_trace_exits_2_with_a_message(tmp_path: Path) -> None:
    processes = {}
    for kind, (content, _) in BAD_TRACES.items():  # in parallel: each process mostly waits for its imports
        path = tmp_path / f"{kind}.json"
        path.write_text(content)
        command = [sys.executable, "-m", "agent.cli", "replay", str(path)]
        processes[kind] = subprocess.Popen(
            command, cwd=REPO, env=_env(tmp_path / "home"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    for kind, process in processes.items():
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 2, (kind, stdout, stderr)
        assert stderr.startswith("error: ") and BAD_TRACES[kind][1] in stderr, (kind, stderr)
        assert "Traceback" not in stderr + stdout, kind


def test_other_unreadable_traces_are_trace_errors(recorded: Recorded, tmp_path: Path) -> None:
    cases: dict[str, tuple[object, str]] = {
        "array": ([1, 2], "holds a JSON list"),
        "no-version": ({"trace_id": "x"}, "has no schema_version"),
        "bad-metric": (None, "turns.0.outcome.models.0.metrics.flip_rate"),
        "bad-llm-output": (None, "turns.0.llm_outputs.0 is not a recorded chat message"),
        "decision-missing": (None, "turns.1.input.decision is missing"),
    }
    raw = json.loads(recorded.trace.read_text())
    bad_metric = copy.deepcopy(raw)
    bad_metric["turns"][0]["outcome"]["models"][0]["metrics"]["flip_rate"] = "a lot"
    bad_llm = copy.deepcopy(raw)
    bad_llm["turns"][0]["llm_outputs"] = [{"what": "no type"}]
    no_decision = copy.deepcopy(raw)
    no_decision["turns"][1]["input"]["decision"] = None
    contents = {"bad-metric": bad_metric, "bad-llm-output": bad_llm, "decision-missing": no_decision}
    for name, (content, message) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(contents.get(name, content)))
        with pytest.raises(TraceError, match=message.replace("(", r"\(")):
            replay_trace(path, recorded.settings)
    with pytest.raises(TraceError, match="no trace 'nope'.*recent: demo-trace"):
        replay_trace("nope", recorded.settings)
