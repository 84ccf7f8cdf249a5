"""The warm local service by default (agent/cli/warm.py): each kind of command, its first run on a cold home, then
the next five, side by side in one run.

    .venv/bin/python benchmarks/bench_warm.py [--next 5]

A fresh seeded home; PROVENANCE_SERVICE=auto, CI unset. Per kind: the service stopped, the first command timed
(it runs alone, then leaves the service behind), the service awaited, the next --next commands timed (each a
fresh process, which finds the service). Targets (issue "Seconds, not twenty"): every command after the first
<= 2.5 s, lineage and a refusal <= 1 s, the first no slower than with PROVENANCE_SERVICE=off.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from seed.catalog import POSTGRES_TABLE_URN
from seed.seeding import seed_demo
from tools.catalog.serve_state import live_state, stop_process
from tools.settings import ProvenanceSettings

ROOT = Path(__file__).resolve().parents[1]
ASSESS = ["assess", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale", "--no-publish"]
KINDS = {
    "lineage": ["lineage", "--dataset", POSTGRES_TABLE_URN, "--field", "amount"],
    "ask (lineage)": ["ask", "which models use payments.public.transactions.amount?"],
    "assess": [*ASSESS, "--param", "factor=100"],
    "check examples/CHANGES.yml": ["check", str(ROOT / "examples" / "CHANGES.yml")],
    "refusal (factor=abc)": [*ASSESS, "--param", "factor=abc"],
    "runs": ["runs"],
}
SERVICE_FREE = frozenset({"refusal (factor=abc)", "runs"})


def timed(env: dict[str, str], args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "agent.cli", *args], env=env, capture_output=True, check=False)
    return time.perf_counter() - started


def stop(settings: ProvenanceSettings) -> None:
    state = live_state(settings, logging.DEBUG)
    if state is not None:
        stop_process(int(state["pid"]))


def wait_live(settings: ProvenanceSettings, timeout: float = 120.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = live_state(settings, logging.DEBUG)
        if state is not None and state.get("assess_url"):
            return True
        time.sleep(0.5)
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--next", type=int, default=5)
    parser.add_argument("--each", action="store_true", help="also print every next command's time")
    parser.add_argument("--kinds", nargs="+", choices=list(KINDS), default=list(KINDS), help="only these kinds")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-warm-"))
    seed_demo(ProvenanceSettings(provenance_home=home))
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env |= {"PROVENANCE_HOME": str(home), "PROVENANCE_SERVICE": "auto", "DATAHUB_TELEMETRY_ENABLED": "false"}
    os.environ["PROVENANCE_HOME"] = str(home)
    settings = ProvenanceSettings(provenance_home=home)
    off = {**env, "PROVENANCE_SERVICE": "off"}
    print(f"{'command':<28} | {'off s':>6} | {'first s':>7} | {'next: median':>12} | {'max':>5}")
    try:
        for name, argv in ((k, KINDS[k]) for k in args.kinds):
            stop(settings)
            alone = timed(off, argv)
            first = timed(env, argv)
            # a refusal and `runs` read no catalog and start no service: their next runs are timed alone
            warm = name in SERVICE_FREE or wait_live(settings)
            nexts = [timed(env, argv) for _ in range(args.next)] if warm else []
            median = f"{statistics.median(nexts):12.2f}" if nexts else f"{'no service':>12}"
            worst = f"{max(nexts):5.2f}" if nexts else f"{'-':>5}"
            alone_note = "  (needs no service)" if name in SERVICE_FREE else ""
            each = f"  [{', '.join(f'{t:.2f}' for t in nexts)}]" if args.each else ""
            print(f"{name:<28} | {alone:6.2f} | {first:7.2f} | {median} | {worst}{alone_note}{each}")
    finally:
        stop(settings)


if __name__ == "__main__":
    main()
