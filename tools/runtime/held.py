"""An async context held open by a task of its own, for contexts whose scopes must be entered and left by one task."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Generic, TypeVar

T = TypeVar("T")


class HeldContext(Generic[T]):
    """An async context (an MCP session) held open by an owner task of its own.

    The MCP client's anyio scopes must be entered and exited by the same task, while LangGraph runs each node
    in a task of its own; so one owner task holds the context open and the others only use what it yields.
    """

    def __init__(self, opener: Callable[[], AbstractAsyncContextManager[T]], name: str) -> None:
        self._opener = opener
        self._name = name
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    async def open(self) -> T:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[T] = loop.create_future()
        self._owner = loop.create_task(self._hold(ready), name=self._name)
        try:
            return await ready
        except BaseException:
            self._owner = None
            raise

    async def _hold(self, ready: asyncio.Future[T]) -> None:
        try:
            async with self._opener() as value:
                ready.set_result(value)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                raise

    @property
    def ended(self) -> bool:
        """The context has exited on its own (its server went away)."""
        return self._owner is not None and self._owner.done()

    async def close(self) -> None:
        owner, self._owner = self._owner, None
        if owner is not None:
            self._stop.set()
            await owner
