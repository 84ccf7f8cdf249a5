"""Where the experiment's CPU-bound work runs: off the event loop, at most PROVENANCE_WORKERS jobs at a time.

Unpickling, scikit-learn inference, metrics and plots take seconds; run on the event loop they would freeze every
other conversation of the process (the chat serves many). `ExperimentExecutor.run(fn, *args)` runs `fn(*args)` in a
pool and awaits its result.

Threads by default, processes opt-in (PROVENANCE_EXECUTOR=process, `ProcessExecutor`). Measured on 2 cores with
the demo (pool of 2): a turn takes ~0.43 s with threads as inline, ~0.6-0.8 s with processes (more while workers
start); during 4 concurrent turns the event loop's longest stall fell from 0.26-0.52 s inline to ~0.05 s with
either. Threads share the baseline cache and need no pickling; but scikit-learn pipelines hold the GIL much of the
time, so 4 models in threads take 0.92x sequential, in processes 0.68x (benchmarks/bench_fanout.py).

Cancellation: when the awaiting task is cancelled, a job still queued never starts; a job already running in a
thread cannot be stopped, so it finishes and its result is dropped. A job cancelled by the executor's shutdown
(not by the caller) raises `JobCancelled`, an ordinary exception, so the caller records it as a failure.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Generic, Literal, Protocol, TypeVar

R = TypeVar("R")
P = TypeVar("P", ThreadPoolExecutor, ProcessPoolExecutor)
ExecutorKind = Literal["thread", "process"]


class JobCancelled(RuntimeError):
    """The job was cancelled by the executor (it shut down), not by the task awaiting it."""


class ExperimentExecutor(Protocol):
    async def run(self, fn: Callable[..., R], /, *args: object) -> R:
        """`fn(*args)` off the event loop; its result, or its exception."""
        ...

    async def aclose(self) -> None:
        """Drop queued jobs, wait for running ones; a later `run` starts afresh."""
        ...


def default_workers() -> int:
    return os.cpu_count() or 1


class _LazyPool(Generic[P]):
    """A pool of `workers`, started on first use (so creating an executor costs nothing) and again after a close."""

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers or default_workers()
        self._pool: P | None = None
        self._guard = threading.Lock()

    def _new_pool(self) -> P:
        raise NotImplementedError

    def _get_pool(self) -> P:
        with self._guard:
            if self._pool is None:
                self._pool = self._new_pool()
            return self._pool

    def _drop(self, pool: P) -> None:
        with self._guard:
            if self._pool is pool:
                self._pool = None

    async def _await(self, future: Future[R]) -> R:
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if future.cancelled() and task is not None and not task.cancelling():
                raise JobCancelled("the experiment job was cancelled: the executor shut down") from None
            raise  # the caller was cancelled: a queued job never runs, a running one finishes unseen

    async def aclose(self) -> None:
        with self._guard:
            pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)


class ThreadExecutor(_LazyPool[ThreadPoolExecutor]):
    """A thread pool of `workers` threads (the default executor)."""

    def _new_pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(self.workers, thread_name_prefix="provenance-experiment")

    async def run(self, fn: Callable[..., R], /, *args: object) -> R:
        # The job sees the caller's context variables (e.g. the turn's call sink), as a task would.
        call = functools.partial(contextvars.copy_context().run, fn, *args)
        return await self._await(self._get_pool().submit(call))


class WorkerCrashed(RuntimeError):
    """A worker process died mid-job (killed, out of memory, a crash in native code)."""


class ProcessExecutor(_LazyPool[ProcessPoolExecutor]):
    """A pool of `workers` processes (spawned: the parent's threads and sockets are not inherited). Opt-in with
    PROVENANCE_EXECUTOR=process: a CPU-bound job then holds no lock the event loop needs, and models scale with
    the cores, at the price of a worker start (~2-3 s of imports, once) and of pickling the job's arguments and
    result. Context variables do not cross into the worker (experiment jobs use none).

    A dead worker breaks the pool: the job raises WorkerCrashed (an ordinary exception, so the model is INCOMPLETE
    with the reason) and the next `run` starts a new pool. Cancellation is as for threads."""

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))

    async def run(self, fn: Callable[..., R], /, *args: object) -> R:
        pool = self._get_pool()
        try:
            future = pool.submit(fn, *args)
        except BrokenProcessPool:  # an earlier job's worker died: start afresh
            self._drop(pool)
            pool = self._get_pool()
            future = pool.submit(fn, *args)
        try:
            return await self._await(future)
        except BrokenProcessPool as exc:
            self._drop(pool)
            raise WorkerCrashed(f"an experiment worker process died during the job ({exc})") from None


def make_executor(kind: ExecutorKind, workers: int | None = None) -> ExperimentExecutor:
    return ProcessExecutor(workers) if kind == "process" else ThreadExecutor(workers)
