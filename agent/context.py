"""Runtime dependencies of the graph: settings, the planner, the catalog session and the policy.

The chat model is injected (never created at import). The catalog is opened lazily on first use and kept
for the process — one MCP session, as DESIGN §3 asks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from agent.schemas import ExperimentPlan, FieldContext, PlannerName, RouteDecision
from policies.engine import LoadedPolicy, load_policy
from tools.catalog.connection import Catalog, open_catalog
from tools.catalog.datahub import CatalogReader, CatalogWriter
from tools.catalog.session import CatalogSession, ToolCallRecord
from tools.settings import ProvenanceSettings, load_settings

log = logging.getLogger(__name__)


class Planner(Protocol):
    name: PlannerName

    async def route(self, text: str) -> RouteDecision: ...

    async def plan(self, text: str, field: FieldContext) -> ExperimentPlan: ...


class DeterministicPlanner:
    name: PlannerName = "deterministic"

    async def route(self, text: str) -> RouteDecision:
        from agent.planning.deterministic import route

        return route(text)

    async def plan(self, text: str, field: FieldContext) -> ExperimentPlan:
        from agent.planning.deterministic import plan

        return plan(text, field)


_CALL_SINK: ContextVar[list[ToolCallRecord] | None] = ContextVar("provenance_call_sink", default=None)


class TappedCalls(list[ToolCallRecord]):
    """`CatalogSession.calls`, also copied to the sink of the conversation turn making the call.

    One session serves every thread of a process (the chat runs many at once), so a turn cannot take "the calls
    since it started": another thread's calls may be among them. Each turn's nodes run in tasks that inherit the
    turn's context, so a context variable tells which turn a call belongs to.
    """

    def append(self, record: ToolCallRecord) -> None:
        super().append(record)
        sink = _CALL_SINK.get()
        if sink is not None:
            sink.append(record)

    def extend(self, records: Iterable[ToolCallRecord]) -> None:
        for record in records:
            self.append(record)


def tap_calls(session: CatalogSession) -> CatalogSession:
    """Make the session's call log report to `collect_calls` (idempotent)."""
    if not isinstance(session.calls, TappedCalls):
        session.calls = TappedCalls(session.calls)
    return session


@contextmanager
def collect_calls() -> Iterator[list[ToolCallRecord]]:
    """Every catalog call made in this context (and the tasks it starts) while the block runs, in order."""
    sink: list[ToolCallRecord] = []
    token = _CALL_SINK.set(sink)
    try:
        yield sink
    finally:
        _CALL_SINK.reset(token)


class CatalogHandle:
    """Opens the catalog (embedded endpoint + MCP server, or a real GMS) on first use and keeps it open.

    The MCP client's anyio scopes must be entered and exited by the same task, while LangGraph runs each node
    in a task of its own; so one owner task holds the catalog open and the others only use it.
    """

    def __init__(self, settings: ProvenanceSettings) -> None:
        self.settings = settings
        self._catalog: Catalog | None = None
        self._owner: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[Catalog] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()

    async def _hold(self) -> None:
        assert self._ready is not None and self._stop is not None
        try:
            async with open_catalog(self.settings) as catalog:
                self._ready.set_result(catalog)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                raise

    async def get(self) -> Catalog:
        async with self._lock:
            owner_gone = self._owner is not None and self._owner.done()  # the catalog's context has exited
            if self._catalog is not None and (self._catalog.session.lost or owner_gone):
                # The MCP server died: the turn that saw it failed; later turns get a fresh catalog.
                why = self._catalog.session.lost or "the MCP session ended"
                log.warning("catalog connection lost (%s); reopening", why)
                try:
                    await self._release()
                except Exception as exc:  # closing a dead transport may complain; the new one matters
                    log.debug("closing the lost catalog: %s", exc)
            if self._catalog is None:
                loop = asyncio.get_running_loop()
                self._ready, self._stop = loop.create_future(), asyncio.Event()
                self._owner = loop.create_task(self._hold(), name="provenance-catalog")
                try:
                    self._catalog = await self._ready
                except BaseException:
                    self._owner = None
                    raise
                tap_calls(self._catalog.session)
            return self._catalog

    async def reader(self) -> CatalogReader:
        return CatalogReader((await self.get()).session)

    async def writer(self) -> CatalogWriter:
        """Only the publish node asks for this, after approval."""
        return CatalogWriter((await self.get()).session)

    @property
    def opened(self) -> Catalog | None:
        return self._catalog

    async def aclose(self) -> None:
        await self._release()

    async def _release(self) -> None:
        owner, self._owner, self._catalog = self._owner, None, None
        if owner is not None and self._stop is not None:
            self._stop.set()
            await owner

    async def __aenter__(self) -> CatalogHandle:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@dataclass
class AgentContext:
    settings: ProvenanceSettings = field(default_factory=load_settings)
    planner: Planner = field(default_factory=DeterministicPlanner)
    policy: LoadedPolicy = field(default_factory=load_policy)
    catalog: CatalogHandle | None = None

    def __post_init__(self) -> None:
        if self.catalog is None:
            self.catalog = CatalogHandle(self.settings)

    @property
    def handle(self) -> CatalogHandle:
        assert self.catalog is not None  # set in __post_init__
        return self.catalog
