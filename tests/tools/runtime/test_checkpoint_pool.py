"""PooledSaver: checkpoint operations spread over several real SQLite connections to one file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint

from agent.checkpoints import sqlite_checkpointer


def config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}


async def save(saver: Any, thread: str, step: int) -> RunnableConfig:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"answer": f"{thread}:{step}"}
    saved: RunnableConfig = await saver.aput(config(thread), checkpoint, {"step": step}, {})
    await saver.aput_writes(saved, [("answer", f"pending {step}")], task_id=f"task-{step}")
    return saved


def test_concurrent_conversations_save_and_read_back_everything(tmp_path: Path) -> None:
    async def go() -> None:
        async with sqlite_checkpointer(tmp_path / "checkpoints.db", connections=3) as saver:
            threads = [f"t{i}" for i in range(12)]
            for step in range(3):  # each thread's saves in order, the threads at once
                await asyncio.gather(*(save(saver, thread, step) for thread in threads))
            for thread in threads:
                latest = await saver.aget_tuple(config(thread))
                assert latest is not None and latest.checkpoint["channel_values"] == {"answer": f"{thread}:2"}
                assert latest.pending_writes == [("task-2", "answer", "pending 2")]
                assert len([c async for c in saver.alist(config(thread))]) == 3
            await saver.adelete_thread("t0")
            assert await saver.aget_tuple(config("t0")) is None

    asyncio.run(go())


def test_a_read_is_not_queued_behind_a_busy_connection(tmp_path: Path) -> None:
    async def go() -> None:
        async with sqlite_checkpointer(tmp_path / "checkpoints.db", connections=2) as saver:
            await save(saver, "quick", 0)
            busy = saver._savers[0]
            async with busy.lock:  # an operation holding connection 0 (as a long save does)
                with saver._least_busy():  # ...counted as in flight there
                    found = await asyncio.wait_for(saver.aget_tuple(config("quick")), timeout=5)
            assert found is not None and found.checkpoint["channel_values"] == {"answer": "quick:0"}

    asyncio.run(go())


def test_the_file_written_through_the_pool_reads_back_with_one_connection(tmp_path: Path) -> None:
    async def go() -> None:
        path = tmp_path / "checkpoints.db"
        async with sqlite_checkpointer(path, connections=4) as saver:
            await save(saver, "kept", 0)
        async with sqlite_checkpointer(path, connections=1) as single:
            found = await single.aget_tuple(config("kept"))
            assert found is not None and found.checkpoint["channel_values"] == {"answer": "kept:0"}

    asyncio.run(go())
