"""Does one conversation's assessment block another's? Turn latency alone and under load, on the demo catalog.

    .venv/bin/python benchmarks/bench_concurrency.py [--turns 20] [--workers N]

On a fresh seeded home (temporary folder, `provenance seed`), through one Session (the chat's shape: one process,
many conversations), every assessment with publication off:
(a) a solo assessment turn and a solo catalog question (median of 3, after a warm-up turn);
(b) --turns assessment turns at once (the reliability suite's eight questions, round robin): p50/p95, turns/s;
(c) the same load, plus --questions catalog questions from other conversations, one after another, 0.5 s apart,
from 0.5 s after the load started (one sample swings with what the load is doing at that moment: median and worst).
Targets: (b) p95 <= 3x the solo assessment; (c) a question within 2x its solo time.
(b) is bounded below by the CPU the turns need: the line "floor" is --turns x the CPU seconds one solo turn used
(this process, its experiment workers and the MCP server) / the cores, the time in which the last turn could end
if nothing were wasted. The session is the chat's (`long_lived`: experiments in worker processes).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import psutil

from agent.conversation import Session, open_session
from seed.seeding import seed_demo
from tools.settings import ProvenanceSettings

ASSESSMENTS = [
    "What happens if payments.transactions.amount is sent in cents instead of dollars?",
    "What happens if payments.transactions.country has 20% nulls?",
    "What happens if payments.transactions.merchant_category gets a new category 'crypto'?",
    "What happens if payments.transactions.hour is shifted from UTC to CET?",
    "What happens if payments.transactions.amount is rounded to whole dollars?",
    "What happens if payments.transactions.txn_count_1h is multiplied by 10?",
    "What happens if payments.transactions.account_age_days is capped at 30?",
    "What happens if payments.transactions.country 'US' is renamed to 'USA'?",
]
CATALOG_QUESTION = "Who owns payments.public.transactions?"


def tree_cpu_seconds() -> float:
    """User + system CPU seconds of this process and its live children (experiment workers, the MCP server)."""
    me = psutil.Process()
    total = 0.0
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


async def timed(session: Session, question: str, thread: str) -> float:
    started = time.perf_counter()
    turn = await session.ask(question, thread_id=thread, mode="no_publish")
    if turn.state.failures:
        raise RuntimeError(f"{question!r} failed: {[f.message for f in turn.state.failures]}")
    return time.perf_counter() - started


async def measure(home: Path, turns: int, questions: int) -> None:
    settings = ProvenanceSettings(provenance_home=home)
    async with open_session(settings, record=False, long_lived=True) as session:
        await session.context.handle.get()  # the catalog start is not part of a turn
        await timed(session, ASSESSMENTS[0], "warm-up")
        cpu_before = tree_cpu_seconds()
        solo_runs = [await timed(session, ASSESSMENTS[0], f"solo-a{i}") for i in range(3)]
        cpu_per_turn = (tree_cpu_seconds() - cpu_before) / len(solo_runs)
        solo_assess = statistics.median(solo_runs)
        solo_question = statistics.median([await timed(session, CATALOG_QUESTION, f"solo-q{i}") for i in range(3)])

        started = time.perf_counter()
        load = await asyncio.gather(
            *(timed(session, ASSESSMENTS[i % len(ASSESSMENTS)], f"load-{i}") for i in range(turns))
        )
        wall = time.perf_counter() - started

        background = [
            asyncio.create_task(timed(session, ASSESSMENTS[i % len(ASSESSMENTS)], f"busy-{i}")) for i in range(turns)
        ]
        under_load: list[float] = []
        still_running: list[int] = []
        for index in range(questions):
            await asyncio.sleep(0.5)  # the load is running: discovery and experiments are under way
            under_load.append(await timed(session, CATALOG_QUESTION, f"question-under-load-{index}"))
            still_running.append(sum(not task.done() for task in background))
        await asyncio.gather(*background)

    p50, p95 = statistics.median(load), percentile(load, 95)
    print(f"workers: {os.environ.get('PROVENANCE_WORKERS', 'default')}  cores: {os.cpu_count()}")
    print(f"{'measure':<46} | {'seconds':>8} | {'vs solo':>7} | target")
    print(f"{'solo assessment turn (median of 3)':<46} | {solo_assess:8.2f} | {1:7.2f} |")
    print(f"{'solo catalog question (median of 3)':<46} | {solo_question:8.2f} | {1:7.2f} |")
    print(f"{f'{turns} concurrent assessment turns: p50':<46} | {p50:8.2f} | {p50 / solo_assess:7.2f} |")
    print(f"{f'{turns} concurrent assessment turns: p95':<46} | {p95:8.2f} | {p95 / solo_assess:7.2f} | <= 3")
    floor = turns * cpu_per_turn / (os.cpu_count() or 1)
    print(
        f"{'  floor: turns x CPU s per solo turn / cores':<46} | {floor:8.2f} | {floor / solo_assess:7.2f} |  "
        f"({cpu_per_turn:.2f} CPU s per turn, all processes)"
    )
    print(f"{f'{turns} concurrent: throughput (turns/s)':<46} | {turns / wall:8.2f} |         |")
    middle, worst = statistics.median(under_load), max(under_load)
    print(
        f"{f'catalog question during {turns} assessments: median':<46} | {middle:8.2f} | "
        f"{middle / solo_question:7.2f} | <= 2  ({len(under_load)} questions; assessments still running when each "
        f"was answered: {', '.join(map(str, still_running))})"
    )
    print(f"{'  worst of them':<46} | {worst:8.2f} | {worst / solo_question:7.2f} | <= 2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--questions", type=int, default=5, help="catalog questions asked during the load (c)")
    parser.add_argument("--workers", type=int, help="PROVENANCE_WORKERS for this run (default: the setting's)")
    args = parser.parse_args()
    if args.workers is not None:
        os.environ["PROVENANCE_WORKERS"] = str(args.workers)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        seed_demo(ProvenanceSettings(provenance_home=home))
        asyncio.run(measure(home, args.turns, args.questions))


if __name__ == "__main__":
    main()
