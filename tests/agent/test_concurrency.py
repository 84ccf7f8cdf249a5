"""Never block the conversation: one conversation's experiment runs in the executor while the others go on.

Real parts throughout: the seeded catalog over MCP, the checkpointed graph, real artifacts (one made slow by a
pipeline step that sleeps, registered with its true sha256).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import hashlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import joblib
import pandas as pd
import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from agent.context import AgentContext
from agent.conversation import open_session
from agent.experiment_graph import make_measure
from seed.catalog import FRAUD_MODEL_URN, REVIEW_MODEL_URN, write_to_lite
from tests.agent.helpers import DEMO_QUESTION
from tools.catalog.handle import CatalogHandle
from tools.embedded.store import LiteStore
from tools.evidence.schema import ModelEvidence
from tools.evidence.store import staging_dir
from tools.experiment.binding import ARTIFACT_SHA256, ARTIFACT_URI, EVAL_DATA_URI, LABEL_COLUMN
from tools.runtime.executor import ThreadExecutor
from tools.settings import ProvenanceSettings

R = TypeVar("R")
OWNERS_QUESTION = "Who owns payments.public.transactions?"
SLOW_SECONDS = 2.0  # per predict call; the experiment makes at least two (baseline, mutated)
SLOW_STARTED = threading.Event()
SLOW_STARTED_AT: list[float] = []  # perf_counter of the slow step's first call


def slow_identity(frame: pd.DataFrame) -> pd.DataFrame:
    """A pipeline step standing for a slow model (pickled by reference: this module must stay importable)."""
    if not SLOW_STARTED.is_set():
        SLOW_STARTED_AT.append(time.perf_counter())
        SLOW_STARTED.set()
    time.sleep(SLOW_SECONDS)
    return frame


def bind_slow_fraud_detector(home: Path, folder: Path) -> None:
    """The fraud detector behind a sleeping first step, bound in the Lite file with the artifact's true sha256."""
    demo = home / "demo"
    real = joblib.load(demo / "fraud_detector.joblib")
    inputs = pd.read_csv(demo / "fraud_eval.csv")[list(real.feature_names_in_)]
    slow = FunctionTransformer(slow_identity, validate=False).fit(inputs)  # records the input column names
    artifact = folder / "slow-fraud.joblib"
    joblib.dump(Pipeline([("slow", slow), ("model", real)]), artifact)
    db = home / "catalog.db"
    store = LiteStore(db)
    try:
        current = store.typed_aspects(FRAUD_MODEL_URN)["mlModelProperties"]
    finally:
        store.close()
    updated = copy.deepcopy(current)
    updated.customProperties = {
        "mlflow.stage": "Production",
        ARTIFACT_URI: str(artifact),
        ARTIFACT_SHA256: hashlib.sha256(artifact.read_bytes()).hexdigest(),
        EVAL_DATA_URI: str(demo / "fraud_eval.csv"),
        LABEL_COLUMN: "is_fraud",
    }
    write_to_lite([MetadataChangeProposalWrapper(entityUrn=FRAUD_MODEL_URN, aspect=updated)], db)


@pytest.mark.slow
def test_a_catalog_question_is_answered_while_another_conversation_assesses(
    settings: ProvenanceSettings, tmp_path: Path
) -> None:
    bind_slow_fraud_detector(settings.home, tmp_path)
    SLOW_STARTED.clear()
    SLOW_STARTED_AT.clear()

    async def go() -> tuple[float, float, float, bool, Any]:
        async with open_session(settings) as session:
            await session.context.handle.get()  # the catalog start is not part of a turn
            started = time.perf_counter()
            solo = await session.ask(OWNERS_QUESTION, thread_id="b-solo")
            solo_seconds = time.perf_counter() - started
            assert "urn:li:corpuser:payments-data-eng" in solo.answer

            a_started = time.perf_counter()
            a = asyncio.create_task(session.ask(DEMO_QUESTION, thread_id="a", mode="no_publish"))
            # A is inside its experiment once the slow step runs. B is timed from that moment: on the old code,
            # which ran the experiment on the event loop, this wait only returned once A's experiment was over.
            assert await asyncio.to_thread(SLOW_STARTED.wait, 60)
            b = await session.ask(OWNERS_QUESTION, thread_id="b")
            b_seconds = time.perf_counter() - SLOW_STARTED_AT[0]
            assert "urn:li:corpuser:payments-data-eng" in b.answer
            a_running = not a.done()
            first = await a
            return solo_seconds, b_seconds, time.perf_counter() - a_started, a_running, first

    solo_seconds, b_seconds, a_seconds, a_running, first = asyncio.run(go())
    print(f"catalog question alone {solo_seconds:.2f} s, during A {b_seconds:.2f} s; A took {a_seconds:.2f} s")
    assert a_running, "B must finish before A"
    assert b_seconds < 5 * solo_seconds + 1, (b_seconds, solo_seconds)
    assert a_seconds >= 2 * SLOW_SECONDS
    model, review = first.state.model_results  # the slow fraud detector and the demo's regressor
    assert model.urn == FRAUD_MODEL_URN and model.metrics is not None and str(first.state.verdict) == "BLOCK"
    assert review.urn == REVIEW_MODEL_URN and review.metrics is not None
    assert not first.state.failures


class Staggered:
    """The real thread executor, each job delayed (earlier models longest, so they finish last), and the job of
    the model named `fail` raising an ordinary exception, as a crash inside a job would."""

    def __init__(self, fail: str) -> None:
        self.inner = ThreadExecutor(3)
        self.fail = fail
        self.finished: list[str] = []

    async def run(self, fn: Callable[..., R], /, *args: object) -> R:
        model = args[0]
        assert hasattr(model, "name")
        delay = {"m0": 0.6, "m1": 0.3, "m2": 0.0}[model.name]

        def job() -> R:
            time.sleep(delay)
            if model.name == self.fail:
                raise RuntimeError("the worker crashed")
            result = fn(*args)
            self.finished.append(model.name)
            return result

        return await self.inner.run(job)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.slow
def test_measure_keeps_the_discovery_order_and_the_other_models_when_one_job_fails(
    settings: ProvenanceSettings,
) -> None:
    async def go() -> tuple[dict[str, Any], list[str]]:
        async with open_session(settings) as session:
            turn = await session.ask(DEMO_QUESTION, thread_id="t", mode="no_publish")
        state = turn.state
        assert state.discovery is not None
        fraud = next(m for m in state.discovery.production_models if m.urn == FRAUD_MODEL_URN)
        models = [fraud.model_copy(update={"urn": f"{fraud.urn}-{i}", "name": f"m{i}"}) for i in range(3)]
        discovery = state.discovery.model_copy(update={"models": models})
        state = dataclasses.replace(state, discovery=discovery, planned_run_id=None, failures=[], model_results=[])
        executor = Staggered(fail="m1")
        handle = CatalogHandle(settings)
        ctx = AgentContext(settings=settings, catalog=handle, executor=executor)
        try:
            update = await make_measure(ctx)(state)
        finally:
            await ctx.jobs.aclose()
            await handle.aclose()
        return update, executor.finished

    update, finished = asyncio.run(go())
    assert finished == ["m2", "m0"]  # they ran at once: the last model finished first
    results: list[ModelEvidence] = update["model_results"]
    assert [r.name for r in results] == ["m0", "m1", "m2"]
    assert results[0].metrics is not None and results[2].metrics is not None
    assert results[1].metrics is None and str(results[1].verdict) == "INCOMPLETE"
    assert [r.code for r in results[1].reasons] == ["experiment_error"]
    assert "the worker crashed" in results[1].reasons[0].message
    (failure,) = update["failures"]
    assert failure.stage == "experiment" and failure.kind == "error" and "m1: RuntimeError" in failure.message
    staged = {p.name for p in staging_dir(settings.home, update["planned_run_id"]).iterdir()}
    assert {"m0-roc.png", "m2-shift.png"} <= staged and not any(name.startswith("m1") for name in staged)


@pytest.mark.slow
def test_worker_processes_reach_the_same_evidence_as_threads(settings: ProvenanceSettings) -> None:
    """PROVENANCE_EXECUTOR=process: the experiment runs in worker processes (the job, its arguments and the model's
    evidence cross by pickling) and the run's verdict and numbers equal the thread pool's."""

    async def measured(executor: str) -> list[ModelEvidence]:
        chosen = settings.model_copy(update={"provenance_executor": executor})
        async with open_session(chosen, record=False) as session:
            assert (
                type(session.context.jobs).__name__
                == {"thread": "ThreadExecutor", "process": "ProcessExecutor"}[executor]
            )
            turn = await session.ask(DEMO_QUESTION, thread_id=f"via-{executor}", mode="no_publish")
            assert not turn.state.failures, turn.state.failures
            return turn.state.model_results

    threads, processes = asyncio.run(measured("thread")), asyncio.run(measured("process"))
    assert [m.verdict for m in processes] == [m.verdict for m in threads] == ["BLOCK", "BLOCK"]
    assert [m.task for m in processes] == ["binary", "regression"]  # the regressor's arrays cross processes too
    assert [m.metrics for m in processes] == [m.metrics for m in threads]
    assert {Path(p).name for m in processes for p in m.plots.values()} == {
        Path(p).name for m in threads for p in m.plots.values()
    }
