"""Two lanes for catalog calls, so a person's question is not queued behind batch work.

An assessment's discovery makes a dozen MCP calls; twenty running assessments keep a couple of hundred in flight,
and the MCP server and the catalog endpoint share the CPU between all of them: a catalog question asked meanwhile
took 0.16 + 0.43 s for two calls that take 0.02 s each alone (benchmarks/bench_concurrency.py). Bulk calls
(every call not marked interactive) therefore wait for one of `BULK_IN_FLIGHT` slots per session, while calls made
inside `interactive()` (the chat's catalog questions) go straight to the server. Bulk throughput is unchanged: the
server's work per call is the same, it is just not all admitted at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar

BULK_IN_FLIGHT = 2
_INTERACTIVE: ContextVar[bool] = ContextVar("provenance_catalog_interactive", default=False)


@contextmanager
def interactive() -> Iterator[None]:
    """Catalog calls made inside the block (and in tasks it starts) skip the bulk queue."""
    token = _INTERACTIVE.set(True)
    try:
        yield
    finally:
        _INTERACTIVE.reset(token)


def is_interactive() -> bool:
    return _INTERACTIVE.get()


class Lanes:
    """One session's admission: at most `bulk_in_flight` bulk calls at the server, interactive calls unbounded."""

    def __init__(self, bulk_in_flight: int = BULK_IN_FLIGHT) -> None:
        if bulk_in_flight < 1:
            raise ValueError(f"bulk_in_flight must be at least 1, not {bulk_in_flight}")
        self.bulk_in_flight = bulk_in_flight
        self._bulk: asyncio.Semaphore | None = None  # made on first use, inside the running loop

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if _INTERACTIVE.get():
            yield
            return
        if self._bulk is None:
            self._bulk = asyncio.Semaphore(self.bulk_in_flight)
        async with self._bulk:
            yield
