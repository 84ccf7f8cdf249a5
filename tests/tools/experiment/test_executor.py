"""The experiment executor: jobs off the event loop, bounded by the pool size, in order, cancellable."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from tools.experiment.executor import JobCancelled, ThreadExecutor
from tools.settings import ProvenanceSettings


def test_jobs_run_at_once_up_to_the_pool_size_and_results_keep_their_order() -> None:
    running, peak, guard = 0, 0, threading.Lock()

    def job(index: int, seconds: float) -> int:
        nonlocal running, peak
        with guard:
            running += 1
            peak = max(peak, running)
        time.sleep(seconds)
        with guard:
            running -= 1
        return index

    async def go() -> tuple[list[int], float]:
        executor = ThreadExecutor(2)
        started = time.perf_counter()
        try:
            results = await asyncio.gather(*(executor.run(job, i, 0.3 - 0.05 * i) for i in range(4)))
        finally:
            await executor.aclose()
        return results, time.perf_counter() - started

    results, wall = asyncio.run(go())
    assert results == [0, 1, 2, 3]
    assert peak == 2
    assert wall < 0.3 + 0.25 + 0.2 + 0.15  # less than one after another


def test_the_event_loop_keeps_running_during_a_job() -> None:
    async def go() -> int:
        executor = ThreadExecutor(1)
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(tick())
        try:
            await executor.run(time.sleep, 0.5)
        finally:
            ticker.cancel()
            await executor.aclose()
        return ticks

    assert asyncio.run(go()) >= 20


def test_an_exception_in_a_job_reaches_the_caller() -> None:
    def job() -> None:
        raise ValueError("bad model")

    async def go() -> None:
        executor = ThreadExecutor(1)
        try:
            await executor.run(job)
        finally:
            await executor.aclose()

    with pytest.raises(ValueError, match="bad model"):
        asyncio.run(go())


def test_cancelling_the_caller_drops_queued_jobs_and_lets_the_running_one_finish_unseen() -> None:
    """Threads cannot be stopped: the running job finishes, its result is dropped; a queued job never starts."""
    release, started, ran = threading.Event(), threading.Event(), []

    def blocking(name: str) -> str:
        started.set()
        release.wait(10)
        ran.append(name)
        return name

    async def go() -> None:
        executor = ThreadExecutor(1)
        first = asyncio.create_task(executor.run(blocking, "running"))
        await asyncio.to_thread(started.wait, 10)
        second = asyncio.create_task(executor.run(ran.append, "queued"))
        await asyncio.sleep(0.05)
        first.cancel()
        second.cancel()
        for task in (first, second):
            with pytest.raises(asyncio.CancelledError):
                await task
        release.set()
        await executor.aclose()  # waits for the running job

    asyncio.run(go())
    assert ran == ["running"]


def test_shutting_down_cancels_queued_jobs_as_an_ordinary_failure() -> None:
    release, started = threading.Event(), threading.Event()

    def blocking() -> None:
        started.set()
        release.wait(10)

    async def go() -> None:
        executor = ThreadExecutor(1)
        first = asyncio.create_task(executor.run(blocking))
        await asyncio.to_thread(started.wait, 10)
        queued = asyncio.create_task(executor.run(time.sleep, 0))
        await asyncio.sleep(0.05)
        closing = asyncio.create_task(executor.aclose())
        with pytest.raises(JobCancelled):
            await queued
        release.set()
        await closing
        await first
        assert await executor.run(sum, [1, 2]) == 3  # a closed executor starts afresh

    asyncio.run(go())


def test_the_pool_size_comes_from_provenance_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVENANCE_WORKERS", "3")
    assert ProvenanceSettings().workers == 3
    monkeypatch.delenv("PROVENANCE_WORKERS")
    assert ProvenanceSettings().workers >= 1
    with pytest.raises(ValueError):
        ThreadExecutor(0)
