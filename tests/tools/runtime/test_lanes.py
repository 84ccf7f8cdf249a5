"""Lanes: bulk catalog calls are admitted a few at a time; a person's question goes straight through."""

from __future__ import annotations

import asyncio

import pytest

from tools.runtime.lanes import Lanes, interactive, is_interactive


def test_bulk_calls_wait_for_a_slot_and_interactive_ones_do_not() -> None:
    async def go() -> None:
        lanes = Lanes(bulk_in_flight=2)
        release = asyncio.Event()
        inside: list[str] = []

        async def call(name: str) -> None:
            async with lanes.slot():
                inside.append(name)
                await release.wait()

        bulk = [asyncio.create_task(call(f"bulk-{i}")) for i in range(5)]
        await asyncio.sleep(0.05)
        assert inside == ["bulk-0", "bulk-1"]  # two in flight, three queued

        async def question() -> None:
            with interactive():
                assert is_interactive()
                await call("question")

        asked = asyncio.create_task(question())
        await asyncio.sleep(0.05)
        assert inside[-1] == "question" and len(inside) == 3  # admitted ahead of the queued bulk calls
        release.set()
        await asyncio.gather(*bulk, asked)
        assert sorted(inside) == sorted([*(f"bulk-{i}" for i in range(5)), "question"])
        assert not is_interactive()

    asyncio.run(go())


def test_interactive_marks_tasks_started_inside() -> None:
    async def go() -> bool:
        with interactive():
            return await asyncio.create_task(asyncio.sleep(0, result=is_interactive()))

    assert asyncio.run(go()) is True


def test_at_least_one_bulk_slot() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Lanes(bulk_in_flight=0)
