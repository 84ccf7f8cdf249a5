"""Checkpoint operations spread over several SQLite connections, so one conversation's save does not wait for
every other conversation's.

`AsyncSqliteSaver` holds one lock over its one connection for each whole operation, across several hops between
the event loop and aiosqlite's thread; with twenty assessments running, a catalog question's first checkpoint read
waited 0.19 s and each of its saves ~0.05 s behind theirs (benchmarks/bench_concurrency.py). `PooledSaver` gives
each operation the saver (connection) with the fewest operations in flight. The database is in WAL mode (the saver
sets it), so reads run beside a write, and SQLite serialises the writes themselves at commit, waiting up to
`sqlite3`'s busy timeout. Order within a thread is kept by LangGraph, which saves a thread's next checkpoint only
after the previous one; checkpoint and write rows are keyed by their ids, not by insertion order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver


class PooledSaver(BaseCheckpointSaver[str]):
    """The async checkpointer interface over `savers` (one connection each, same database file)."""

    def __init__(self, savers: Sequence[AsyncSqliteSaver]) -> None:
        if not savers:
            raise ValueError("a pooled checkpointer needs at least one saver")
        super().__init__(serde=savers[0].serde)
        self._savers = list(savers)
        self._in_flight = [0] * len(savers)

    async def setup(self) -> None:
        for saver in self._savers:  # one after another: concurrent schema set-up would contend for the write lock
            await saver.setup()

    @contextmanager
    def _least_busy(self) -> Iterator[AsyncSqliteSaver]:
        index = min(range(len(self._savers)), key=self._in_flight.__getitem__)
        self._in_flight[index] += 1
        try:
            yield self._savers[index]
        finally:
            self._in_flight[index] -= 1

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        with self._least_busy() as saver:
            return await saver.aget_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,  # noqa: A002 - the interface's name
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        with self._least_busy() as saver:
            async for item in saver.alist(config, filter=filter, before=before, limit=limit):
                yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        with self._least_busy() as saver:
            return await saver.aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        with self._least_busy() as saver:
            await saver.aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        with self._least_busy() as saver:
            await saver.adelete_thread(thread_id)

    async def aget_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]) -> Mapping[str, Any]:
        with self._least_busy() as saver:
            return await saver.aget_delta_channel_history(config=config, channels=channels)

    def get_next_version(self, current: str | None, channel: None) -> str:
        return self._savers[0].get_next_version(current, channel)
