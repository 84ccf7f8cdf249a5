"""Evidence plots on 1M rows per task: CPU seconds (best of N) against the 0.5 s target, and the PNG sizes.

    .venv/bin/python benchmarks/bench_plots.py [--repeats 3]

The unit tests check that 1M rows give small valid PNGs; how fast is a figure of this machine, so it is printed
here rather than asserted (a busy CI box would make a timed unit test flaky).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from policies.metrics import Task
from tools.evidence.plots import write_plots

TARGET_CPU_SECONDS = 0.5
ROWS = 1_000_000


def arrays(task: Task, n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    failed = np.zeros(n, dtype=bool)
    failed[:1_000] = True
    if task == "binary":
        labels = (rng.random(n) < 0.3).astype(np.int8)
        base = 1 / (1 + np.exp(-(2.0 * labels - 1.0 + rng.normal(0, 1, n))))
        mut = np.where(rng.random(n) < 0.2, np.clip(base + rng.normal(0, 0.2, n), 0, 1), base)
        return labels, base, mut, failed
    if task == "regression":
        actual = rng.lognormal(3, 1, n)
        base = actual + rng.normal(0, 2, n)
        return actual, base, base * np.where(rng.random(n) < 0.1, 1.5, 1.0), failed
    logits = rng.normal(0, 1, (n, 4))
    base = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    mut_logits = logits + np.where(rng.random((n, 1)) < 0.1, rng.normal(0, 1, (n, 4)), 0)
    mut = np.exp(mut_logits) / np.exp(mut_logits).sum(axis=1, keepdims=True)
    classes = np.array(["a", "b", "c", "d"])[rng.integers(0, 4, n)]
    return classes, base, mut, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"| task | rows | CPU s (best of {args.repeats}) | target | ratio | PNG bytes (largest) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for task in ("binary", "regression", "multiclass"):
            data = arrays(task, ROWS)
            extra = {
                "task": task,
                "classes": ["a", "b", "c", "d"] if task == "multiclass" else None,
                "tolerance": 2.0 if task == "regression" else None,
            }
            write_plots(folder, "warm", *(a[:1_000] for a in data), **extra)  # type: ignore[arg-type]
            best = float("inf")
            files: dict[str, str] = {}
            for _ in range(args.repeats):
                started = time.process_time()
                files = write_plots(folder, task, *data, **extra)  # type: ignore[arg-type]
                best = min(best, time.process_time() - started)
            largest = max((folder / name).stat().st_size for name in files.values())
            ratio = best / TARGET_CPU_SECONDS
            print(f"| {task} | {ROWS:,} | {best:.2f} | {TARGET_CPU_SECONDS} | {ratio:.2f} | {largest:,} |")


if __name__ == "__main__":
    main()
