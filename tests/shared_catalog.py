"""One read-only catalog per test worker: the embedded endpoint and a reader MCP server over the seeded template,
opened once and kept on an event loop of its own thread, so that read-only tests do not each pay ~1 s to start them.

The reader's MCP server runs with mutations off, so no test can change what the next one reads; a test that writes
uses its own `seeded_home` copy.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tools.catalog.datahub import CatalogReader
from tools.catalog.handle import CatalogHandle
from tools.settings import ProvenanceSettings

T = TypeVar("T")
CALL_TIMEOUT_S = 120


class SharedCatalog:
    def __init__(self, settings: ProvenanceSettings) -> None:
        self.settings = settings
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="shared-catalog", daemon=True)
        self._thread.start()
        self._handle = CatalogHandle(settings)

    def run(self, use: Callable[[CatalogReader], Awaitable[T]]) -> T:
        """`use(reader)` on the shared catalog's loop; its result or its exception."""

        async def call() -> T:
            return await use(await self._handle.reader())

        return asyncio.run_coroutine_threadsafe(call(), self._loop).result(CALL_TIMEOUT_S)

    def close(self) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self._handle.aclose(), self._loop).result(CALL_TIMEOUT_S)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(CALL_TIMEOUT_S)
            self._loop.close()
