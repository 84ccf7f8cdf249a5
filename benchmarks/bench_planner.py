"""The offline planner over its own phrasing table (tests/agent/planning/phrasings.py): right / refused /
confident-wrong, per category.

    .venv/bin/python benchmarks/bench_planner.py [--plan-on change|message] [--failures] [--top 15] [--repeats 3]

Routes each phrasing of tests/agent/planning/phrasings.py with `agent.planning.deterministic.route` and plans the
assessments with `plan` against the entry's demo field, judged as tests/agent/planning/test_phrasings.py judges
them (that test asserts the targets). `--plan-on change` (default, as the test) plans the route's change text;
`--plan-on message` plans the whole message, as the graph's plan node does (`agent/nodes/before_experiment.py` passes
`state.question`). Prints the summary line, a per-category table, the most common failure kinds and the time of
route + plan per phrasing (best of --repeats passes over the table).
Targets: 0 confident-wrong; >= 90 % of the table right, and of the entries a careful person would plan
or answer.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Literal, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for the tests package

from agent.planning.deterministic import plan, route  # noqa: E402
from agent.schemas import Intent  # noqa: E402
from tests.agent.planning.phrasings import PHRASINGS  # noqa: E402
from tests.agent.planning.test_phrasings import (  # noqa: E402
    answerable_right,
    category_table,
    counts,
    failure_kinds,
    failure_report,
    judge_table,
    summary_line,
)


def timings_us(repeats: int) -> list[float]:
    """Route + plan per phrasing in microseconds, the best of `repeats` passes for each."""
    best = [float("inf")] * len(PHRASINGS)
    for _ in range(repeats):
        for i, entry in enumerate(PHRASINGS):
            started = time.perf_counter()
            decision = route(entry.text)
            if decision.intent is Intent.ASSESS and entry.field is not None:
                plan(decision.change or entry.text, entry.field)
            best[i] = min(best[i], (time.perf_counter() - started) * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plan-on", choices=["change", "message"], default="change")
    parser.add_argument("--failures", action="store_true", help="list every entry that is not right")
    parser.add_argument("--top", type=int, default=15, help="failure kinds to show")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    results = judge_table(plan_on=cast(Literal["change", "message"], args.plan_on))
    print(f"planned on the {'route change' if args.plan_on == 'change' else 'whole message'}")
    print(summary_line(results))
    print()
    print(category_table(results))
    kinds = failure_kinds(results)
    if kinds:
        print(f"\nmost common failure kinds ({min(args.top, len(kinds))} of {len(kinds)}):")
        for kind, n in kinds[: args.top]:
            print(f"  {n:>3}  {kind}")
    if args.failures:
        print(f"\n{failure_report(results)}")

    us = timings_us(args.repeats)
    ordered = sorted(us)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    print(
        f"\nroute + plan per phrasing (best of {args.repeats}): median {statistics.median(us):.0f} µs, "
        f"p95 {p95:.0f} µs, max {ordered[-1]:.0f} µs, table {sum(us) / 1000:.1f} ms"
    )

    c, n = counts(results), len(results)
    right, total = answerable_right(results)
    met = c["wrong"] == 0 and c["right"] / n >= 0.90 and right / total >= 0.90
    print(f"targets (0 confident-wrong, >= 90 % right overall and of the answerable): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
