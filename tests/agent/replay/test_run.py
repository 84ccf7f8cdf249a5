"""Replaying recorded conversations, on the real embedded catalog and MCP server.

The replays run offline (no MCP server, no API key), against a tampered copy of the trace, against a changed
model artifact, and live against the catalog after a new downstream production model appears; LLM-planned
conversations (scripted, and the real Gemini client against a loopback stub) replay offline too. No replay may
write to the catalog.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import joblib
import pytest

from agent.conversation import TurnResult, open_session
from agent.fakes import as_tool_call, scripted
from agent.replay.compare import FLOAT_ABS_TOL
from agent.replay.run import replay_trace
from agent.schemas import ExperimentPlan, Intent, RouteDecision
from agent.state import ApprovalDecision
from agent.traces.schema import TraceError
from agent.traces.store import read_trace, trace_path
from seed.catalog import MODEL_GROUP_URN, write_to_lite
from seed.catalog_builders import ml_model_mcps, ownership
from tests.agent.helpers import DEMO_QUESTION, catalog_write_count
from tests.agent.test_llm import GeminiStub, gemini  # noqa: F401  (the loopback Gemini stub fixture)
from tests.agent.test_llm import _gemini as gemini_model
from tests.agent.traces.helpers import THREAD, Recorded, catalog_state, cli, edited, go_offline
from tools.evidence.store import read_evidence, runs_dir
from tools.settings import ProvenanceSettings

TXN_AMOUNT_FEATURE = "urn:li:mlFeature:(fraud_features.transaction_features,txn_amount)"
NEW_MODEL_URN = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,chargeback_predictor,PROD)"


@pytest.mark.slow
def test_offline_replay_reproduces_without_catalog_key_or_writes(recorded: Recorded, offline: None) -> None:
    before = catalog_state(recorded.settings)
    report = replay_trace(THREAD, recorded.settings)
    assert report.reproduced, report.render()
    assert report.exit_code == 0
    assert [t.now for t in report.turns] == ["BLOCK, approval requested", "BLOCK, publication skipped in replay"]
    assert any("publication skipped in replay (recorded: published)" in n for n in report.notes)
    text = report.render()
    assert "REPRODUCED" in text and f"{FLOAT_ABS_TOL:g}" in text
    assert catalog_state(recorded.settings) == before  # no catalog write, no run, no trace in the user's home


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


@pytest.mark.slow
def test_tampered_metric_is_named_in_the_diff(recorded: Recorded, offline: None, tmp_path: Path) -> None:
    def bump(amount: float) -> object:
        def edit(raw: dict) -> None:  # type: ignore[type-arg]
            for turn in raw["turns"]:
                turn["outcome"]["models"][0]["metrics"]["flip_rate"] += amount

        return edit

    within = replay_trace(edited(recorded.trace, tmp_path / "tiny.json", bump(FLOAT_ABS_TOL / 10)), recorded.settings)
    assert within.reproduced, within.render()

    report = replay_trace(edited(recorded.trace, tmp_path / "tampered.json", bump(0.01)), recorded.settings)
    assert not report.reproduced and report.exit_code == 1
    (diff,) = report.differences  # reported once, though both turns carry the metric
    assert diff.subject == "model fraud_detector · metric flip_rate"
    assert float(diff.now) == pytest.approx(float(diff.recorded) - 0.01)
    assert "NOT REPRODUCED" in report.render() and "metric flip_rate" in report.render()


@pytest.mark.slow
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
    # The regressor next to it reads its own, intact artifact and still BLOCKs, so the run's verdict stands.
    assert not any("overall verdict" in line or "model review_time_estimator · verdict" in line for line in lines)
    assert any(f"artifact {artifact}" in line and binding.artifact_sha256_expected in line for line in lines), lines
    assert any("hash_mismatch" in line for line in lines), lines  # the reason codes changed
    assert replay_trace(recorded.trace, recorded.settings).reproduced  # restored: reproduces again


@pytest.mark.slow
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


@pytest.mark.slow
def test_chat_model_path_trace_replays_offline(settings: ProvenanceSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    """Structured output in both shapes (JSON text, tool call); the decision comes from another "process"."""
    model = scripted(
        RouteDecision(intent=Intent.ASSESS, subject="payments.transactions.amount", change="sent in cents"),
        as_tool_call(
            ExperimentPlan(
                op="scale",
                params={"factor": 100},
                rationale="dollars to cents",
                cited=["sent in cents instead of dollars"],
            )
        ),
    )

    async def ask() -> TurnResult:
        async with open_session(settings, model=model) as session:
            return await session.ask(DEMO_QUESTION, thread_id="llm-1")

    async def decide() -> TurnResult:  # a new session, as `provenance resume` in another process
        async with open_session(settings) as session:
            return await session.decide("llm-1", ApprovalDecision(decision="reject", by="test"))

    first = asyncio.run(ask())
    assert first.pending is not None
    asyncio.run(decide())
    trace = read_trace(trace_path(settings.home, "llm-1"))
    assert trace.planner == "chat_model" and trace.chat_model == "FakeToolChatModel"
    ask_turn, decide_turn = trace.turns
    assert len(ask_turn.llm_outputs) == 2
    assert json.loads(ask_turn.llm_outputs[0]["data"]["content"])["intent"] == "assess"
    assert ask_turn.llm_outputs[1]["data"]["tool_calls"][0]["args"]["params"] == {"factor": 100}
    assert decide_turn.outcome is not None and decide_turn.outcome.publication is not None
    assert decide_turn.outcome.publication.status == "rejected"

    go_offline(monkeypatch)
    keep = settings.home.parent / "replay"
    report = replay_trace("llm-1", settings, home=keep)
    assert report.reproduced, report.render()
    (run_id,) = [p.name for p in runs_dir(keep).iterdir() if not p.name.startswith(".")]
    assert read_evidence(keep, run_id).plan.planner == "replay"  # compared as the recorded "chat_model" plan
    assert read_evidence(keep, run_id).publication.status == "rejected"

    # An LLM output that the replay would need, removed: the turn no longer reproduces, and says why.
    broken = edited(
        trace_path(settings.home, "llm-1"),
        settings.home.parent / "short.json",
        lambda raw: raw["turns"][0]["llm_outputs"].pop(),
    )
    short = replay_trace(broken, settings)
    assert not short.reproduced
    assert any(d.subject == "failed stages" for d in short.differences), short.render()


@pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")
@pytest.mark.slow
def test_real_gemini_client_trace_with_a_retry_replays_offline(
    settings: ProvenanceSettings,
    gemini: GeminiStub,  # noqa: F811  (the fixture imported above)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real ChatGoogleGenerativeAI (json_schema structured output) against a loopback stub: a route, a
    malformed plan the planner retries, then the plan. All three replies are recorded and replayed offline."""
    gemini.answer(RouteDecision(intent=Intent.ASSESS, subject="payments.transactions.amount").model_dump_json())
    gemini.answer("certainly! the plan is to scale")
    gemini.answer(
        ExperimentPlan(op="scale", params={"factor": 100}, cited=["sent in cents instead of dollars"]).model_dump_json()
    )
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

    go_offline(monkeypatch)
    report = replay_trace("real-gemini", settings)
    assert report.reproduced, report.render()
    assert len(gemini.requests) == 3  # the replay sent nothing to the model


@pytest.mark.slow
def test_cli_replay_exit_0_when_reproduced(recorded: Recorded) -> None:
    done = cli("replay", str(recorded.trace), home=recorded.settings.home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "REPRODUCED" in done.stdout
