"""Wall time of the `provenance` command: --help, a refusal, an assessment cold and against a running catalog.

    .venv/bin/python benchmarks/bench_cli.py [--repeats 3]

Every command is a fresh process (`python -m agent.cli`), timed from spawn to exit, best of --repeats, on a fresh
seeded home. "with a running catalog" starts `provenance catalog serve` once (endpoint, read-only HTTP MCP server and
the assessment service, advertised in $PROVENANCE_HOME/catalog-serve.json) and times the same assessment, which the
CLI then sends to the service (agent/service.py) instead of running it: best of --repeats, so the service's first
request (model files read, baseline computed) is not the one reported.
Targets (issue 14): --help <= 0.5 s; an assessment against a running catalog <= 2.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from seed.catalog import POSTGRES_TABLE_URN
from seed.seeding import seed_demo
from tools.catalog.serve_state import STATE_FILE
from tools.settings import ProvenanceSettings

ASSESS = ["assess", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale", "--param", "factor=100"]
COMMANDS = {
    "--help": ["--help"],
    "refusal (dataset is not a URN)": ["assess", "--dataset", "nope", "--field", "x", "--op", "scale", "--no-publish"],
    "assess --no-publish --json": [*ASSESS, "--no-publish", "--json"],
}


def timed(home: Path, args: list[str]) -> float:
    env = {**os.environ, "PROVENANCE_HOME": str(home), "DATAHUB_TELEMETRY_ENABLED": "false"}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "agent.cli", *args], env=env, capture_output=True, check=False)
    return time.perf_counter() - started


def best(home: Path, args: list[str], repeats: int) -> float:
    return min(timed(home, args) for _ in range(repeats))


def with_served_catalog(home: Path, repeats: int) -> tuple[float, float]:
    """The service's first assessment (its caches cold) and the best of the next `repeats`."""
    env = {**os.environ, "PROVENANCE_HOME": str(home), "DATAHUB_TELEMETRY_ENABLED": "false"}
    serve = subprocess.Popen(
        [sys.executable, "-m", "agent.cli", "catalog", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while not (home / STATE_FILE).exists() or not json.loads((home / STATE_FILE).read_text()).get("assess_url"):
            if serve.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("`provenance catalog serve` did not start its assessment service")
            time.sleep(0.2)
        first = timed(home, [*ASSESS, "--no-publish", "--json"])
        return first, best(home, [*ASSESS, "--no-publish", "--json"], repeats)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        seed_demo(ProvenanceSettings(provenance_home=home))
        timed(home, ["--help"])  # warm the OS file cache and byte-code
        rows = [(name, best(home, argv, args.repeats)) for name, argv in COMMANDS.items()]
        first, served = with_served_catalog(home, args.repeats)
        rows.append(("assess --no-publish --json, running catalog", served))
        rows.append(("  (its first request after the start)", first))
    targets = {"--help": "<= 0.5", "assess --no-publish --json, running catalog": "<= 2.5"}
    print(f"best of {args.repeats}, each a fresh process")
    print(f"{'command':<46} | {'wall s':>7} | target")
    for name, seconds in rows:
        print(f"{name:<46} | {seconds:7.2f} | {targets.get(name, '')}")


if __name__ == "__main__":
    main()
