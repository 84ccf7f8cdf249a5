"""The performance figures in one run: every table of docs/performance.md's Performance section, side by side.

    .venv/bin/python benchmarks/performance.py [--quick]

Runs, each in its own process so one's memory and threads do not colour the next: bench_concurrency.py (single
turn vs 20 concurrent turns, a catalog question during 20 assessments), bench_fanout.py (1 vs 4 affected models,
sequential vs parallel), bench_cli.py (--help, a refusal, an assessment cold and with a running catalog) and
bench_sampling.py (sampled vs full experiment on a 10M-row Parquet file; `--quick` skips the full 10M run) and
bench_tasks.py (the experiment vs the raw-inference floor for a regressor and a multiclass classifier at
100k and 1M rows, and the task metrics with and without 20 segment columns on 1M rows) and bench_plots.py (the
evidence plots of each task on 1M rows, CPU time against the 0.5 s target).

It first prints this machine's speed on two fixed workloads (a pure-Python loop, a numpy sort of 1M floats): on a
shared host the same code measured ~2x apart within an hour, and these lines tell which kind of moment a run had.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def machine_speed() -> str:
    """CPU seconds (best of 5) of a 10M-step Python loop and of sorting 1M random floats."""

    def best(work: Callable[[], object]) -> float:
        times = []
        for _ in range(5):
            started = time.process_time()
            work()
            times.append(time.process_time() - started)
        return min(times)

    values = np.random.default_rng(0).random(1_000_000)
    loop = best(lambda: sum(range(10_000_000)))
    sort = best(lambda: np.argsort(values))
    return f"machine speed: Python loop of 10M steps {loop:.3f} CPU s; numpy sort of 1M floats {sort:.3f} CPU s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip the full (unsampled) 10M-row experiment")
    args = parser.parse_args()
    runs = [
        ("Conversation latency", ["bench_concurrency.py"]),
        ("Affected models in parallel", ["bench_fanout.py"]),
        ("CLI wall time", ["bench_cli.py"]),
        ("Sampling a 10M-row evaluation file", ["bench_sampling.py", *([] if args.quick else ["--full-big"])]),
        ("Regression and multiclass experiments", ["bench_tasks.py", *(["--repeats", "1"] if args.quick else [])]),
        ("Evidence plots on 1M rows", ["bench_plots.py", *(["--repeats", "1"] if args.quick else [])]),
    ]
    print(machine_speed(), flush=True)
    for title, argv in runs:
        print(f"\n## {title}  ({' '.join(argv)})\n", flush=True)
        subprocess.run([sys.executable, str(HERE / argv[0]), *argv[1:]], check=True)


if __name__ == "__main__":
    main()
