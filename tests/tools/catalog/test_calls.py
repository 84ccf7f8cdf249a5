"""Call accounting (tools/catalog/calls.py): a run counts its own calls, nested collectors each see theirs, tasks
report to the run that started them, and the session's memory of calls is bounded however long it lives."""

from __future__ import annotations

import asyncio

from tools.catalog.calls import RECENT_CALLS, CallLog, ToolCallRecord, calls_of_this_run, collect_calls


def _call(n: int) -> ToolCallRecord:
    return ToolCallRecord(tool="get_entities", arguments={"n": n}, ok=True, result={"big": "x" * 1000}, duration_ms=1)


def test_a_long_lived_log_counts_everything_and_keeps_only_the_recent_calls() -> None:
    log = CallLog()
    for n in range(10 * RECENT_CALLS):
        log.record(_call(n))
    assert len(log) == 10 * RECENT_CALLS
    kept = list(log)
    assert len(kept) == RECENT_CALLS and kept[-1].arguments == {"n": 10 * RECENT_CALLS - 1} and log[0] == kept[0]


def test_nested_collectors_and_concurrent_runs_each_see_their_own_calls() -> None:
    log = CallLog()

    async def run(name: int, calls: int) -> tuple[int, int, int]:
        with collect_calls() as mine:
            assert calls_of_this_run() is mine
            with collect_calls() as inner:  # a discovery inside the run
                for n in range(calls):
                    log.record(_call(name * 100 + n))
                    await asyncio.sleep(0)  # interleave with the other runs
            log.record(_call(name * 100 + 99))
            return len(mine), len(inner), calls

    async def main() -> list[tuple[int, int, int]]:
        return list(await asyncio.gather(run(1, 3), run(2, 7), run(3, 11)))

    results = asyncio.run(main())
    assert [(mine, inner) for mine, inner, _ in results] == [(calls + 1, calls) for _, _, calls in results]
    assert len(log) == sum(calls + 1 for _, _, calls in results)
    assert calls_of_this_run() is None  # outside any run: no count passed off as one
