"""The experiment executor: jobs off the event loop, bounded by the pool size, in order, cancellable."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tools.experiment.job import SharedBaselineCache, process_cache
from tools.runtime.executor import (
    JobCancelled,
    ProcessExecutor,
    ThreadExecutor,
    WorkerCrashed,
    make_executor,
)
from tools.settings import ProvenanceSettings

REPO = Path(__file__).resolve().parents[3]


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


# ---------------------------------------------------------------------------------------- PROVENANCE_EXECUTOR=process
# Job functions must be importable by a worker process: module level, no closures.


def _pid_and_square(value: int) -> tuple[int, int]:
    return os.getpid(), value * value


def _fail(message: str) -> None:
    raise ValueError(message)


def _die() -> None:
    os._exit(137)  # as the OOM killer would: no exception, no cleanup


def _cache_identity(cache: SharedBaselineCache) -> tuple[int, bool]:
    return os.getpid(), cache is process_cache()


@pytest.mark.slow
def test_process_jobs_run_in_worker_processes_and_keep_their_order() -> None:
    async def go() -> list[tuple[int, int]]:
        executor = ProcessExecutor(2)
        try:
            return await asyncio.gather(*(executor.run(_pid_and_square, i) for i in range(4)))
        finally:
            await executor.aclose()

    results = asyncio.run(go())
    assert [square for _, square in results] == [0, 1, 4, 9]
    assert os.getpid() not in {pid for pid, _ in results}


@pytest.mark.slow
def test_a_process_job_exception_reaches_the_caller() -> None:
    async def go() -> None:
        executor = ProcessExecutor(1)
        try:
            await executor.run(_fail, "bad row")
        finally:
            await executor.aclose()

    with pytest.raises(ValueError, match="bad row"):
        asyncio.run(go())


@pytest.mark.slow
def test_a_dead_worker_is_a_job_failure_and_the_next_job_gets_a_new_pool() -> None:
    async def go() -> tuple[str, int]:
        executor = ProcessExecutor(1)
        try:
            with pytest.raises(WorkerCrashed, match="worker process died") as crashed:
                await executor.run(_die)
            _, square = await executor.run(_pid_and_square, 3)
            return str(crashed.value), square
        finally:
            await executor.aclose()

    message, square = asyncio.run(go())
    assert "died" in message and square == 9


@pytest.mark.slow
def test_the_baseline_cache_sent_to_a_worker_becomes_that_workers_own() -> None:
    async def go() -> tuple[int, bool]:
        executor = ProcessExecutor(1)
        try:
            return await executor.run(_cache_identity, SharedBaselineCache())
        finally:
            await executor.aclose()

    pid, is_process_cache = asyncio.run(go())
    assert pid != os.getpid() and is_process_cache


def test_the_executor_kind_comes_from_the_settings() -> None:
    assert isinstance(
        make_executor(ProvenanceSettings(provenance_executor="process").provenance_executor), ProcessExecutor
    )
    assert isinstance(make_executor(ProvenanceSettings().provenance_executor), ThreadExecutor)


def _niceness() -> int:
    return os.nice(0)


@pytest.mark.slow
def test_warm_starts_every_worker_and_workers_yield_to_the_conversation() -> None:
    async def go() -> tuple[set[int], int]:
        executor = ProcessExecutor(2)
        try:
            executor.warm()
            pool = executor._get_pool()
            for _ in range(200):  # started without waiting for a job: both workers come up on their own
                if len(pool._processes) == 2:
                    break
                await asyncio.sleep(0.05)
            pids = set(pool._processes)
            return pids, await executor.run(_niceness)
        finally:
            await executor.aclose()

    pids, niceness = asyncio.run(go())
    assert len(pids) == 2
    assert niceness == min(
        19, os.nice(0) + 10
    )  # experiments give way to the event loop and the MCP server on busy cores


@pytest.mark.parametrize(
    ("setting", "long_lived", "kind"),
    [("auto", True, "process"), ("auto", False, "thread"), ("thread", True, "thread"), ("process", False, "process")],
)
def test_auto_means_processes_for_the_chat_and_threads_for_one_shot_commands(
    monkeypatch: pytest.MonkeyPatch, setting: str, long_lived: bool, kind: str
) -> None:
    monkeypatch.setenv("PROVENANCE_EXECUTOR", setting)
    assert ProvenanceSettings().executor_kind(long_lived) == kind


@pytest.mark.slow
def test_closing_with_no_job_stops_the_workers_instead_of_awaiting_their_imports() -> None:
    """The chat's exit on SIGTERM waited for workers still importing (~6 s); an idle worker holds nothing."""

    async def go() -> list[int | None]:
        executor = ProcessExecutor(2)
        executor.warm()
        pool = executor._get_pool()
        for _ in range(200):
            if len(pool._processes) == 2:
                break
            await asyncio.sleep(0.01)
        workers = list(pool._processes.values())
        await executor.aclose()  # at once: the workers are still importing scikit-learn and friends
        return [w.exitcode for w in workers]

    assert asyncio.run(go()) == [-15, -15]  # terminated (SIGTERM), not joined after their imports


@pytest.mark.slow
def test_closing_with_a_job_in_flight_lets_the_workers_end_on_their_own() -> None:
    async def go() -> tuple[object, list[int | None]]:
        executor = ProcessExecutor(1)
        job = asyncio.ensure_future(executor.run(os.getpid))
        await asyncio.sleep(0.05)
        workers = list(executor._get_pool()._processes.values())
        await executor.aclose()  # the job was queued behind the worker's imports: dropped, the worker not killed
        outcome = await asyncio.gather(job, return_exceptions=True)
        return outcome[0], [w.exitcode for w in workers]

    outcome, codes = asyncio.run(go())
    assert isinstance(outcome, (int, JobCancelled)) and codes == [0]


_KILLED_PARENT = """
import os
from multiprocessing import forkserver
from tools.runtime.executor import ProcessExecutor
executor = ProcessExecutor(2)
executor.warm(wait=True)
print(" ".join(map(str, [*executor._get_pool()._processes, forkserver._forkserver._forkserver_pid])), flush=True)
os._exit(137)  # what SIGKILL or the OOM killer leave behind: no shutdown of the pool
"""


def _alive(pid: int) -> bool:
    """Running, not a zombie (an orphan's exit is reaped by whatever runs as pid 1, which may never do it)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    return fields[0] != "Z"


@pytest.mark.slow
def test_workers_of_a_killed_parent_exit_instead_of_idling_forever(tmp_path: Path) -> None:
    """The chat or the warm service killed outright left its two workers behind (seen: orphans of a killed service
    still idle minutes later)."""
    out = tmp_path / "workers.txt"
    with out.open("w") as sink:  # a file, not a pipe: orphans holding the pipe would hold this test too
        done = subprocess.run(
            [sys.executable, "-c", _KILLED_PARENT], cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, timeout=120
        )
    assert done.returncode == 137, out.read_text()
    # the first line; multiprocessing's resource tracker may add a warning as it cleans up after the killed parent
    *workers, fork_server = [int(pid) for pid in out.read_text().splitlines()[0].split()]
    assert len(workers) == 2
    deadline = time.monotonic() + 15
    while any(map(_alive, [*workers, fork_server])) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [pid for pid in [*workers, fork_server] if _alive(pid)]
    for pid in alive:  # leave no orphan behind even when the test fails
        os.kill(pid, 9)
    assert not alive, f"workers or their fork server {alive} outlived their killed parent ({fork_server}: the server)"
