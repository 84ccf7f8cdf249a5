"""Where the experiment's CPU-bound work runs: off the event loop, at most PROVENANCE_WORKERS jobs at a time.

Unpickling, scikit-learn inference, metrics and plots take seconds; run on the event loop they would freeze every
other conversation of the process (the chat serves many). `ExperimentExecutor.run(fn, *args)` runs `fn(*args)` in a
pool and awaits its result.

Threads, not processes (measured on 2 cores, demo question, pool of 2): a turn takes ~0.43 s with threads as
inline, ~0.6-0.8 s with processes (1.1-1.8 s while workers start); during 4 concurrent turns the event loop's
longest stall fell from 0.26-0.52 s inline to ~0.05 s with either; only threads share the baseline cache and need
no pickling, and numpy/scikit-learn release the GIL in their heavy loops.

Cancellation: when the awaiting task is cancelled, a job still queued never starts; a job already running in a
thread cannot be stopped, so it finishes and its result is dropped. A job cancelled by the executor's shutdown
(not by the caller) raises `JobCancelled`, an ordinary exception, so the caller records it as a failure.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar

R = TypeVar("R")


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


class ThreadExecutor:
    """A thread pool of `workers` threads, started on first use (so creating one costs nothing)."""

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers or default_workers()
        self._pool: ThreadPoolExecutor | None = None
        self._guard = threading.Lock()

    def _get_pool(self) -> ThreadPoolExecutor:
        with self._guard:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="provenance-experiment")
            return self._pool

    async def run(self, fn: Callable[..., R], /, *args: object) -> R:
        # The job sees the caller's context variables (e.g. the turn's call sink), as a task would.
        call = functools.partial(contextvars.copy_context().run, fn, *args)
        future = self._get_pool().submit(call)
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
