"""Where the experiment's CPU-bound work runs: off the event loop, at most PROVENANCE_WORKERS jobs at a time.

Unpickling, scikit-learn inference, metrics and plots take seconds; run on the event loop they would freeze every
other conversation of the process (the chat serves many). `ExperimentExecutor.run(fn, *args)` runs `fn(*args)` in a
pool and awaits its result.

Which pool is PROVENANCE_EXECUTOR's: `auto` (the default) gives the chat worker processes, started with it in the
background, and one-shot CLI commands threads (`ProvenanceSettings.executor_kind`). Measured on 2 cores with the
demo (benchmarks/bench_concurrency.py, 20 concurrent assessments through one session): threads 0.95 turns/s and a
0.94 s solo turn, processes 1.9 turns/s and 0.6 s (the two models of a turn really run at once, and no job holds
the GIL the event loop needs). A CLI assessment would pay a worker's start (~2-3 s of imports) for one job, so it
keeps threads, which share the baseline cache and need no pickling. Worker processes run at a lower CPU priority
(nice +10): on busy cores the conversation, the MCP server and the catalog endpoint go first.

Cancellation: when the awaiting task is cancelled, a job still queued never starts; a job already running in a
thread cannot be stopped, so it finishes and its result is dropped. A job cancelled by the executor's shutdown
(not by the caller) raises `JobCancelled`, an ordinary exception, so the caller records it as a failure.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import importlib
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Generic, Literal, Protocol, TypeVar

from tools.errors import ServiceFailure

R = TypeVar("R")
P = TypeVar("P", ThreadPoolExecutor, ProcessPoolExecutor)
ExecutorKind = Literal["thread", "process"]


class JobCancelled(ServiceFailure, RuntimeError):
    """The job was cancelled by the executor (it shut down), not by the task awaiting it."""


class ExperimentExecutor(Protocol):
    async def run(self, fn: Callable[..., R], /, *args: object) -> R:
        """`fn(*args)` off the event loop; its result, or its exception."""
        ...

    async def aclose(self) -> None:
        """Drop queued jobs, wait for running ones; a later `run` starts afresh."""
        ...

    def warm(self, *, wait: bool = False) -> None:
        """Start the workers now (a process pool's workers take ~2-3 s to import); with `wait`, return once each
        has started."""
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

    def warm(self, *, wait: bool = False) -> None:
        pool = self._get_pool()
        # one trivial job per worker: the pool starts them all, and a worker answers only after its initializer
        started = [pool.submit(os.getpid) for _ in range(self.workers)]
        if wait:
            for future in started:
                future.result()

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


class WorkerCrashed(ServiceFailure, RuntimeError):
    """A worker process died mid-job (killed, out of memory, a crash in native code)."""


class ProcessExecutor(_LazyPool[ProcessPoolExecutor]):
    """A pool of `workers` processes, the chat's default (PROVENANCE_EXECUTOR=auto or process): a CPU-bound job then
    holds no lock the event loop needs, and models scale with the cores, at the price of pickling the job's arguments
    and result. Context variables do not cross into the worker (experiment jobs use none).

    Workers are forked from multiprocessing's fork server, a clean single-threaded process that imports what a job
    needs (EXPERIMENT_IMPORTS, ~4 CPU s) once per process: a spawned worker imported it all itself, so two workers
    cost ~10 CPU s, a new pool after a crash as much again; forked, ~5 s for the first pool and ~0.2 s of waiting
    for a later one. Not `fork`: the parent's threads and sockets (the event loop, the MCP session) are not
    inherited. Each worker takes the parent's environment and directory as the pool starts (`_worker_start`), as a
    spawned one did.

    A dead worker breaks the pool: the job raises WorkerCrashed (an ordinary exception, so the model is INCOMPLETE
    with the reason) and the next `run` starts a new pool. Cancellation is as for threads."""

    def __init__(self, workers: int | None = None) -> None:
        super().__init__(workers)
        self._jobs = 0  # jobs of `run` not yet answered (warm()'s are not jobs)

    def _new_pool(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(EXPERIMENT_IMPORTS))  # read when the fork server starts: the first pool
        spawned_as = (dict(os.environ), os.getcwd())
        return ProcessPoolExecutor(self.workers, mp_context=context, initializer=_worker_start, initargs=spawned_as)

    async def aclose(self) -> None:
        """As for threads, but with no job running the workers are stopped, not awaited: a worker still importing
        held the chat's exit 2-3 s (Ctrl-C or SIGTERM took ~6 s), and an idle one holds nothing to finish."""
        with self._guard:
            pool, idle = self._pool, self._jobs == 0
        if pool is not None and idle:
            for process in list((pool._processes or {}).values()):  # noqa: SLF001 - the pool's own workers
                process.terminate()
        await super().aclose()

    async def run(self, fn: Callable[..., R], /, *args: object) -> R:
        self._jobs += 1
        try:
            return await self._run(fn, *args)
        finally:
            self._jobs -= 1

    async def _run(self, fn: Callable[..., R], /, *args: object) -> R:
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


# What an experiment job imports on first use (~1.5-2 s: scikit-learn, scipy, pandas, matplotlib): a worker imports
# it as it starts, so `warm()` makes the first assessment's jobs as fast as the later ones; the assessment service
# (agent/service.py) does the same in its own process.
EXPERIMENT_IMPORTS = (
    "sklearn.pipeline",
    "sklearn.ensemble",  # unpickling a tree ensemble, the commonest model kind, imports it (~0.35 s) on first use
    "tools.evidence.report",
    "scipy.stats",
    "tools.experiment.job",
    "tools.experiment.task_metrics",
    "tools.evidence.plots",
)


def import_experiment_modules(*, first_figure: bool = False) -> None:
    """Import what a job needs; with `first_figure`, also draw and encode one small figure: matplotlib reads its font
    list on the first one (~1 s), which a long-lived process pays once, before its first request."""
    for module in EXPERIMENT_IMPORTS:
        importlib.import_module(module)
    if first_figure:
        import io

        from matplotlib.figure import Figure

        figure = Figure(figsize=(3, 2))
        axes = figure.add_subplot()
        axes.plot([0, 1], [0, 1], label="warm")
        axes.set(title="warm", xlabel="x", ylabel="y")
        axes.legend(fontsize=8)
        for size in (7, 8, 9, 10):  # the sizes the run plots use (tools/evidence/plots*.py)
            axes.text(0.5, 0.5, "0123456789 abc ABC %.-", fontsize=size)
        figure.savefig(io.BytesIO(), format="png")


def _worker_start(environment: dict[str, str], directory: str) -> None:
    """Each worker's initializer. The fork server started with the environment and directory of the pool's first
    start: a job reads the settings (PROVENANCE_TASKS, PROVENANCE_SKOPS_TRUSTED…) and relative paths as they are
    now. Experiments are batch work beside the conversations of the parent process, so they yield the CPU to it;
    and what jobs need (modules, matplotlib's fonts) is loaded before the first job."""
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(directory)
    os.nice(10)
    _exit_with_owner()
    import_experiment_modules(first_figure=True)


def _exit_with_owner() -> None:
    """A worker whose pool's owner was killed (SIGKILL, the OOM killer) never hears of it: it holds both ends of the
    pool's call queue, so no end-of-file reaches it, and it would idle forever. Nor does its parent, the fork server,
    end first: it waits for every process holding its liveness pipe, the workers among them. multiprocessing gives
    each worker a sentinel of the owner that is ready once the owner has ended; the worker waits on it, and leaves."""
    owner = multiprocessing.parent_process()
    if owner is None:  # not started by multiprocessing: no pool to outlive
        return

    def watch() -> None:
        owner.join()
        os._exit(0)

    threading.Thread(target=watch, name="provenance-owner-watch", daemon=True).start()


def make_executor(kind: ExecutorKind, workers: int | None = None) -> ExperimentExecutor:
    return ProcessExecutor(workers) if kind == "process" else ThreadExecutor(workers)


_shared: ExperimentExecutor | None = None


def share_executor(executor: ExperimentExecutor | None) -> None:
    """Make `executor` the one every later `AgentContext` of this process uses (None: each makes its own again).

    The warm service sets its warm worker processes here, so the commands it runs (each builds its own context, as
    a CLI run does) do not start workers of their own: a served `check` runs its models on both cores (1.3 s) instead
    of on threads of one process (1.9 s)."""
    global _shared
    _shared = executor


def shared_executor() -> ExperimentExecutor | None:
    return _shared
