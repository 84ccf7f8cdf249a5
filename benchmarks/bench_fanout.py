"""Affected models measured one after another vs in parallel (the experiment executor), on the demo pipelines.

    .venv/bin/python benchmarks/bench_fanout.py [--rows 200000] [--repeats 3]

Each model job is what `measure` runs per production model minus the file reads: baseline + mutated inference
(`run_experiment`, cold baseline cache) and `compute_metrics`, for `scale(txn_amount, factor=100)`. The four jobs
alternate the two demo pipelines on the same evaluation rows. Sequential = one job after another on the caller's
thread (the old `measure`); parallel = all jobs through the experiment executor `measure` uses, threads (the
default) and processes (PROVENANCE_EXECUTOR=process; workers started and through their imports before the timing,
the frame and pipeline pickled to them per job), PROVENANCE_WORKERS = the core count.
Target: 4 models in parallel <= 0.6x sequential on 2 cores.

The first table is the product's own job: `tools.experiment.job.measure_model` (verify and unpickle the artifact,
read and sample the evaluation file, inference, metrics with segments, plots) for the demo's production models as
the real discovery returns them (seeded home, embedded catalog), a fresh baseline cache per job, the two models
alternating; a worker process receives only the model's catalog entry and paths. The second is the bare experiment
on --rows rows (the frame and pipeline pickled to process workers per job).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_experiment import eval_frame, experiment, load_pipelines  # noqa: E402

from agent.conversation import open_session  # noqa: E402
from seed.seeding import seed_demo  # noqa: E402
from tools.experiment.job import measure_model  # noqa: E402
from tools.experiment.runner import BaselineCache  # noqa: E402
from tools.mutations import parse_mutation  # noqa: E402
from tools.runtime.executor import ExecutorKind, make_executor  # noqa: E402
from tools.settings import ProvenanceSettings  # noqa: E402

MUTATION = parse_mutation("scale", {"factor": 100})
QUESTION = "What happens if payments.transactions.amount is sent in cents instead of dollars?"


def jobs(pipelines: dict[str, Any], count: int) -> list[tuple[Any, str]]:
    names = sorted(pipelines)
    return [(pipelines[names[i % len(names)]], names[i % len(names)]) for i in range(count)]


def sequential(pipelines: dict[str, Any], frame: Any, count: int) -> float:
    started = time.perf_counter()
    for pipeline, name in jobs(pipelines, count):
        experiment(pipeline, frame, name, "txn_amount", MUTATION)
    return time.perf_counter() - started


async def parallel(pipelines: dict[str, Any], frame: Any, count: int, workers: int, kind: ExecutorKind) -> float:
    executor = make_executor(kind, workers)
    try:
        # every worker started and through its imports (a sleeping job occupies one each): not timed
        await asyncio.gather(*(executor.run(time.sleep, 1.0) for _ in range(workers)))
        started = time.perf_counter()
        await asyncio.gather(
            *(executor.run(experiment, p, frame, name, "txn_amount", MUTATION) for p, name in jobs(pipelines, count))
        )
        return time.perf_counter() - started
    finally:
        await executor.aclose()


async def demo_models(home: Path) -> list[Any]:
    """The production models a real assessment turn discovers on the seeded demo catalog."""
    async with open_session(ProvenanceSettings(provenance_home=home), record=False) as session:
        turn = await session.ask(QUESTION, thread_id="fanout", mode="no_publish")
    assert turn.state.discovery is not None, turn.state.failures
    return turn.state.discovery.production_models


def real_jobs(models: list[Any], count: int, home: Path, staging: Path) -> list[tuple[Any, ...]]:
    base_dir = ProvenanceSettings(provenance_home=home).lite_db.parent
    return [(models[i % len(models)], MUTATION, base_dir, staging, BaselineCache()) for i in range(count)]


def real_sequential(models: list[Any], count: int, home: Path, staging: Path) -> float:
    started = time.perf_counter()
    for job in real_jobs(models, count, home, staging):
        measure_model(*job)
    return time.perf_counter() - started


async def real_parallel(
    models: list[Any], count: int, home: Path, staging: Path, workers: int, kind: ExecutorKind
) -> float:
    executor = make_executor(kind, workers)
    try:
        # every worker started and through its imports (a sleeping job occupies one each): not timed
        await asyncio.gather(*(executor.run(time.sleep, 1.0) for _ in range(workers)))
        started = time.perf_counter()
        await asyncio.gather(*(executor.run(measure_model, *job) for job in real_jobs(models, count, home, staging)))
        return time.perf_counter() - started
    finally:
        await executor.aclose()


def real_table(executors: list[ExecutorKind], repeats: int, workers: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, staging = Path(tmp) / "home", Path(tmp) / "staging"
        seed_demo(ProvenanceSettings(provenance_home=home))
        staging.mkdir()
        models = asyncio.run(demo_models(home))
        names = ", ".join(m.name for m in models)
        print(f"measure_model jobs on the demo's production models ({names}); workers: {workers}; best of {repeats}")
        print(f"{'models':>6} | {'pool':>7} | {'sequential s':>12} | {'parallel s':>10} | {'par/seq':>7} | target")
        for count in (1, 4):
            seq = min(real_sequential(models, count, home, staging) for _ in range(repeats))
            for kind in executors:
                runs = [asyncio.run(real_parallel(models, count, home, staging, workers, kind)) for _ in range(repeats)]
                par = min(runs)
                target = "<= 0.6" if count == 4 else ""
                print(f"{count:>6} | {kind:>7} | {seq:12.2f} | {par:10.2f} | {par / seq:7.2f} | {target}")
        print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--executor", choices=["thread", "process"], nargs="+", default=["thread", "process"])
    args = parser.parse_args()
    workers = os.cpu_count() or 1
    real_table(args.executor, args.repeats, workers)
    with tempfile.TemporaryDirectory() as tmp:
        pipelines = load_pipelines(Path(tmp))
        frame = eval_frame(args.rows)
        print(f"rows: {args.rows:,}  cores: {os.cpu_count()}  workers: {workers}  best of {args.repeats}")
        print(f"{'models':>6} | {'pool':>7} | {'sequential s':>12} | {'parallel s':>10} | {'par/seq':>7} | target")
        for count in (1, 4):
            seq = min(sequential(pipelines, frame, count) for _ in range(args.repeats))
            for kind in args.executor:
                par = min(asyncio.run(parallel(pipelines, frame, count, workers, kind)) for _ in range(args.repeats))
                target = "<= 0.6" if count == 4 else ""
                print(f"{count:>6} | {kind:>7} | {seq:12.2f} | {par:10.2f} | {par / seq:7.2f} | {target}")


if __name__ == "__main__":
    main()
