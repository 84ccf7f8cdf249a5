"""A tolerance scan of the demo's production models vs single assessments, on a fresh seeded home.

    .venv/bin/python benchmarks/bench_scan.py [--repeats 1]

Rows: the whole scan of payments.public.transactions.amount (both production models, every axis a numeric field
gets: 7 axes, 14 dose searches), wall seconds, doses measured and seconds per dose — in this process (threads,
PROVENANCE_WORKERS = the cores) and on a local Dask cluster of 2 worker processes started here (its start not
timed; the first scan there pays the workers' imports, so the best of --repeats is shown); then one `assess_change`
(the graph, no publication) for comparison. Target: the scan of the demo's production models <= 60 s
wall on 2 cores. Nothing is asserted; the numbers are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from agent.assessment import assess_change
from agent.cli.catalog import discover
from agent.context import AgentContext
from policies import load_policy
from seed.catalog import POSTGRES_TABLE_URN
from seed.seeding import seed_demo
from tools.catalog.handle import CatalogHandle
from tools.mutations import parse_mutation
from tools.runtime.cluster import DaskExecutor
from tools.runtime.executor import ExperimentExecutor
from tools.settings import ProvenanceSettings
from tools.tolerance.scan import scan


def timed_scan(settings: ProvenanceSettings, executor: ExperimentExecutor | None = None) -> tuple[float, int]:
    found, _, _ = asyncio.run(discover(settings, POSTGRES_TABLE_URN, "amount"))
    wall = time.perf_counter()
    result = scan(found, settings.lite_db.parent, load_policy(), executor=executor)
    return time.perf_counter() - wall, result.experiments


def timed_assess(settings: ProvenanceSettings) -> float:
    async def go() -> float:
        async with CatalogHandle(settings) as handle:
            context = AgentContext(settings=settings, policy=load_policy(), catalog=handle)
            await handle.reader()  # the catalog's start is not the assessment's
            started = time.perf_counter()
            await assess_change(context, POSTGRES_TABLE_URN, "amount", parse_mutation("scale", {"factor": 100}))
            return time.perf_counter() - started

    return asyncio.run(go())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    from distributed import LocalCluster

    with tempfile.TemporaryDirectory() as tmp:
        settings = ProvenanceSettings(provenance_home=Path(tmp) / "home")
        seed_demo(settings)
        here = [timed_scan(settings) for _ in range(args.repeats)]
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            executor = DaskExecutor(cluster.scheduler_address)
            there = [timed_scan(settings, executor) for _ in range(args.repeats)]
            asyncio.run(executor.aclose())
        assess = min(timed_assess(settings) for _ in range(args.repeats))
    # cold: the first scan (models prepared, baselines computed; on the cluster, the workers' imports too);
    # warm: the best later one (a process keeps its prepared models and baselines for the next scan)
    print(f"{'what':<44} | {'cold s':>6} | {'warm s':>6} | {'doses':>5} | {'cold s/dose':>11} | target")
    rows = (("scan of amount, in process (threads)", here), ("scan of amount, Dask cluster of 2 workers", there))
    for name, runs in rows:
        cold, doses = runs[0]
        warm = min((wall for wall, _ in runs[1:]), default=float("nan"))
        print(f"{name:<44} | {cold:6.1f} | {warm:6.1f} | {doses:5d} | {cold / doses:11.3f} | <= 60 s wall")
    print(f"{'one assess_change (scale x100, both models)':<44} | {assess:6.2f} |")
    per_dose = here[0][0] / here[0][1]
    print(f"a dose (cold, in process) costs {per_dose / assess:.2f}x one assessment of both models "
          f"({per_dose / (assess / 2):.2f}x of one model's)")  # fmt: skip


if __name__ == "__main__":
    main()
