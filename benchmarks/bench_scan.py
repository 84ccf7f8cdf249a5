"""A tolerance scan of the demo's production models vs single assessments, on a fresh seeded home.

    .venv/bin/python benchmarks/bench_scan.py [--repeats 1]

Rows: the whole scan of payments.public.transactions.amount (both production models, every axis a numeric field
gets: 7 axes), wall and CPU seconds, doses measured and seconds per dose; then one `assess_change` (the graph,
no publication) for comparison, and the ratio of a dose's cost to an assessment's. Target (issue 26): the scan of
the demo's production models <= 60 s wall on 2 cores. Nothing is asserted; the numbers are printed.
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
from tools.settings import ProvenanceSettings
from tools.tolerance.scan import scan


def timed_scan(settings: ProvenanceSettings) -> tuple[float, float, int]:
    found, _, _ = asyncio.run(discover(settings, POSTGRES_TABLE_URN, "amount"))
    wall, cpu = time.perf_counter(), time.process_time()
    result = scan(found, settings.lite_db.parent, load_policy())
    return time.perf_counter() - wall, time.process_time() - cpu, result.experiments


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
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = ProvenanceSettings(provenance_home=Path(tmp) / "home")
        seed_demo(settings)
        scans = [timed_scan(settings) for _ in range(args.repeats)]
        assess = min(timed_assess(settings) for _ in range(args.repeats))
    wall, cpu, doses = min(scans)
    print(f"{'what':<44} | {'wall s':>7} | {'CPU s':>6} | {'doses':>5} | {'s/dose':>6} | target")
    print(f"{'scan of amount (2 models, 7 axes each)':<44} | {wall:7.1f} | {cpu:6.1f} | {doses:5d} | "
          f"{wall / doses:6.3f} | <= 60 s wall")  # fmt: skip
    print(f"{'one assess_change (scale x100, both models)':<44} | {assess:7.2f} | {'':>6} | {'':>5} | {'':>6} |")
    print(f"a dose costs {wall / doses / assess:.2f}x an assessment of both models "
          f"({wall / doses / (assess / 2):.2f}x per model)")  # fmt: skip


if __name__ == "__main__":
    main()
