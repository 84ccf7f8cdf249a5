"""Recording conversations: every turn, its LLM outputs and catalog calls, a crash mid-turn, concurrent threads."""

from __future__ import annotations

import asyncio
from importlib import metadata

import pytest

from agent.conversation import TurnResult, open_session
from agent.replay.run import areplay_trace
from agent.schemas import Intent
from agent.traces.schema import TRACE_SCHEMA_VERSION
from agent.traces.store import read_trace, sha256_file, trace_path
from policies import load_policy
from seed.catalog import FRAUD_MODEL_URN
from tests.agent.helpers import DEMO_QUESTION
from tests.agent.traces.helpers import THREAD, Recorded
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE, runs_dir
from tools.settings import ProvenanceSettings


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
    assert (
        ask.outcome.plan_record is not None
        and ask.outcome.plan_record.mutation is not None
        and ask.outcome.plan_record.mutation.op == "scale"
    )
    assert ask.outcome.verdict == "BLOCK" and ask.outcome.pending is not None
    model, review = ask.outcome.models  # the classifier and the regressor downstream of amount
    assert model.urn == FRAUD_MODEL_URN and model.verdict == "BLOCK" and model.metrics is not None
    assert model.binding is not None and model.binding.eval_data_sha256
    assert review.name == "review_time_estimator" and review.verdict == "BLOCK" and review.task == "regression"
    assert {m.name for m in ask.outcome.affected_models} == {
        "fraud_detector",
        "fraud_detector_challenger",
        "review_time_estimator",
    }
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
