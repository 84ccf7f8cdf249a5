"""Runtime dependencies of the graph: settings, the planner, the catalog session and the policy.

The chat model is injected (never created at import). The catalog is opened lazily on first use and kept
for the process — one reader MCP session (mutations off), as docs/design.md §3 asks. Writing takes a second,
short-lived MCP session that only the publish step opens, after approval.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from agent.schemas import ExperimentPlan, FieldContext, PlannerName, RouteDecision
from policies import LoadedPolicy, load_policy
from tools.catalog.connection import Catalog, open_catalog, open_writer
from tools.catalog.datahub import CatalogReader, CatalogWriter
from tools.catalog.session import WriterSession
from tools.runtime.executor import ExperimentExecutor, make_executor
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


T = TypeVar("T")


class _Held(Generic[T]):
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


class CatalogHandle:
    """Opens the catalog (embedded endpoint + reader MCP server, or a real GMS) on first use and keeps it open.

    The reader's MCP server runs with mutations off. `writer()` starts a second MCP server (mutations on) against
    the same endpoint for one publication; `release_writer` (or leaving `writing()`) stops it.
    """

    def __init__(self, settings: ProvenanceSettings) -> None:
        self.settings = settings
        self._catalog: Catalog | None = None
        self._held: _Held[Catalog] | None = None
        self._writers: dict[CatalogWriter, _Held[WriterSession]] = {}
        self._lock = asyncio.Lock()

    async def get(self) -> Catalog:
        async with self._lock:
            owner_gone = self._held is not None and self._held.ended  # the catalog's context has exited
            if self._catalog is not None and (self._catalog.session.lost or owner_gone):
                # The MCP server died: the turn that saw it failed; later turns get a fresh catalog.
                why = self._catalog.session.lost or "the MCP session ended"
                log.warning("catalog connection lost (%s); reopening", why)
                try:
                    await self._release()
                except Exception as exc:  # closing a dead transport may complain; the new one matters
                    log.debug("closing the lost catalog: %s", exc)
            if self._catalog is None:
                held = _Held(lambda: open_catalog(self.settings), "provenance-catalog")
                self._catalog = await held.open()
                self._held = held
            return self._catalog

    async def reader(self) -> CatalogReader:
        return CatalogReader((await self.get()).session)

    async def writer(self) -> CatalogWriter:
        """Only the publish step asks for this, after approval: a writer over an MCP server of its own (mutations
        on) against the endpoint this handle reads from (an embedded endpoint is reused, not started again).
        Hand it back with `release_writer`; `writing()` does both."""
        catalog = await self.get()
        held = _Held(lambda: open_writer(catalog), "provenance-catalog-writer")
        session = await held.open()
        # One call log for reader and writer: the session's count sees the writes among the reads (each call is
        # also reported to the collectors of the run that made it, tools/catalog/calls.py).
        session.calls = catalog.session.calls
        writer = CatalogWriter(session)
        self._writers[writer] = held
        return writer

    async def release_writer(self, writer: CatalogWriter) -> None:
        """Stop the writer's MCP server. A server that already died may complain on the way out: logged only,
        so that the publication's own outcome is what the caller sees."""
        held = self._writers.pop(writer, None)
        if held is None:
            return
        try:
            await held.close()
        except Exception as exc:
            log.debug("closing the writer session: %s", exc)

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[CatalogWriter]:
        """A writer for the duration of the block (one publication)."""
        writer = await self.writer()
        try:
            yield writer
        finally:
            await self.release_writer(writer)

    @property
    def opened(self) -> Catalog | None:
        return self._catalog

    async def aclose(self) -> None:
        for writer in list(self._writers):  # before the reader: an embedded endpoint stops with it
            await self.release_writer(writer)
        await self._release()

    async def _release(self) -> None:
        held, self._held, self._catalog = self._held, None, None
        if held is not None:
            await held.close()

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
    executor: ExperimentExecutor | None = None
    """Runs the experiment's CPU-bound jobs off the event loop; closed with the session (`open_session`)."""
    long_lived: bool = False
    """A server serving many turns (the chat): PROVENANCE_EXECUTOR=auto then means worker processes."""

    def __post_init__(self) -> None:
        if self.catalog is None:
            self.catalog = CatalogHandle(self.settings)
        if self.executor is None:
            self.executor = make_executor(self.settings.executor_kind(self.long_lived), self.settings.workers)

    @property
    def handle(self) -> CatalogHandle:
        assert self.catalog is not None  # set in __post_init__
        return self.catalog

    @property
    def jobs(self) -> ExperimentExecutor:
        assert self.executor is not None  # set in __post_init__
        return self.executor
