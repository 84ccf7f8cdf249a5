"""`provenance diff` at 100,000 rows against `provenance assess` of the same three demo models on the same rows.

    .venv/bin/python benchmarks/bench_diff.py [--rows 100000] [--repeats 2]

A fresh seeded home; the demo's DuckDB warehouse built with --rows transactions (base `public.transactions`, head
`pr_fx.transactions`, docs/diff.md); the models' evaluation files rewritten with the same rows and
PROVENANCE_SAMPLE_HALF_WIDTH=0, so `assess` (amount ×100) scores every one of them too. Each command is a fresh
process, timed from spawn to exit, best of --repeats. Target: diff ≤ 2× assess.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from seed.catalog import POSTGRES_TABLE_URN
from seed.data import to_feature_frame
from seed.diff_warehouse import HEAD_SCHEMA, build_demo_warehouse, demo_transactions
from seed.model import EVAL_FILENAME, eval_csv_bytes
from seed.review import REVIEW_EVAL_FILENAME, REVIEW_LABEL
from seed.seeding import seed_demo
from tools.settings import ProvenanceSettings


def _time(args: list[str], env: dict[str, str], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "agent.cli", *args], env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
        if done.returncode not in (0, 10, 20, 30):
            raise SystemExit(f"{args[0]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        best = min(best, elapsed)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-diff-"))
    seed_demo(ProvenanceSettings(provenance_home=home))
    warehouse = build_demo_warehouse(home / "demo", args.rows)
    features = to_feature_frame(demo_transactions(args.rows)).assign(
        **{REVIEW_LABEL: demo_transactions(args.rows)[REVIEW_LABEL]}
    )
    (home / "demo" / EVAL_FILENAME).write_bytes(eval_csv_bytes(features))
    (home / "demo" / REVIEW_EVAL_FILENAME).write_bytes(eval_csv_bytes(features, label=REVIEW_LABEL))
    env = {**os.environ, "PROVENANCE_HOME": str(home), "PROVENANCE_SAMPLE_HALF_WIDTH": "0"}
    assess = ["assess", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale", "--param",
              "factor=100", "--no-publish", "--json"]  # fmt: skip
    diff = ["diff", "--dataset", POSTGRES_TABLE_URN, "--warehouse", f"duckdb:///{warehouse}", "--head-schema",
            HEAD_SCHEMA, "--rows", str(args.rows), "--json"]  # fmt: skip
    assess_s = _time(assess, env, args.repeats)
    diff_s = _time(diff, env, args.repeats)
    print(f"rows: {args.rows:,} (3 production models; best of {args.repeats}, each a fresh process)")
    print(f"assess (amount x100, every row):   {assess_s:6.2f} s")
    print(f"diff (base vs head, paired by key): {diff_s:6.2f} s")
    print(f"ratio diff / assess: {diff_s / assess_s:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
